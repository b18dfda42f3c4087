package gemini

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/sse"
)

// Vendor-reference answers (issue 41, M10): OpenAI's Chat API cut off at
// max_tokens in the middle of a tool call's arguments — finish_reason
// "length", the arguments an unfinished JSON string — non-streamed and
// streamed (chat.completion.chunk deltas), as its reference shapes them.
const (
	vendorChatCutArgs = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_62136354","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Bost"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":82,"completion_tokens":8,"total_tokens":90}}`

	vendorChatCutArgsStream = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_62136354","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":\"Bost"}}]},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":8,"total_tokens":90}}` + "\n\n" +
		"data: [DONE]\n\n"
)

// TestCutOffArgumentsNotInvented (M10): a tool call whose arguments were cut
// off reaches a Gemini client as no functionCall at all (functionCall.args
// must be an object; no invented {"_arguments": …}), and the answer ends with
// finishReason MAX_TOKENS, streamed or not.
func TestCutOffArgumentsNotInvented(t *testing.T) {
	check := func(t *testing.T, out string) {
		t.Helper()
		if strings.Contains(out, "_arguments") || strings.Contains(out, "functionCall") {
			t.Errorf("a cut-off call reached the client: %s", out)
		}
	}
	t.Run("non-stream", func(t *testing.T) {
		out, err := ResponseFromChat([]byte(vendorChatCutArgs))
		if err != nil {
			t.Fatal(err)
		}
		check(t, string(out))
		if f := gjson.GetBytes(out, "candidates.0.finishReason").String(); f != "MAX_TOKENS" {
			t.Errorf("finishReason %q, want MAX_TOKENS: %s", f, out)
		}
		if !gjson.GetBytes(out, "candidates.0.content.parts").IsArray() {
			t.Errorf("no parts: %s", out)
		}
	})
	t.Run("stream", func(t *testing.T) {
		tr := NewStreamFromChat("gpt-4o", FramingSSE)
		var out []byte
		var p sse.Parser
		var err error
		_ = p.Feed([]byte(vendorChatCutArgsStream), func(ev sse.Event) bool {
			out, err = tr.Event(out, ev)
			return err == nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = tr.End(out)
		check(t, string(out))
		var last string
		var q sse.Parser
		_ = q.Feed(out, func(ev sse.Event) bool { last = string(ev.Data); return true })
		if f := gjson.Get(last, "candidates.0.finishReason").String(); f != "MAX_TOKENS" {
			t.Errorf("finishReason %q, want MAX_TOKENS: %s", f, out)
		}
	})
}
