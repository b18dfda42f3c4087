package gemini

import (
	"reflect"
	"testing"
	"time"
)

func TestParseError(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		ok     bool
		want   APIError
		wantID string
	}{
		{
			name: "per-day free tier quota with retry delay",
			body: `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[
				{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-pro"},"quotaValue":"50"}]},
				{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},
				{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`,
			ok:     true,
			want:   APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "You exceeded your current quota.", RetryDelay: 37 * time.Second, HasRetry: true, Quota: QuotaPerDay},
			wantID: "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
		},
		{
			name:   "per-minute quota, fractional delay",
			body:   `{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"},{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]}]}}`,
			ok:     true,
			want:   APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "m", RetryDelay: 1500 * time.Millisecond, HasRetry: true, Quota: QuotaPerMinute},
			wantID: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
		},
		{
			name:   "a day window among minute windows makes it per-day",
			body:   `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier"},{"quotaId":"GenerateRequestsPerDayPerProjectPerModel"}]}]}}`,
			ok:     true,
			want:   APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Quota: QuotaPerDay},
			wantID: "GenerateContentInputTokensPerModelPerMinute-FreeTier",
		},
		{
			name:   "Code Assist ErrorInfo quota_limit, array-wrapped",
			body:   `[{"error":{"code":429,"message":"Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier'","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"quota_metric":"cloudcode-pa.googleapis.com/gemini_2_5_pro_requests","quota_limit":"Gemini25ProRequestsPerDay"}}]}}]`,
			ok:     true,
			want:   APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier'", Quota: QuotaPerDay, Reason: "RATE_LIMIT_EXCEEDED"},
			wantID: "Gemini25ProRequestsPerDay",
		},
		{
			name: "RESOURCE_EXHAUSTED without details: scope from the message",
			body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`,
			ok:   true,
			want: APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "Resource has been exhausted (e.g. check quota).", Quota: QuotaUnknown},
		},
		{
			name: "503 UNAVAILABLE",
			body: `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
			ok:   true,
			want: APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."},
		},
		{
			name: "400 invalid API key",
			body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`,
			ok:   true,
			want: APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key.", Reason: "API_KEY_INVALID"},
		},
		{
			name: "bad retry delays are ignored",
			body: `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-3s"}]}}`,
			ok:   true,
			want: APIError{Code: 429, Status: "RESOURCE_EXHAUSTED"},
		},
		{name: "not an error", body: `{"candidates":[]}`},
		{name: "not JSON", body: `{"error":`},
		{name: "empty error", body: `{"error":{}}`},
		{name: "code out of range", body: `{"error":{"code":1e300}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseError([]byte(tt.body))
			if ok != tt.ok {
				t.Fatalf("ok = %v", ok)
			}
			id := ""
			if len(got.QuotaIDs) > 0 {
				id = got.QuotaIDs[0]
			}
			if id != tt.wantID {
				t.Errorf("quota id %q, want %q", id, tt.wantID)
			}
			got.QuotaIDs = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"37s", 37 * time.Second, true},
		{"0s", 0, true},
		{"0.5s", 500 * time.Millisecond, true},
		{"1.000340s", 1000340 * time.Microsecond, true},
		{"172800s", 48 * time.Hour, true},
		{"172801s", 48 * time.Hour, true},
		{"1e9s", 0, false},
		{"99999999999999999999999s", 48 * time.Hour, true},
		{"37", 0, false},
		{"s", 0, false},
		{".s", 0, false},
		{"1.2.3s", 0, false},
		{"1m", 0, false},
		{"-1s", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseDuration(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAppendError(t *testing.T) {
	got := string(AppendError(nil, 429, "", "Quota \"x\" exceeded", 36500*time.Millisecond))
	want := `{"error":{"code":429,"message":"Quota \"x\" exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	e, ok := ParseError([]byte(got))
	if !ok || e.RetryDelay != 37*time.Second || e.Status != "RESOURCE_EXHAUSTED" || e.Message != `Quota "x" exceeded` {
		t.Fatalf("does not parse back: %+v", e)
	}
	if got := string(AppendError(nil, 400, "FAILED_PRECONDITION", "m", 0)); got != `{"error":{"code":400,"message":"m","status":"FAILED_PRECONDITION"}}` {
		t.Fatalf("got %s", got)
	}
	statuses := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED", 418: "INVALID_ARGUMENT"}
	for code, want := range statuses {
		if got := StatusFor(code); got != want {
			t.Errorf("StatusFor(%d) = %s, want %s", code, got, want)
		}
	}
}
