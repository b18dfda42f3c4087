package anthropic

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Vendor-reference answers (issue 41, M9): OpenAI's Chat API refusing a
// request, as its Structured Outputs guide shows it — message.refusal set,
// no content, finish_reason "stop" — and streamed as delta.refusal pieces
// (the Chat Completions chunk object's choices[].delta.refusal).
const (
	vendorChatRefusal = `{"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion","created":1721596428,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","refusal":"I'm sorry, I cannot assist with that request."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":81,"completion_tokens":11,"total_tokens":92,"completion_tokens_details":{"reasoning_tokens":0}},"system_fingerprint":"fp_3407719c7f"}`

	vendorChatRefusalChunks = `{"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion.chunk","created":1721596428,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_3407719c7f","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"logprobs":null,"finish_reason":null}]}
{"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion.chunk","created":1721596428,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_3407719c7f","choices":[{"index":0,"delta":{"refusal":"I'm sorry"},"logprobs":null,"finish_reason":null}]}
{"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion.chunk","created":1721596428,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_3407719c7f","choices":[{"index":0,"delta":{"refusal":", I cannot assist with that request."},"logprobs":null,"finish_reason":null}]}
{"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion.chunk","created":1721596428,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_3407719c7f","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}
[DONE]`
)

// TestOpenAIRefusalStopReason (M9): an OpenAI refusal reaches a Messages
// client as Anthropic's documented stop_reason "refusal" (not end_turn),
// its explanation kept as the text, streamed or not.
func TestOpenAIRefusalStopReason(t *testing.T) {
	t.Run("non-stream", func(t *testing.T) {
		out, err := ResponseFromChat([]byte(vendorChatRefusal))
		if err != nil {
			t.Fatal(err)
		}
		if r := gjson.GetBytes(out, "stop_reason").String(); r != "refusal" {
			t.Errorf("stop_reason %q, want refusal: %s", r, out)
		}
		if txt := gjson.GetBytes(out, "content.0.text").String(); txt != "I'm sorry, I cannot assist with that request." {
			t.Errorf("text %q: %s", txt, out)
		}
	})
	t.Run("stream", func(t *testing.T) {
		out, err := runStream(t, NewStreamFromChat("gpt-4o"), sseInput(strings.Split(vendorChatRefusalChunks, "\n")...))
		if err != nil {
			t.Fatal(err)
		}
		var stop, text string
		for _, e := range parseOut(t, out) {
			switch e.Event {
			case "message_delta":
				stop = gjson.Get(e.Data, "delta.stop_reason").String()
			case "content_block_delta":
				text += gjson.Get(e.Data, "delta.text").String()
			}
		}
		if stop != "refusal" {
			t.Errorf("stop_reason %q, want refusal: %s", stop, out)
		}
		if text != "I'm sorry, I cannot assist with that request." {
			t.Errorf("text %q", text)
		}
	})
	t.Run("ordinary stop stays end_turn", func(t *testing.T) {
		plain := strings.Replace(vendorChatRefusal, `"refusal":"I'm sorry, I cannot assist with that request."`, `"content":"Paris.","refusal":null`, 1)
		out, err := ResponseFromChat([]byte(plain))
		if err != nil {
			t.Fatal(err)
		}
		if r := gjson.GetBytes(out, "stop_reason").String(); r != "end_turn" {
			t.Errorf("stop_reason %q, want end_turn: %s", r, out)
		}
	})
}
