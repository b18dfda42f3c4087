package gemini

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/sse"
)

// Vendor-reference answers (issue 41, M9): OpenAI's Chat API refusing a
// request, as its Structured Outputs guide shows it — message.refusal set,
// no content, finish_reason "stop" — and streamed as delta.refusal pieces.
const (
	vendorChatRefusal = `{"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion","created":1721596428,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","refusal":"I'm sorry, I cannot assist with that request."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":81,"completion_tokens":11,"total_tokens":92,"completion_tokens_details":{"reasoning_tokens":0}},"system_fingerprint":"fp_3407719c7f"}`

	vendorChatRefusalStream = `data: {"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion.chunk","created":1721596428,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion.chunk","created":1721596428,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"refusal":"I'm sorry, I cannot assist with that request."},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-9nYAG9LPNonX8DAyrkwYfemr3C8HC","object":"chat.completion.chunk","created":1721596428,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n" +
		"data: [DONE]\n\n"
)

// TestOpenAIRefusalFinishReason (M9): an OpenAI refusal reaches a Gemini
// client with Gemini's safety stop (finishReason SAFETY, not STOP), its
// explanation kept as the text, streamed or not.
func TestOpenAIRefusalFinishReason(t *testing.T) {
	const want = "I'm sorry, I cannot assist with that request."
	t.Run("non-stream", func(t *testing.T) {
		out, err := ResponseFromChat([]byte(vendorChatRefusal))
		if err != nil {
			t.Fatal(err)
		}
		if f := gjson.GetBytes(out, "candidates.0.finishReason").String(); f != "SAFETY" {
			t.Errorf("finishReason %q, want SAFETY: %s", f, out)
		}
		if txt := gjson.GetBytes(out, "candidates.0.content.parts.0.text").String(); txt != want {
			t.Errorf("text %q: %s", txt, out)
		}
	})
	t.Run("stream", func(t *testing.T) {
		tr := NewStreamFromChat("gpt-4o", FramingSSE)
		var out []byte
		var p sse.Parser
		var err error
		_ = p.Feed([]byte(vendorChatRefusalStream), func(ev sse.Event) bool {
			out, err = tr.Event(out, ev)
			return err == nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = tr.End(out)
		var last, text string
		var q sse.Parser
		_ = q.Feed(out, func(ev sse.Event) bool {
			last = string(ev.Data)
			text += gjson.Get(last, "candidates.0.content.parts.0.text").String()
			return true
		})
		if f := gjson.Get(last, "candidates.0.finishReason").String(); f != "SAFETY" {
			t.Errorf("finishReason %q, want SAFETY: %s", f, out)
		}
		if text != want {
			t.Errorf("text %q", text)
		}
	})
	t.Run("ordinary stop stays STOP", func(t *testing.T) {
		plain := strings.Replace(vendorChatRefusal, `"refusal":"I'm sorry, I cannot assist with that request."`, `"content":"Paris.","refusal":null`, 1)
		out, err := ResponseFromChat([]byte(plain))
		if err != nil {
			t.Fatal(err)
		}
		if f := gjson.GetBytes(out, "candidates.0.finishReason").String(); f != "STOP" {
			t.Errorf("finishReason %q, want STOP: %s", f, out)
		}
	})
}
