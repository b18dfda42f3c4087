package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/tests/fakeupstream"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	thousand := make([]int, 1000)
	for i := range thousand {
		thousand[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"single", ms(7), 99.9, 7 * time.Millisecond},
		{"median odd", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"median even is lower", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p99.9 of 1..100 is max", ms(hundred...), 99.9, 100 * time.Millisecond},
		{"p99.9 of 1..1000", ms(thousand...), 99.9, 999 * time.Millisecond},
		{"p100 is max", ms(1, 5, 9), 100, 9 * time.Millisecond},
		{"tiny p is min", ms(1, 5, 9), 0.001, 1 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(p=%g) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	got := summarize([]time.Duration{4 * time.Microsecond, 1 * time.Microsecond, 3 * time.Microsecond, 2 * time.Microsecond})
	want := percentiles{Count: 4, Mean: 2.5, P50: 2, P90: 4, P99: 4, P999: 4, Max: 4}
	if got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
}

func TestKeepTail(t *testing.T) {
	var tail [64]byte
	tl := 0
	var all []byte
	for _, chunk := range []string{"abc", strings.Repeat("x", 50), "data: [DONE]\n\n", strings.Repeat("y", 70), "end"} {
		tl = keepTail(&tail, tl, []byte(chunk))
		all = append(all, chunk...)
		want := all[max(len(all)-64, 0):]
		if !bytes.Equal(tail[:tl], want) {
			t.Fatalf("after %q: tail %q, want %q", chunk, tail[:tl], want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := config{url: "http://127.0.0.1:1/v1/chat/completions", rate: 10, duration: time.Second, timeout: time.Second, maxInFlight: 1}
	tests := []struct {
		name   string
		mutate func(c *config)
		ok     bool
	}{
		{"ok", func(*config) {}, true},
		{"localhost", func(c *config) { c.url = "http://localhost:8080/v1/messages" }, true},
		{"ipv6 loopback", func(c *config) { c.url = "http://[::1]:8080/v1/messages" }, true},
		{"private address", func(c *config) { c.url = "http://10.0.0.1/v1/chat/completions" }, false},
		{"public name", func(c *config) { c.url = "https://api.openai.com/v1/chat/completions" }, false},
		{"no scheme", func(c *config) { c.url = "127.0.0.1:1/v1" }, false},
		{"zero rate", func(c *config) { c.rate = 0 }, false},
		{"huge rate", func(c *config) { c.rate = 1e9 }, false},
		{"zero duration", func(c *config) { c.duration = 0 }, false},
		{"too many requests", func(c *config) { c.rate, c.duration = maxRate, maxDuration }, false},
		{"negative warmup", func(c *config) { c.warmup = -time.Second }, false},
		{"no inflight", func(c *config) { c.maxInFlight = 0 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			if err := c.validate(); (err == nil) != tc.ok {
				t.Errorf("validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestRunAgainstFake drives the fake upstream over loopback: the schedule
// fixes the request count (rate × duration), whatever the machine's speed.
func TestRunAgainstFake(t *testing.T) {
	u := fakeupstream.New()
	base := u.Start()
	t.Cleanup(u.Close)
	tests := []struct {
		name     string
		path     string
		stream   bool
		warmup   time.Duration
		fault    *fakeupstream.Fault
		wantOK   int
		wantErrs map[string]int
		wantHits int
	}{
		{"openai json", "/v1/chat/completions", false, 0, nil, 60, map[string]int{}, 60},
		{"openai stream with warmup", "/v1/chat/completions", true, 100 * time.Millisecond, nil, 60, map[string]int{}, 80},
		{"anthropic stream", "/v1/messages", true, 0, nil, 60, map[string]int{}, 60},
		{"rate limited", "/v1/chat/completions", false, 0,
			&fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429}, 0, map[string]int{"status_429": 60}, 60},
		{"broken streams", "/v1/messages", true, 0,
			&fakeupstream.Fault{Mode: fakeupstream.ModeResetMidStream, AfterChunks: 1, Times: 10}, 50, map[string]int{"body_unexpected_eof": 10}, 60},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u.Reset()
			if tc.fault != nil {
				u.SetFault("lg", *tc.fault)
			}
			c := config{url: base + tc.path, key: "lg", model: "m", rate: 200, duration: 300 * time.Millisecond,
				warmup: tc.warmup, timeout: 5 * time.Second, stream: tc.stream, maxInFlight: 64}
			rep, err := run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Scheduled != 60 || rep.Sent != 60 || rep.OK != tc.wantOK {
				t.Errorf("scheduled %d sent %d ok %d, want 60/60/%d (errors %v)", rep.Scheduled, rep.Sent, rep.OK, tc.wantOK, rep.Errors)
			}
			if len(rep.Errors) != len(tc.wantErrs) {
				t.Errorf("errors %v, want %v", rep.Errors, tc.wantErrs)
			}
			for k, n := range tc.wantErrs {
				if rep.Errors[k] != n {
					t.Errorf("errors %v, want %v", rep.Errors, tc.wantErrs)
				}
			}
			if got := u.Hits("lg"); got != tc.wantHits {
				t.Errorf("fake saw %d requests, want %d", got, tc.wantHits)
			}
			if rep.Latency.Count != tc.wantOK || (tc.wantOK > 0 && (rep.Latency.P50 <= 0 || rep.Latency.Max < rep.Latency.P99)) {
				t.Errorf("latency %+v", rep.Latency)
			}
			if tc.stream && tc.wantOK > 0 && rep.TTFB.P50 > rep.Latency.P50 {
				t.Errorf("ttfb %+v after ttlb %+v", rep.TTFB, rep.Latency)
			}
			if rep.AchievedRate <= 0 {
				t.Errorf("achieved rate %v", rep.AchievedRate)
			}
			var text bytes.Buffer
			if err := rep.writeText(&text); err != nil || !strings.Contains(text.String(), "sent          60") {
				t.Errorf("text report %q (%v)", text.String(), err)
			}
			raw, err := json.Marshal(rep)
			if err != nil || !json.Valid(raw) {
				t.Errorf("json report: %v", err)
			}
		})
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	u := fakeupstream.New()
	base := u.Start()
	t.Cleanup(u.Close)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := run(ctx, config{url: base + "/v1/chat/completions", key: "k", model: "m", rate: 10,
		duration: time.Hour, timeout: time.Second, maxInFlight: 4})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent > 1 {
		t.Errorf("sent %d after cancel", rep.Sent)
	}
}

func TestRunRejectsRemoteTarget(t *testing.T) {
	_, err := run(context.Background(), config{url: "http://192.168.1.1/v1/chat/completions", rate: 1,
		duration: time.Second, timeout: time.Second, maxInFlight: 1})
	if err == nil {
		t.Fatal("non-loopback target accepted")
	}
}
