package verdict

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

type durCase struct {
	in     string
	want   time.Duration
	wantOK bool
}

func runDurCases(t *testing.T, name string, cases []durCase, parse func(string) (time.Duration, bool)) {
	t.Helper()
	for _, tc := range cases {
		d, ok := parse(tc.in)
		if d != tc.want || ok != tc.wantOK {
			t.Errorf("%s(%q) = (%v, %v), want (%v, %v)", name, tc.in, d, ok, tc.want, tc.wantOK)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	date := func(d time.Duration) string { return testNow.Add(d).Format(http.TimeFormat) }
	cases := []durCase{
		{"0", 0, true},
		{"1", time.Second, true},
		{"  30 ", 30 * time.Second, true},
		{"120", 2 * time.Minute, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"0.25", 250 * time.Millisecond, true},
		{"34560000", maxHint, true}, // exactly 400 days
		{"34560001", 0, false},      // just over: garbage
		{"99999999999999999999999", 0, false},
		{"-1", 0, false},
		{"+5", 0, false},
		{"1e3", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"5s", 0, false},
		{date(90 * time.Second), 90 * time.Second, true},
		{date(0), 0, true},
		{date(-time.Second), 0, false},         // past date
		{date(-24 * time.Hour), 0, false},      // long past
		{date(500 * 24 * time.Hour), 0, false}, // too far: garbage
		{"Sun, 01 Jun 2025 12:00:10 GMT", 10 * time.Second, true},
		{"Sunday, 01-Jun-25 12:00:10 GMT", 10 * time.Second, true}, // RFC 850
		{"Sun Jun  1 12:00:10 2025", 10 * time.Second, true},       // ANSI C
		{"Sun, 01 Jun 2025 12:00:10", 0, false},
	}
	runDurCases(t, "ParseRetryAfter", cases, func(s string) (time.Duration, bool) { return ParseRetryAfter(s, testNow) })
}

func TestParseResetDuration(t *testing.T) {
	cases := []durCase{
		{"1s", time.Second, true},
		{"6m0s", 6 * time.Minute, true},
		{"20ms", 20 * time.Millisecond, true},
		{"1h2m3.5s", time.Hour + 2*time.Minute + 3500*time.Millisecond, true},
		{"0.5s", 500 * time.Millisecond, true},
		{"2m59.56s", 2*time.Minute + 59560*time.Millisecond, true},
		{"7.66s", 7660 * time.Millisecond, true},
		{".5s", 500 * time.Millisecond, true},
		{"0s", 0, true},
		{"0", 0, true},
		{"60", time.Minute, true}, // bare number: seconds
		{" 1s ", time.Second, true},
		{"9600h", maxHint, true},
		{"9600h1s", 0, false},
		{"-1s", 0, false},
		{"+1s", 0, false},
		{"1d", 0, false},
		{"s", 0, false},
		{"", 0, false},
		{"abc", 0, false},
		{"99999999999h", 0, false},
	}
	runDurCases(t, "ParseResetDuration", cases, ParseResetDuration)
}

func TestParseResetTimestamp(t *testing.T) {
	sec := func(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).Unix(), 10) }
	ms := func(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).UnixMilli(), 10) }
	cases := []durCase{
		{testNow.Add(25 * time.Second).Format(time.RFC3339), 25 * time.Second, true},
		{"2025-06-01T12:00:40Z", 40 * time.Second, true},
		{"2025-06-01T12:00:00.5Z", 500 * time.Millisecond, true},
		{"2025-06-01T14:00:00+02:00", 0, true},
		{"2025-06-01T15:00:00+02:00", time.Hour, true},
		{"2025-06-01 12:01:00Z", time.Minute, true},
		{"2025-06-01T11:59:59Z", 0, false}, // past
		{"2030-01-01T00:00:00Z", 0, false}, // beyond 400 days
		{sec(2 * time.Hour), 2 * time.Hour, true},
		{ms(1500 * time.Millisecond), 1500 * time.Millisecond, true},
		{strconv.FormatInt(testNow.Add(3*time.Second).UnixMicro(), 10), 3 * time.Second, true},
		{strconv.FormatInt(testNow.Add(4*time.Second).UnixNano(), 10), 4 * time.Second, true},
		{sec(0) + ".25", 250 * time.Millisecond, true},
		{sec(-time.Minute), 0, false},
		{"60", 0, false}, // an epoch in 1970, not a delta
		{"0", 0, false},
		{"-1748779200", 0, false},
		{"+1748779260", 0, false},
		{"99999999999999999999", 0, false},
		{"", 0, false},
		{"tomorrow", 0, false},
		{"2025-13-01T00:00:00Z", 0, false},
	}
	runDurCases(t, "ParseResetTimestamp", cases, func(s string) (time.Duration, bool) { return ParseResetTimestamp(s, testNow) })
}

func TestParseBodyRetry(t *testing.T) {
	cases := []struct {
		body   string
		want   time.Duration
		source string
		ok     bool
	}{
		{`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`, 37 * time.Second, HintGoogleRPCRetryInfo, true},
		{`[{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.5s"}]}}]`, 500 * time.Millisecond, HintGoogleRPCRetryInfo, true},
		{`{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":12,"nanos":500000000}}]}}`, 12500 * time.Millisecond, HintGoogleRPCRetryInfo, true},
		{`{"error":{"message":"Please retry in 12.3s.","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-5s"}]}}`, 12300 * time.Millisecond, HintBody, true},
		{`{"error":{"message":"Please retry in 37.410297849s."}}`, 37410297849 * time.Nanosecond, HintBody, true},
		{"Rate limited. Retry after 20 seconds.", 20 * time.Second, HintBody, true},
		{"retry after 1 minute", time.Minute, HintBody, true},
		{"Please try again in 1m30s. Visit https://x", 90 * time.Second, HintBody, true},
		{"Please try again in 2.5s.", 2500 * time.Millisecond, HintBody, true},
		{"Please try again in 120ms.", 120 * time.Millisecond, HintBody, true},
		{"try again in 7m12s", 7*time.Minute + 12*time.Second, HintBody, true},
		{"TRY AGAIN IN 3 HOURS", 3 * time.Hour, HintBody, true},
		{"try again in 20", 20 * time.Second, HintBody, true},
		{"Your limit will reset at 2025-06-01T12:05:00Z.", 5 * time.Minute, HintBody, true},
		{"quota reset at 2025-06-01T11:00:00Z", 0, "", false}, // past
		{"try again later", 0, "", false},
		{"try again in a few seconds", 0, "", false},
		{"retry after 2025-06-01 ok", 0, "", false}, // a date, not a delay
		{"try again in 10000 days", 0, "", false},
		{"try again in -5s", 0, "", false},
		{"", 0, "", false},
		{"<html>busy</html>", 0, "", false},
	}
	for _, tc := range cases {
		d, src, ok := ParseBodyRetry([]byte(tc.body), testNow)
		if d != tc.want || src != tc.source || ok != tc.ok {
			t.Errorf("ParseBodyRetry(%q) = (%v, %q, %v), want (%v, %q, %v)", tc.body, d, src, ok, tc.want, tc.source, tc.ok)
		}
	}
}

func TestHintFromResponse(t *testing.T) {
	cases := []struct {
		name   string
		h      http.Header
		body   string
		want   time.Duration
		source string
	}{
		{"retry-after first", hdr("retry-after", "5", "retry-after-ms", "900", "x-ratelimit-reset-requests", "1m"), "try again in 1h", 5 * time.Second, HintRetryAfter},
		{"retry-after zero falls through", hdr("retry-after", "0", "retry-after-ms", "900"), "", 900 * time.Millisecond, HintRetryAfterMs},
		{"retry-after garbage falls through", hdr("retry-after", "later", "x-ratelimit-reset-requests", "2s"), "", 2 * time.Second, HintResetRequests},
		{"larger openai reset: tokens", hdr("x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"), "", 6 * time.Minute, HintResetTokens},
		{"larger openai reset: requests", hdr("x-ratelimit-reset-requests", "8.64s", "x-ratelimit-reset-tokens", "20ms"), "", 8640 * time.Millisecond, HintResetRequests},
		{"only tokens reset", hdr("x-ratelimit-reset-tokens", "3s"), "", 3 * time.Second, HintResetTokens},
		{"anthropic unified wins over per-limit", hdr(
			"anthropic-ratelimit-unified-reset", strconv.FormatInt(testNow.Add(time.Hour).Unix(), 10),
			"anthropic-ratelimit-requests-reset", "2025-06-01T12:00:30Z"), "", time.Hour, HintAnthropicReset},
		{"anthropic larger of requests/tokens", hdr(
			"anthropic-ratelimit-requests-reset", "2025-06-01T12:00:30Z",
			"anthropic-ratelimit-tokens-reset", "2025-06-01T12:00:45Z"), "", 45 * time.Second, HintAnthropicReset},
		{"body last", hdr("content-type", "application/json"), `{"error":{"message":"Please try again in 2s."}}`, 2 * time.Second, HintBody},
		{"nil header", nil, "retry after 3 seconds", 3 * time.Second, HintBody},
		{"nothing", nil, `{"error":{"message":"slow down"}}`, 0, ""},
		{"past anthropic reset ignored", hdr("anthropic-ratelimit-requests-reset", "2025-06-01T11:00:00Z"), "", 0, ""},
	}
	for _, tc := range cases {
		d, src := HintFromResponse(tc.h, []byte(tc.body), testNow)
		if d != tc.want || src != tc.source {
			t.Errorf("%s: HintFromResponse = (%v, %q), want (%v, %q)", tc.name, d, src, tc.want, tc.source)
		}
	}
}

// fuzzNow is the fuzzers' observation time; also try the zero time.
var fuzzNows = []time.Time{testNow, {}}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", "1.5", "-1", "Sun, 01 Jun 2025 12:00:10 GMT", "Sun Jun  1 12:00:10 2025",
		"99999999999999999999", "1e9", "", " ", "0.0000000001", "34560000.9999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, now := range fuzzNows {
			d, ok := ParseRetryAfter(s, now)
			if d < 0 || d > maxHint || (!ok && d != 0) {
				t.Fatalf("ParseRetryAfter(%q) = (%v, %v)", s, d, ok)
			}
		}
	})
}

func FuzzParseResetDuration(f *testing.F) {
	for _, s := range []string{"1s", "6m0s", "20ms", "1h2m3.5s", "0.5s", "-1s", "60", "9223372036854775807ns", ".s", "1.2.3s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseResetDuration(s)
		if d < 0 || d > maxHint || (!ok && d != 0) {
			t.Fatalf("ParseResetDuration(%q) = (%v, %v)", s, d, ok)
		}
	})
}

func FuzzParseResetTimestamp(f *testing.F) {
	for _, s := range []string{"2025-06-01T12:00:40Z", "1748779260", "1748779260000", "1748779260.5",
		"9999999999999999999", "-5", "2025-06-01 12:01:00Z", "0000-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, now := range fuzzNows {
			d, ok := ParseResetTimestamp(s, now)
			if d < 0 || d > maxHint || (!ok && d != 0) {
				t.Fatalf("ParseResetTimestamp(%q) = (%v, %v)", s, d, ok)
			}
		}
	})
}

func FuzzParseBodyRetry(f *testing.F) {
	for _, s := range []string{
		`{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`,
		`{"error":{"details":[{"@type":"x.RetryInfo","retryDelay":{"seconds":"9223372036854775807","nanos":-1}}]}}`,
		`[{"error":{"details":[{"@type":"RetryInfo","retryDelay":1}]}}]`,
		"try again in 1m30s", "retry after 20 seconds", "reset at 2025-06-01T12:05:00Z", "retry in 9999999999 days",
		"try again in .", "reset at ", "{", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, now := range fuzzNows {
			d, src, ok := ParseBodyRetry(b, now)
			if d < 0 || d > maxHint || (!ok && (d != 0 || src != "")) || (ok && src == "") {
				t.Fatalf("ParseBodyRetry(%q) = (%v, %q, %v)", b, d, src, ok)
			}
		}
		v := Classify(Outcome{Status: 429, Body: b, Now: testNow})
		if v.RetryAfter < 0 || v.FixedCooldown < 0 {
			t.Fatalf("Classify(429, %q) = %+v", b, v)
		}
	})
}

func FuzzClassify(f *testing.F) {
	f.Add(429, "3", []byte(`{"error":{"code":"1302","message":"并发数过高"}}`))
	f.Add(400, "", []byte(`{"error":{"message":"prompt is too long"}}`))
	f.Add(503, "Sun, 01 Jun 2025 12:00:10 GMT", []byte("<html>"))
	f.Add(401, "", []byte(`{"error":{"message":"Incorrect API key provided: sk-abc. Bearer xyz"}}`))
	f.Fuzz(func(t *testing.T, status int, retryAfter string, b []byte) {
		o := Outcome{Status: status, Header: http.Header{"Retry-After": {retryAfter}}, Body: b, Now: testNow}
		v := Classify(o)
		if v.RetryAfter < 0 || v.FixedCooldown < 0 || v.RetryAfter > maxHint {
			t.Fatalf("bad durations: %+v", v)
		}
		if v.CountsForBreaker && v.SkipProviderBreaker {
			t.Fatalf("counts and skips breaker: %+v", v)
		}
		if (v.Kind == KindSuccess) != (status >= 200 && status < 300) || (v.Kind != KindSuccess && v.Code == "") {
			t.Fatalf("kind/code mismatch for %d: %+v", status, v)
		}
		if v != Classify(o) {
			t.Fatalf("not deterministic")
		}
	})
}
