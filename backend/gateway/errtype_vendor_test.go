package gateway

import (
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/resilience/watchdog"
	"omniroute/backend/translate"
	"omniroute/backend/translate/frames"
	"omniroute/backend/translate/sse"
)

// TestMessagesStreamKeepsUpstreamErrorType (issue 41, M4): an Anthropic
// upstream's error event, as Anthropic's streaming reference shows it
// ("event: error" with an overloaded_error), reaches a Messages client with
// its own type (clients retry on overloaded_error), not api_error; an error
// without an Anthropic type is still api_error.
func TestMessagesStreamKeepsUpstreamErrorType(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"overloaded", `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`, "overloaded_error"},
		{"rate limit", `{"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}`, "rate_limit_error"},
		{"openai type", `{"error": {"type": "server_error", "message": "boom"}}`, "api_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := sse.Event{Event: "error", Data: []byte(c.data)}
			if f := frames.Classify(translate.Messages, ev); f.Kind != watchdog.Error {
				t.Fatalf("the vendor's error event is not classified an error: %v", f.Kind)
			}
			s := &streamState{a: &attemptCtx{req: &request{format: translate.Messages}}}
			s.streamErr = upstreamErrorEvent(ev.Data)
			out := s.errorEvent(nil, "UPSTREAM_STREAM_ERROR", "stream interrupted: x")
			var got sse.Event
			var p sse.Parser
			_ = p.Feed(out, func(e sse.Event) bool { got = e; return true })
			if got.Event != "error" || gjson.GetBytes(got.Data, "type").String() != "error" {
				t.Fatalf("not an Anthropic error event: %q", out)
			}
			if typ := gjson.GetBytes(got.Data, "error.type").String(); typ != c.want {
				t.Errorf("error.type %q, want %q", typ, c.want)
			}
		})
	}
}
