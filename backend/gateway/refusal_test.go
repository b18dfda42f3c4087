package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"omniroute/backend/routing"
	"omniroute/backend/translate"
)

// TestRefusalEnd (issue 40 D): the events that end an answer as a refusal
// or a safety block, in each upstream wire, and ordinary ends that are not.
func TestRefusalEnd(t *testing.T) {
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"anthropic refusal", `{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"output_tokens":0}}`, true},
		{"anthropic refusal, spaced", `{"type": "message_delta", "delta": {"stop_reason" : "refusal"}}`, true},
		{"anthropic end_turn", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, false},
		{"openai content_filter", `{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`, true},
		{"openai stop with a null refusal", `{"choices":[{"index":0,"delta":{"refusal":null},"finish_reason":"stop"}]}`, false},
		{"openai stop with an empty refusal", `{"choices":[{"index":0,"delta":{"content":"ok","refusal":""},"finish_reason":"stop"}]}`, false},
		// OpenAI's refusal streams its text in delta.refusal and ends "stop".
		{"openai refusal delta", `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"refusal":"I'm sorry, I can't"},"logprobs":null,"finish_reason":null}]}`, true},
		{"openai refusal delta, spaced", `{"choices": [{"delta": {"refusal" : "I'm sorry"}, "finish_reason": null}]}`, true},
		{"openai refusal delta ending stop", `{"choices":[{"index":0,"delta":{"refusal":" help with that."},"finish_reason":"stop"}]}`, true},
		{"openai content naming a refusal", `{"choices":[{"index":0,"delta":{"content":"a \"refusal\": \"no\" key"},"finish_reason":null}]}`, false},
		{"responses refusal delta", `{"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"I'm sorry","sequence_number":4}`, true},
		{"responses text delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"refusal","sequence_number":4}`, false},
		{"gemini safety", `{"candidates":[{"finishReason":"SAFETY","index":0,"safetyRatings":[]}]}`, true},
		{"gemini prohibited", `{"candidates":[{"finishReason":"PROHIBITED_CONTENT"}]}`, true},
		{"gemini prompt blocked", `{"promptFeedback":{"blockReason":"SAFETY"}}`, true},
		{"gemini stop", `{"candidates":[{"finishReason":"STOP"}]}`, false},
		{"done", `[DONE]`, false},
		{"ping", `{"type":"ping"}`, false},
	}
	for _, tt := range tests {
		data := []byte(tt.data)
		if got := refusalEnd(data); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		// Read on every stream's ending events: nothing allocated.
		if n := testing.AllocsPerRun(20, func() { refusalEnd(data) }); n != 0 {
			t.Errorf("%s: %v allocations", tt.name, n)
		}
	}
}

// TestRefusesPrefill (issue 40 F): the 400s that name the prefill (or the
// flags that ask for one) mark a target's model as refusing it; other 400s
// and other statuses do not.
func TestRefusesPrefill(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   bool
	}{
		{400, `{"error":{"message":"This model does not support assistant message prefill. The conversation must end with a user message."}}`, true},
		{400, `{"error":{"message":"Unrecognized request argument supplied: continue_final_message"}}`, true},
		{400, `{"error":{"message":"messages.1: Extra inputs are not permitted: 'prefix'"}}`, true},
		{400, `{"error":{"message":"max_tokens is too large"}}`, false},
		{500, `{"error":{"message":"prefill failed"}}`, false},
	}
	for _, tt := range tests {
		if got := refusesPrefill(tt.status, []byte(tt.body)); got != tt.want {
			t.Errorf("%d %s: %v, want %v", tt.status, tt.body, got, tt.want)
		}
	}
}

// TestNoRetryPastAMinute (issue 40 A): a 503 whose soonest return is more
// than a minute away, or never, says x-should-retry: false; one within a
// minute does not.
func TestNoRetryPastAMinute(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	held := func(d time.Duration, transient bool) routing.Plan {
		return routing.Plan{Excluded: []routing.Exclusion{{ConnectionID: "c", Model: "m", Reason: "circuit_open", Remaining: d, Transient: transient}}}
	}
	tests := []struct {
		name string
		plan routing.Plan
		want string
	}{
		{"breaker, next probe in 15 s", held(15*time.Second, true), ""},
		{"cooling, back in 60 s", held(time.Minute, true), ""},
		{"cooling, back in 61 s", held(61*time.Second, true), "false"},
		{"nothing comes back", routing.Plan{Excluded: []routing.Exclusion{{ConnectionID: "c", Model: "m", Reason: "unavailable", Detail: "banned"}}}, "false"},
	}
	for _, tt := range tests {
		err := terminalError(&request{model: "m"}, nil, tt.plan, now)
		w := httptest.NewRecorder()
		writeError(w, translate.Chat, 0, err)
		if got := w.Header().Get("X-Should-Retry"); w.Code != http.StatusServiceUnavailable || got != tt.want {
			t.Errorf("%s: %d, x-should-retry %q, want 503 %q", tt.name, w.Code, got, tt.want)
		}
	}
}
