package api

import "testing"

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
