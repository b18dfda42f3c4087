package bedrock

import (
	"encoding/json"
	"testing"
)

// vendorConverseAnswer is a Converse response as AWS's API reference shows it.
const vendorConverseAnswer = `{"output":{"message":{"role":"assistant","content":[{"text":"Here is a short story about a dragon."}]}},"stopReason":"end_turn","usage":{"inputTokens":125,"outputTokens":60,"totalTokens":185},"metrics":{"latencyMs":1175}}`

// TestFromConverseRequiredKeys (issue 41, M8): the chat.completion made of a
// Converse answer has "logprobs" and "message.refusal", keys OpenAI's
// reference requires (null).
func TestFromConverseRequiredKeys(t *testing.T) {
	out, err := FromConverse([]byte(vendorConverseAnswer), "chatcmpl-1", "anthropic.claude-3-haiku", 1)
	if err != nil {
		t.Fatal(err)
	}
	var cc struct {
		Choices []map[string]json.RawMessage `json:"choices"`
	}
	if err := json.Unmarshal(out, &cc); err != nil || len(cc.Choices) != 1 {
		t.Fatalf("%v %s", err, out)
	}
	if lp, ok := cc.Choices[0]["logprobs"]; !ok || string(lp) != "null" {
		t.Errorf("logprobs missing: %s", out)
	}
	var msg map[string]json.RawMessage
	_ = json.Unmarshal(cc.Choices[0]["message"], &msg)
	if r, ok := msg["refusal"]; !ok || string(r) != "null" {
		t.Errorf("message.refusal missing: %s", out)
	}
	if string(msg["content"]) != `"Here is a short story about a dragon."` {
		t.Errorf("content: %s", out)
	}
}
