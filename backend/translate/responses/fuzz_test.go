package responses

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/sse"
)

func FuzzRequestToChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","instructions":"i","input":"hi","stream":true}`,
		`{"input":[{"role":"developer","content":[{"type":"input_text","text":"d"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"t"},{"type":"input_image","image_url":"data:x"}]},{"type":"reasoning","summary":[]}]}`,
		`{"input":"x","tools":[{"type":"function","name":"f","parameters":{}},{"type":"custom","name":"p","format":{"type":"grammar","syntax":"lark","definition":"s"}},{"type":"web_search"}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"f"}]},"parallel_tool_calls":true}`,
		`{"input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"},"strict":true}},"reasoning":{"effort":"high"},"max_output_tokens":5,"temperature":1,"top_p":0.5,"user":"u"}`,
		`{"input":[{"role":"user","content":[{"type":"input_file","file_data":"x"},{"type":"input_audio","input_audio":{}},{"type":"refusal","refusal":"r"}]}]}`,
		`{"previous_response_id":"resp_1"}`, `{"input":[{"type":"custom_tool_call","call_id":"c","name":"p","input":"x"}]}`,
		`null`, `[]`, `"x"`, `{"input":{}}`, `{"tools":"x","tool_choice":{"type":"function"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := RequestToChat(body)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %s", out)
		}
		if m := gjson.GetBytes(out, "messages"); !m.IsArray() {
			t.Fatalf("no messages array: %s", out)
		}
	})
}

func FuzzResponseFromChat(f *testing.F) {
	for _, s := range [][2]string{
		{`{"model":"m","created":1,"choices":[{"message":{"content":"hi","reasoning_content":"r","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`, `{"model":"m","tools":[{"type":"custom","name":"f"}],"instructions":"i"}`},
		{`{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"refusal":"no","function_call":{"name":"g"}},"finish_reason":"content_filter"}]}`, `{}`},
		{`{"error":{"message":"x","code":1}}`, ``},
		{`{"choices":"x","usage":"y"}`, `{"tools":{},"text":1,"metadata":[]}`},
		{`[]`, `null`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, body, req []byte) {
		out, err := ResponseFromChat(body, req)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %s", out)
		}
		r := gjson.ParseBytes(out)
		if r.Get("object").Str != "response" || !r.Get("output").IsArray() {
			t.Fatalf("not a response object: %s", out)
		}
	})
}

// FuzzStreamFromChat feeds arbitrary upstream chunks through the translator,
// one per line of upstream ("!" at the start of a line makes it an SSE error
// event): no panic, and the client stream stays well formed (valid JSON,
// strictly increasing sequence numbers, a terminal event only when complete).
func FuzzStreamFromChat(f *testing.F) {
	c := func(delta string) string {
		return `{"model":"m","choices":[{"index":0,"delta":` + delta + `}]}` + "\n"
	}
	for _, s := range [][2]string{
		{c(`{"content":"hi"}`) + c(`{"reasoning_content":"r"}`) + `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n[DONE]", `{"model":"m"}`},
		{c(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}`) + c(`{"tool_calls":[{"index":1,"function":{"arguments":"x"}},{"function":{"name":"g"}}]}`) + `{"choices":[{"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3}}`, `{"tools":[{"type":"custom","name":"f"}]}`},
		{c(`{"refusal":"no","content":"a"}`) + c(`{"function_call":{"name":"h","arguments":"1"}}`) + `!{"error":{}}`, ``},
		{c(`{"content":null,"tool_calls":"x"}`) + `{"choices":[{"finish_reason":"tool_calls"}]}` + "\n" + c(`{"reasoning":"late"}`), `[]`},
		{c(`{"tool_calls":[{"index":0,"id":"x","function":{"name":"f"}}]}`) + c(`{"tool_calls":[{"index":0,"id":"y","function":{"name":"f","arguments":"1"}}]}`) + c(`{"content":"t"}`) + `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"2"}}]},"finish_reason":"content_filter"}]}`, `{}`},
		{`{"error":"x"}`, `{}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, upstream, req []byte) {
		s := NewStreamFromChat("m", req)
		var out []byte
		failed := false
		for _, line := range bytes.Split(upstream, []byte("\n")) {
			ev := sse.Event{Data: line}
			if len(line) > 0 && line[0] == '!' {
				ev = sse.Event{Event: "error", Data: line[1:]}
			}
			var err error
			if out, err = s.Event(out, ev); err != nil {
				failed = true
				break
			}
		}
		if failed && s.Complete() {
			t.Fatal("complete after an error")
		}
		if s.Complete() {
			out = s.End(out)
		}
		_ = s.Usage()
		var cp sse.Parser
		seq := 0
		terminal := false
		bad := ""
		_ = cp.Feed(out, func(ev sse.Event) bool {
			r := gjson.ParseBytes(ev.Data)
			switch {
			case !json.Valid(ev.Data):
				bad = "invalid JSON " + string(ev.Data)
			case r.Get("type").Str != ev.Event:
				bad = "name/type mismatch " + string(ev.Data)
			case int(r.Get("sequence_number").Int()) != seq:
				bad = "sequence gap " + string(ev.Data)
			case terminal:
				bad = "event after the terminal event"
			}
			if ev.Event == "response.completed" || ev.Event == "response.incomplete" {
				terminal = true
			}
			seq++
			return bad == ""
		})
		if bad != "" {
			t.Fatal(bad)
		}
		if terminal && !s.Complete() {
			t.Fatal("terminal event without completion")
		}
	})
}
