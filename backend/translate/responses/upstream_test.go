package responses

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/sse"
)

func TestRequestFromChat(t *testing.T) {
	in := `{"model":"gpt-5-codex","stream":true,"max_tokens":100,"temperature":0.5,"reasoning_effort":"high","parallel_tool_calls":false,
	"messages":[
	 {"role":"system","content":"Be brief."},
	 {"role":"developer","content":[{"type":"text","text":"Use tools."}]},
	 {"role":"user","content":[{"type":"text","text":"weather?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA","detail":"low"}}]},
	 {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
	 {"role":"tool","tool_call_id":"call_1","content":"sunny"},
	 {"role":"assistant","content":"It is sunny."}],
	"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object"}}}],
	"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`
	got, err := RequestFromChat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, got, `{"model":"gpt-5-codex","stream":true,"max_output_tokens":100,"temperature":0.5,
	"reasoning":{"effort":"high","summary":"auto"},"parallel_tool_calls":false,
	"instructions":"Be brief.\n\nUse tools.",
	"input":[
	 {"type":"message","role":"user","content":[{"type":"input_text","text":"weather?"},{"type":"input_image","image_url":"data:image/png;base64,AA","detail":"low"}]},
	 {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
	 {"type":"function_call_output","call_id":"call_1","output":"sunny"},
	 {"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is sunny."}]}],
	"tools":[{"type":"function","name":"get_weather","description":"Weather","parameters":{"type":"object"}}],
	"tool_choice":{"type":"function","name":"get_weather"}}`)
}

func TestRequestFromChatRefusesBadInput(t *testing.T) {
	for _, in := range []string{`not json`, `[1]`, `{"messages":[{"role":"wizard","content":"x"}]}`} {
		var fe *FieldError
		if _, err := RequestFromChat([]byte(in)); !errors.As(err, &fe) {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestResponseToChat(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"text with reasoning and usage", `{"id":"resp_1","object":"response","created_at":7,"model":"m","status":"completed","output":[
		  {"type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}]},
		  {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"},{"type":"output_text","text":"!"}]}],
		  "usage":{"input_tokens":3,"output_tokens":2,"output_tokens_details":{"reasoning_tokens":1}}}`,
			`{"id":"chatcmpl-1","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,
			 "message":{"role":"assistant","refusal":null,"content":"Hi!","reasoning_content":"hmm"},"logprobs":null,"finish_reason":"stop"}],
			 "usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"completion_tokens_details":{"reasoning_tokens":1}}}`},
		{"function and custom calls", `{"id":"resp_2","object":"response","created_at":1,"model":"m","status":"completed","output":[
		  {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
		  {"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** patch"}]}`,
			`{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,
			 "message":{"role":"assistant","refusal":null,"content":null,"tool_calls":[
			  {"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},
			  {"id":"c2","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** patch\"}"}}]},
			 "logprobs":null,"finish_reason":"tool_calls"}]}`},
		{"incomplete", `{"id":"resp_3","object":"response","created_at":1,"model":"m","status":"incomplete",
		  "incomplete_details":{"reason":"max_output_tokens"},"output":[]}`,
			`{"id":"chatcmpl-3","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,
			 "message":{"role":"assistant","refusal":null,"content":""},"logprobs":null,"finish_reason":"length"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResponseToChat([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, got, c.want)
		})
	}
	var ue *UpstreamError
	if _, err := ResponseToChat([]byte(`{"object":"response","status":"failed","error":{"code":"server_error","message":"boom"}}`)); !errors.As(err, &ue) || ue.Code != "server_error" {
		t.Fatalf("failed response: %v", err)
	}
}

// streamChat feeds Responses events and returns the Chat chunks' data lines.
func streamChat(t *testing.T, events []string) ([]gjson.Result, *StreamToChat, error) {
	t.Helper()
	s := NewStreamToChat("m").(*StreamToChat)
	var out []byte
	var err error
	for _, e := range events {
		if out, err = s.Event(out, sse.Event{Data: []byte(e)}); err != nil {
			break
		}
	}
	var chunks []gjson.Result
	var p sse.Parser
	_ = p.Feed(out, func(ev sse.Event) bool {
		if ev.IsDone() {
			chunks = append(chunks, gjson.Parse(`"[DONE]"`))
		} else {
			chunks = append(chunks, gjson.ParseBytes(append([]byte(nil), ev.Data...)))
		}
		return true
	})
	return chunks, s, err
}

func TestStreamToChatText(t *testing.T) {
	chunks, s, err := streamChat(t, []string{
		`{"type":"response.created","response":{"id":"resp_9","created_at":5,"model":"gpt-5"}}`,
		`{"type":"response.reasoning_summary_text.delta","delta":"think"}`,
		`{"type":"response.output_text.delta","delta":"Hel"}`,
		`{"type":"response.output_text.delta","delta":"lo"}`,
		`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":4,"output_tokens":2}}}`,
		`{"type":"response.output_text.delta","delta":"after the end"}`,
	})
	if err != nil || !s.Complete() {
		t.Fatalf("err %v complete %v", err, s.Complete())
	}
	var text, reasoning strings.Builder
	for _, c := range chunks[:len(chunks)-1] {
		if c.Get("id").String() != "chatcmpl-9" || c.Get("model").String() != "gpt-5" || c.Get("object").String() != "chat.completion.chunk" {
			t.Fatalf("chunk %s", c.Raw)
		}
		text.WriteString(c.Get("choices.0.delta.content").String())
		reasoning.WriteString(c.Get("choices.0.delta.reasoning_content").String())
	}
	if text.String() != "Hello" || reasoning.String() != "think" {
		t.Fatalf("text %q reasoning %q", text.String(), reasoning.String())
	}
	n := len(chunks)
	if chunks[n-3].Get("choices.0.finish_reason").String() != "stop" || chunks[n-2].Get("usage.total_tokens").Int() != 6 || chunks[n-1].String() != "[DONE]" {
		t.Fatalf("closing chunks %v", chunks[n-3:])
	}
	if u := s.Usage(); u.InputTokens != 4 || u.OutputTokens != 2 {
		t.Fatalf("usage %+v", u)
	}
}

func TestStreamToChatToolCalls(t *testing.T) {
	chunks, _, err := streamChat(t, []string{
		`{"type":"response.created","response":{"id":"resp_1","model":"m"}}`,
		`{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather"}}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"city\":"}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"\"Paris\"}"}`,
		`{"type":"response.output_item.added","item":{"type":"custom_tool_call","id":"ct_1","call_id":"call_2","name":"apply_patch"}}`,
		`{"type":"response.custom_tool_call_input.delta","item_id":"ct_1","delta":"line \"1\"\n"}`,
		`{"type":"response.output_item.done","item":{"type":"custom_tool_call","id":"ct_1"}}`,
		`{"type":"response.completed","response":{"status":"completed"}}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	args := map[int64]string{}
	names := map[int64]string{}
	finish := ""
	for _, c := range chunks {
		c.Get("choices.0.delta.tool_calls").ForEach(func(_, tc gjson.Result) bool {
			i := tc.Get("index").Int()
			args[i] += tc.Get("function.arguments").String()
			if n := tc.Get("function.name").String(); n != "" {
				names[i] = n
			}
			return true
		})
		if f := c.Get("choices.0.finish_reason").String(); f != "" {
			finish = f
		}
	}
	if names[0] != "get_weather" || args[0] != `{"city":"Paris"}` || names[1] != "apply_patch" || finish != "tool_calls" {
		t.Fatalf("names %v args %v finish %q", names, args, finish)
	}
	if gjson.Get(args[1], "input").String() != "line \"1\"\n" {
		t.Fatalf("custom tool input not a JSON string argument: %s", args[1])
	}
}

func TestStreamToChatFailureIsAnError(t *testing.T) {
	_, s, err := streamChat(t, []string{
		`{"type":"response.created","response":{"id":"resp_1"}}`,
		`{"type":"response.failed","response":{"error":{"code":"rate_limit_exceeded","message":"slow down"}}}`,
	})
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Code != "rate_limit_exceeded" || s.Complete() {
		t.Fatalf("err %v complete %v", err, s.Complete())
	}
	// A stream that just stops is not complete.
	_, s, _ = streamChat(t, []string{`{"type":"response.output_text.delta","delta":"x"}`})
	if s.Complete() {
		t.Fatal("a stream without response.completed claimed completion")
	}
}
