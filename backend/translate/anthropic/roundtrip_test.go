package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

// normAnthropicMessages puts Anthropic messages in a canonical form: string
// content as one text block, single-text tool_result content as a string.
func normAnthropicMessages(t *testing.T, raw string) []any {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(raw), &msgs); err != nil {
		t.Fatalf("messages: %v", err)
	}
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		if s, ok := m["content"].(string); ok {
			m["content"] = []any{map[string]any{"type": "text", "text": s}}
		}
		for _, b := range m["content"].([]any) {
			blk := b.(map[string]any)
			delete(blk, "cache_control")
			if parts, ok := blk["content"].([]any); ok && len(parts) == 1 {
				if p := parts[0].(map[string]any); p["type"] == "text" {
					blk["content"] = p["text"]
				}
			}
		}
		out = append(out, m)
	}
	return out
}

func TestRoundTripAnthropicRequest(t *testing.T) {
	in := `{"model":"claude-sonnet-4-5","max_tokens":8000,"temperature":0.3,"top_p":0.9,"stop_sequences":["END"],"stream":true,
		"metadata":{"user_id":"user_abc"},
		"system":"You are a coding agent.",
		"tools":[{"name":"Read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
			{"name":"Bash","description":"Run","input_schema":{"type":"object","properties":{"cmd":{"type":"string"}}}}],
		"tool_choice":{"type":"auto","disable_parallel_tool_use":true},
		"messages":[
			{"role":"user","content":[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"Fix the bug"}]},
			{"role":"assistant","content":[{"type":"text","text":"Reading both."},
				{"type":"tool_use","id":"toolu_01XYZ","name":"Read","input":{"path":"a.go"}},
				{"type":"tool_use","id":"toolu_02XYZ","name":"Bash","input":{"cmd":"go test ./...","nested":{"deep":[1,2,{"x":null}]}}}]},
			{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_01XYZ","content":"package a"},
				{"type":"tool_result","tool_use_id":"toolu_02XYZ","content":[{"type":"text","text":"FAIL"}]},
				{"type":"text","text":"go on"}]},
			{"role":"assistant","content":"Done."},
			{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},{"type":"text","text":"and this?"}]}]}`
	chat, err := RequestToChat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	back, err := RequestFromChat(chat)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"model", "max_tokens", "temperature", "top_p", "stop_sequences", "stream", "metadata", "system", "tools", "tool_choice"} {
		if !sameJSON(t, gjson.Get(in, p).Raw, gjson.GetBytes(back, p).Raw) {
			t.Errorf("%s: %s → %s", p, gjson.Get(in, p).Raw, gjson.GetBytes(back, p).Raw)
		}
	}
	want := normAnthropicMessages(t, gjson.Get(in, "messages").Raw)
	got := normAnthropicMessages(t, gjson.GetBytes(back, "messages").Raw)
	if !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		t.Fatalf("messages changed:\nwant %s\ngot  %s\nvia  %s", w, g, chat)
	}
}

func TestRoundTripChatRequest(t *testing.T) {
	in := `{"model":"gpt-4.1","max_tokens":2000,"temperature":0.7,"top_p":0.8,"stop":["###"],"stream":true,"stream_options":{"include_usage":true},"user":"u1",
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],
		"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":false,
		"messages":[
			{"role":"system","content":"Be terse."},
			{"role":"user","content":"Weather in Paris and Oslo?"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"call_P","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
				{"id":"call_O","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
			{"role":"tool","tool_call_id":"call_P","content":"18C"},
			{"role":"tool","tool_call_id":"call_O","content":"4C"},
			{"role":"assistant","content":"Paris 18C, Oslo 4C."},
			{"role":"user","content":[{"type":"text","text":"Map?"},{"type":"image_url","image_url":{"url":"https://example.com/m.png"}}]}]}`
	anth, err := RequestFromChat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	back, err := RequestToChat(anth)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"model", "max_tokens", "temperature", "top_p", "stop", "stream", "stream_options", "user", "tools", "tool_choice", "parallel_tool_calls", "messages"} {
		if !sameJSON(t, gjson.Get(in, p).Raw, gjson.GetBytes(back, p).Raw) {
			t.Errorf("%s:\n in  %s\n out %s\nvia %s", p, gjson.Get(in, p).Raw, gjson.GetBytes(back, p).Raw, anth)
		}
	}
}

// TestRoundTripReasoningEffort: every effort survives Chat → Anthropic → Chat.
func TestRoundTripReasoningEffort(t *testing.T) {
	for _, effort := range []string{"low", "medium", "high"} {
		t.Run(effort, func(t *testing.T) {
			anth, err := RequestFromChat([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"` + effort + `"}`))
			if err != nil {
				t.Fatal(err)
			}
			back, err := RequestToChat(anth)
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(back, "reasoning_effort").String(); got != effort {
				t.Fatalf("effort %s came back as %q (via %s)", effort, got, anth)
			}
		})
	}
}

func TestRoundTripAnthropicResponse(t *testing.T) {
	tests := []struct{ name, in string }{
		{"text end_turn", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Hi there"}],
			"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":11,"cache_creation_input_tokens":22,"cache_read_input_tokens":33,"output_tokens":44}}`},
		{"thinking and tools", `{"id":"msg_2","type":"message","role":"assistant","model":"claude-x","content":[
			{"type":"thinking","thinking":"plan","signature":""},{"type":"text","text":"Calling."},
			{"type":"tool_use","id":"toolu_A","name":"f","input":{"a":[1,{"b":"c"}]}},{"type":"tool_use","id":"toolu_B","name":"g","input":{}}],
			"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":7}}`},
		{"max_tokens", `{"id":"msg_3","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"trunc"}],
			"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}`},
		{"refusal", `{"id":"msg_4","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"no"}],
			"stop_reason":"refusal","stop_sequence":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chat, err := ResponseToChat([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			back, err := ResponseFromChat(chat)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, tc.in, string(back)) {
				t.Fatalf("round trip changed the response:\n in  %s\n out %s\nvia %s", tc.in, back, chat)
			}
		})
	}
}

func TestRoundTripChatResponse(t *testing.T) {
	tests := []struct{ name, in string }{
		{"text stop", `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","refusal":null,"content":"Hello"},"logprobs":null,"finish_reason":"stop"}],
			"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64}}}`},
		{"tool calls", `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","refusal":null,"content":null,"reasoning_content":"why",
			"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{not json"}}]},
			"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0}}}`},
		{"length with cache writes", `{"id":"chatcmpl-3","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","refusal":null,"content":"tr"},"logprobs":null,"finish_reason":"length"}],
			"usage":{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55,"prompt_tokens_details":{"cached_tokens":10,"cache_write_tokens":30}}}`},
		{"content_filter", `{"id":"chatcmpl-4","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","refusal":null,"content":"no"},"logprobs":null,"finish_reason":"content_filter"}],
			"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			anth, err := ResponseFromChat([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			back, err := ResponseToChat(anth)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"id", "model", "choices", "usage"} {
				if !sameJSON(t, gjson.Get(tc.in, p).Raw, gjson.GetBytes(back, p).Raw) {
					t.Errorf("%s:\n in  %s\n out %s\nvia %s", p, gjson.Get(tc.in, p).Raw, gjson.GetBytes(back, p).Raw, anth)
				}
			}
		})
	}
}
