package connprobe

import (
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

func TestProbeModelSkipsNonChatModels(t *testing.T) {
	tests := []struct {
		served []string
		want   string
	}{
		{[]string{"gpt-4o-mini"}, "gpt-4o-mini"},
		{[]string{"text-embedding-3-small", "whisper-1", "dall-e-3", "gpt-4o"}, "gpt-4o"},
		{[]string{"omni-moderation-latest", "tts-1"}, "omni-moderation-latest"}, // nothing chat-like: the first
		{[]string{"mine", "text-embedding-3-small"}, "mine"},                    // the user's own list comes first
	}
	for _, tt := range tests {
		if got := probeModel(tt.served); got != tt.want {
			t.Errorf("probeModel(%v) = %q, want %q", tt.served, got, tt.want)
		}
	}
}

func TestUpstreamMessageShapes(t *testing.T) {
	tests := map[string]string{
		`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`:      "Incorrect API key provided",
		`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`: "invalid x-api-key",
		`{"message":"Unauthorized"}`: "Unauthorized",
		`{"error":"bad key"}`:        "bad key",
		`not json`:                   "not json",
		``:                           "",
	}
	for body, want := range tests {
		if got := upstreamMessage([]byte(body)); got != want {
			t.Errorf("upstreamMessage(%q) = %q, want %q", body, got, want)
		}
	}
}

// TestCompletionBodyPerWire: the one-token request of each wire (the
// Responses wire asks 16, the least some upstreams take); a wire without
// one is not tried.
func TestCompletionBodyPerWire(t *testing.T) {
	tests := []struct {
		format       providers.Format
		ok           bool
		model, limit string
		path         string // where the prompt is
	}{
		{providers.FormatOpenAI, true, "m", "max_tokens", "messages.0.content"},
		{providers.FormatAnthropic, true, "m", "max_tokens", "messages.0.content"},
		{providers.FormatResponses, true, "m", "max_output_tokens", "input"},
		{providers.FormatGemini, true, "", "generationConfig.maxOutputTokens", "contents.0.parts.0.text"},
		{providers.Format("embeddings-only"), false, "", "", ""},
	}
	for _, tt := range tests {
		body, ok := completionBody(tt.format, "m")
		if ok != tt.ok {
			t.Errorf("%s: ok %v", tt.format, ok)
			continue
		}
		if !ok {
			continue
		}
		want := int64(1)
		if tt.format == providers.FormatResponses {
			want = 16
		}
		if gjson.GetBytes(body, "model").String() != tt.model || gjson.GetBytes(body, tt.limit).Int() != want || gjson.GetBytes(body, tt.path).String() != "ping" {
			t.Errorf("%s: %s", tt.format, body)
		}
	}
}

// TestJudgeSubscriptionIsNeverRejected: a subscription token the upstream
// refuses is refreshed, not called a rejected key; a typed key is.
func TestJudgeSubscriptionIsNeverRejected(t *testing.T) {
	reach, models := discoveryReach(discovery.Result{Models: []string{"m"}, Source: discovery.SourceUpstream})
	comp := CheckStep{Step: StepCompletion, Status: 401, Message: "expired token", Model: "m"}
	for _, tt := range []struct {
		oauth    bool
		rejected bool
		state    string
	}{{false, true, KeyRejected}, {true, false, ""}} {
		ch := judge(reach, models, comp, discovery.Result{Source: discovery.SourceUpstream}, tt.oauth, "https://x.example")
		if ch.OK || ch.Rejected != tt.rejected || ch.State != tt.state {
			t.Errorf("oauth %v: %+v", tt.oauth, ch)
		}
	}
}

// TestDiscovered: what a discovery stores: the upstream's list, the
// catalogue default only over no upstream list, and the modelsError.
func TestDiscovered(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	fromUpstream := store.Connection{DiscoveredModels: `["old"]`, ModelsSource: discovery.SourceUpstream}
	fromCatalog := store.Connection{DiscoveredModels: `["cat-old"]`, ModelsSource: discovery.SourceCatalog}
	failed := &discovery.Error{Code: discovery.CodeUnreachable, Message: "connection refused"}
	tests := []struct {
		name                 string
		row                  store.Connection
		res                  discovery.Result
		models, source, errs string
	}{
		{"the upstream's list", fromCatalog, discovery.Result{Models: []string{"a", "b"}, Source: discovery.SourceUpstream}, `["a","b"]`, discovery.SourceUpstream, ""},
		{"defaults over defaults", fromCatalog, discovery.Result{Models: []string{"d"}, Source: discovery.SourceCatalog, Err: failed}, `["d"]`, discovery.SourceCatalog, "connection refused"},
		{"an upstream list kept over defaults", fromUpstream, discovery.Result{Models: []string{"d"}, Source: discovery.SourceCatalog, Err: failed}, `["old"]`, discovery.SourceUpstream, "connection refused"},
		{"nothing answered", fromUpstream, discovery.Result{Err: failed}, `["old"]`, discovery.SourceUpstream, "connection refused"},
	}
	for _, tt := range tests {
		d := Discovered(tt.row, tt.res, now)
		if d.Models != tt.models || d.Source != tt.source || d.Error != tt.errs || d.RefreshedAt != now.UnixMilli() {
			t.Errorf("%s: %+v", tt.name, d)
		}
	}
}

// TestTestStatusShowsUnreachable: an active connection nothing answered
// (never reached and a miss, or UnreachableAfter misses in a row) reads
// unreachable; a reached one with fewer misses, or any other state, keeps
// its status.
func TestTestStatusShowsUnreachable(t *testing.T) {
	tests := []struct {
		status  string
		reached bool
		misses  int
		want    string
	}{
		{"active", false, 0, "active"},
		{"active", false, 1, Unreachable},
		{"active", true, 2, "active"},
		{"active", true, 3, Unreachable},
		{"rate_limited", false, 5, "rate_limited"},
		{KeyRejected, false, 5, KeyRejected},
	}
	for _, tt := range tests {
		if got := TestStatus(tt.status, routing.Reach{Reached: tt.reached, Misses: tt.misses}); got != tt.want {
			t.Errorf("TestStatus(%q, reached %v, %d misses) = %q, want %q", tt.status, tt.reached, tt.misses, got, tt.want)
		}
	}
}
