package gateway

import "testing"

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
