package anthropic

import (
	"errors"
	"testing"
)

func TestResponseToChat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{
			name: "text answer with cache usage",
			in: `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
				"content":[{"type":"text","text":"Hello"},{"type":"text","text":", world"}],"stop_reason":"end_turn","stop_sequence":null,
				"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":5,"service_tier":"standard"}}`,
			want: map[string]string{
				"id":                        `"msg_01"`,
				"object":                    `"chat.completion"`,
				"model":                     `"claude-sonnet-4-5-20250929"`,
				"choices.0.index":           `0`,
				"choices.0.message":         `{"role":"assistant","content":"Hello, world","refusal":null}`,
				"choices.0.finish_reason":   `"stop"`,
				"usage":                     `{"prompt_tokens":60,"completion_tokens":5,"total_tokens":65,"prompt_tokens_details":{"cached_tokens":30,"cache_write_tokens":20}}`,
				"choices.0.message.refusal": `null`, // a key OpenAI's reference requires (issue 41, M8)
			},
		},
		{
			name: "thinking and tool use",
			in: `{"id":"msg_02","type":"message","role":"assistant","model":"claude-opus-4-1","content":[
				{"type":"thinking","thinking":"Let me think.","signature":"EqoB"},
				{"type":"redacted_thinking","data":"EmwKAhgBEgy"},
				{"type":"text","text":"I'll check."},
				{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris"}},
				{"type":"tool_use","id":"toolu_01B","name":"get_time","input":{}}],
				"stop_reason":"tool_use","usage":{"input_tokens":100,"output_tokens":50}}`,
			want: map[string]string{
				"choices.0.message.content":           `"I'll check."`,
				"choices.0.message.reasoning_content": `"Let me think."`,
				"choices.0.message.tool_calls": `[{"id":"toolu_01A","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
					{"id":"toolu_01B","type":"function","function":{"name":"get_time","arguments":"{}"}}]`,
				"choices.0.finish_reason": `"tool_calls"`,
				"usage":                   `{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":0}}`,
			},
		},
		{
			name: "tool use only: null content",
			in:   `{"id":"m","model":"c","content":[{"type":"tool_use","id":"t","name":"f","input":{"a":1}}],"stop_reason":"tool_use","usage":{}}`,
			want: map[string]string{"choices.0.message.content": `null`},
		},
		{name: "max_tokens", in: `{"content":[],"stop_reason":"max_tokens"}`, want: map[string]string{"choices.0.finish_reason": `"length"`, "choices.0.message.content": `""`}},
		{name: "stop_sequence", in: `{"content":[],"stop_reason":"stop_sequence","stop_sequence":"END"}`, want: map[string]string{"choices.0.finish_reason": `"stop"`}},
		{name: "refusal", in: `{"content":[],"stop_reason":"refusal"}`, want: map[string]string{"choices.0.finish_reason": `"content_filter"`}},
		{name: "pause_turn", in: `{"content":[],"stop_reason":"pause_turn"}`, want: map[string]string{"choices.0.finish_reason": `"stop"`}},
		{name: "context window", in: `{"content":[],"stop_reason":"model_context_window_exceeded"}`, want: map[string]string{"choices.0.finish_reason": `"length"`}},
		{name: "null stop_reason", in: `{"content":null,"stop_reason":null,"usage":null}`, want: map[string]string{"choices.0.finish_reason": `"stop"`, "usage.total_tokens": `0`}},
		{name: "server tool blocks dropped", in: `{"content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}},{"type":"web_search_tool_result","tool_use_id":"s","content":[]},{"type":"text","text":"found"}],"stop_reason":"end_turn"}`,
			want: map[string]string{"choices.0.message.content": `"found"`, "choices.0.message.tool_calls": absent}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ResponseToChat([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, out, tc.want)
		})
	}
}

func TestResponseFromChat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{
			name: "text with cached and reasoning usage",
			in: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,
				"message":{"role":"assistant","content":"Hello","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],
				"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},
				"completion_tokens_details":{"reasoning_tokens":8}}}`,
			want: map[string]string{
				"id":            `"chatcmpl-1"`,
				"type":          `"message"`,
				"role":          `"assistant"`,
				"model":         `"gpt-4.1-2025-04-14"`,
				"content":       `[{"type":"text","text":"Hello"}]`,
				"stop_reason":   `"end_turn"`,
				"stop_sequence": `null`,
				"usage":         `{"input_tokens":36,"cache_creation_input_tokens":0,"cache_read_input_tokens":64,"output_tokens":20}`,
			},
		},
		{
			name: "reasoning_content and tool calls",
			in: `{"id":"c2","model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":"","reasoning_content":"hmm",
				"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":[1,2]}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":""}}]},
				"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":6}}`,
			want: map[string]string{
				"content": `[{"type":"thinking","thinking":"hmm","signature":""},
					{"type":"tool_use","id":"call_1","name":"f","input":{"a":[1,2]}},
					{"type":"tool_use","id":"call_2","name":"g","input":{}}]`,
				"stop_reason": `"tool_use"`,
				"usage":       `{"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":4,"output_tokens":3}`,
			},
		},
		{
			name: "openrouter reasoning field and cache writes",
			in: `{"id":"gen-1","model":"anthropic/claude-sonnet-4","choices":[{"message":{"role":"assistant","content":"ok","reasoning":"r"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":10,"cache_write_tokens":20}}}`,
			want: map[string]string{
				"content": `[{"type":"thinking","thinking":"r","signature":""},{"type":"text","text":"ok"}]`,
				"usage":   `{"input_tokens":70,"cache_creation_input_tokens":20,"cache_read_input_tokens":10,"output_tokens":1}`,
			},
		},
		{name: "length", in: `{"choices":[{"message":{"content":"x"},"finish_reason":"length"}]}`, want: map[string]string{"stop_reason": `"max_tokens"`}},
		{name: "content_filter", in: `{"choices":[{"message":{"content":null,"refusal":"I can't"},"finish_reason":"content_filter"}]}`,
			want: map[string]string{"stop_reason": `"refusal"`, "content": `[{"type":"text","text":"I can't"}]`}},
		{name: "stop with tool calls is tool_use", in: `{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}]}`,
			want: map[string]string{"stop_reason": `"tool_use"`}},
		{name: "null finish", in: `{"choices":[{"message":{"content":"x"},"finish_reason":null}]}`, want: map[string]string{"stop_reason": `"end_turn"`, "usage.input_tokens": `0`}},
		{name: "empty message", in: `{"choices":[{"message":{}}]}`, want: map[string]string{"content": `[]`}},
		{name: "content parts", in: `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}`,
			want: map[string]string{"content": `[{"type":"text","text":"ab"}]`}},
		{name: "inconsistent usage is clamped", in: `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}}}`,
			want: map[string]string{"usage.input_tokens": `0`, "usage.cache_read_input_tokens": `5`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ResponseFromChat([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, out, tc.want)
		})
	}
}

func TestResponseErrors(t *testing.T) {
	tests := []struct {
		name string
		fn   func([]byte) ([]byte, error)
		in   string
	}{
		{"to chat: not json", ResponseToChat, `{`},
		{"to chat: array", ResponseToChat, `[]`},
		{"to chat: error body", ResponseToChat, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"to chat: content object", ResponseToChat, `{"content":{}}`},
		{"to chat: block not object", ResponseToChat, `{"content":[1]}`},
		{"to chat: tool id number", ResponseToChat, `{"content":[{"type":"tool_use","id":5}]}`},
		{"from chat: not json", ResponseFromChat, `x`},
		{"from chat: no choices", ResponseFromChat, `{"choices":[]}`},
		{"from chat: choices missing", ResponseFromChat, `{"id":"x"}`},
		{"from chat: error body", ResponseFromChat, `{"error":{"message":"bad key","type":"invalid_request_error"}}`},
		{"from chat: message not object", ResponseFromChat, `{"choices":[{"message":"hi"}]}`},
		{"from chat: tool_calls object", ResponseFromChat, `{"choices":[{"message":{"tool_calls":{}}}]}`},
		{"from chat: content number", ResponseFromChat, `{"choices":[{"message":{"content":3}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.fn([]byte(tc.in))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want *InputError, got %v", err)
			}
		})
	}
}
