package translate_test

import (
	"encoding/json"
	"testing"

	tanthropic "omniroute/backend/translate/anthropic"
	tgemini "omniroute/backend/translate/gemini"
	"omniroute/backend/translate/responses"
)

// Vendor-reference answers (issue 41, M8), as each API reference shows a
// non-streamed answer: Anthropic's Messages response, Gemini's
// GenerateContentResponse, OpenAI's Responses response object (Codex's wire)
// with a text answer and with a refusal.
const (
	vendorAnthropicMessage = `{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hi! My name is Claude."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":2095,"output_tokens":503}}`
	vendorGeminiAnswer     = `{"candidates":[{"content":{"parts":[{"text":"Hello! How can I help you today?"}],"role":"model"},"finishReason":"STOP","avgLogprobs":-0.05}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":9,"totalTokenCount":11},"modelVersion":"gemini-2.0-flash"}`
	vendorResponsesAnswer  = `{"id":"resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[{"type":"message","id":"msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b","status":"completed","role":"assistant","content":[{"type":"output_text","text":"In a peaceful grove beneath a silver moon...","annotations":[]}]}],"usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":87,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":123}}`
	vendorResponsesRefusal = `{"id":"resp_1","object":"response","created_at":1741476542,"status":"completed","error":null,"model":"gpt-4.1-2025-04-14","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"refusal","refusal":"I'm sorry, I cannot help with that."}]}],"usage":{"input_tokens":10,"output_tokens":9,"total_tokens":19}}`
)

// TestChatAnswerRequiredKeys (issue 41, M8): a chat.completion translated
// from another wire has the keys OpenAI's reference requires of a choice:
// "logprobs" and "message.refusal" (null allowed); a Responses refusal is
// message.refusal, not text.
func TestChatAnswerRequiredKeys(t *testing.T) {
	cases := []struct {
		name    string
		conv    func() ([]byte, error)
		refusal any
		content any
	}{
		{"anthropic", func() ([]byte, error) { return tanthropic.ResponseToChat([]byte(vendorAnthropicMessage)) }, nil, "Hi! My name is Claude."},
		{"gemini", func() ([]byte, error) { return tgemini.ResponseToChat([]byte(vendorGeminiAnswer), "gemini-2.0-flash") }, nil, "Hello! How can I help you today?"},
		{"codex", func() ([]byte, error) { return responses.ResponseToChat([]byte(vendorResponsesAnswer)) }, nil, "In a peaceful grove beneath a silver moon..."},
		{"codex refusal", func() ([]byte, error) { return responses.ResponseToChat([]byte(vendorResponsesRefusal)) }, "I'm sorry, I cannot help with that.", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.conv()
			if err != nil {
				t.Fatal(err)
			}
			var cc struct {
				Choices []map[string]json.RawMessage `json:"choices"`
			}
			if err := json.Unmarshal(out, &cc); err != nil || len(cc.Choices) != 1 {
				t.Fatalf("%v %s", err, out)
			}
			ch := cc.Choices[0]
			if lp, ok := ch["logprobs"]; !ok || string(lp) != "null" {
				t.Errorf("logprobs missing or not null: %s", out)
			}
			var msg map[string]any
			if err := json.Unmarshal(ch["message"], &msg); err != nil {
				t.Fatal(err)
			}
			if r, ok := msg["refusal"]; !ok || r != c.refusal {
				t.Errorf("message.refusal = %v (present %v), want %v: %s", r, ok, c.refusal, out)
			}
			if msg["content"] != c.content {
				t.Errorf("content %v, want %v", msg["content"], c.content)
			}
		})
	}
}
