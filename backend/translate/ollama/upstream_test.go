package ollama

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestRequestFromChat(t *testing.T) {
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
	in := `{"model":"llama3.2","stream":true,"max_tokens":64,"temperature":0.2,"stop":["X"],"reasoning_effort":"high",
		"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"}}},
		"messages":[
		{"role":"developer","content":"be brief"},
		{"role":"user","content":[{"type":"text","text":"what is "},{"type":"text","text":"this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + png + `"}}]},
		{"role":"assistant","content":null,"reasoning_content":"hmm","tool_calls":[{"id":"c1","type":"function","function":{"name":"look","arguments":"{\"x\":1}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"L"}],
		"tools":[{"type":"function","function":{"name":"look","parameters":{"type":"object"}}}]}`
	out, err := RequestFromChat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	r := gjson.ParseBytes(out)
	checks := map[string]string{
		"model": "llama3.2", "stream": "true", "think": "high", "format": `{"type":"object"}`,
		"options.num_predict": "64", "options.temperature": "0.2", "options.stop": `["X"]`,
		"messages.0.role": "system", "messages.0.content": "be brief",
		"messages.1.content": "what is this?", "messages.1.images.0": png,
		"messages.2.thinking": "hmm", "messages.2.tool_calls.0.function.name": "look", "messages.2.tool_calls.0.function.arguments": `{"x":1}`,
		"messages.3.role": "tool", "messages.3.tool_name": "look", "messages.3.content": "L",
		"tools.0.function.name": "look",
	}
	for path, want := range checks {
		if got := r.Get(path).Raw; got != want && r.Get(path).String() != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if r.Get("messages.2.tool_calls.0.function.arguments").Type != gjson.JSON {
		t.Errorf("tool call arguments must be an object: %s", r.Get("messages.2.tool_calls.0.function.arguments").Raw)
	}
}

func TestRequestFromChatRefusals(t *testing.T) {
	cases := []struct{ name, body, field string }{
		{"image by URL", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, "messages[0].content"},
		{"arguments not an object", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[0].tool_calls"},
	}
	for _, c := range cases {
		_, err := RequestFromChat([]byte(c.body))
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%s: %v, want an InputError on %s", c.name, err, c.field)
		}
	}
}

func TestResponseToChat(t *testing.T) {
	cases := []struct {
		name, body string
		want       map[string]string
	}{
		{"text", `{"model":"llama3.2","created_at":"x","message":{"role":"assistant","content":"hi","thinking":"t"},"done":true,"done_reason":"stop","prompt_eval_count":7,"eval_count":3}`,
			map[string]string{"choices.0.message.content": "hi", "choices.0.message.reasoning_content": "t", "choices.0.finish_reason": "stop",
				"usage.prompt_tokens": "7", "usage.completion_tokens": "3", "usage.total_tokens": "10", "model": "llama3.2", "object": "chat.completion"}},
		{"length", `{"model":"m","message":{"role":"assistant","content":"cut"},"done":true,"done_reason":"length"}`,
			map[string]string{"choices.0.finish_reason": "length"}},
		{"tool calls", `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get","arguments":{"city":"Paris"}}}]},"done":true,"done_reason":"stop"}`,
			map[string]string{"choices.0.finish_reason": "tool_calls", "choices.0.message.tool_calls.0.id": "call_0",
				"choices.0.message.tool_calls.0.function.name": "get", "choices.0.message.tool_calls.0.function.arguments": `{"city":"Paris"}`}},
	}
	for _, c := range cases {
		out, err := ResponseToChat([]byte(c.body), "id1", "asked", 100)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := gjson.ParseBytes(out)
		for path, want := range c.want {
			if got := r.Get(path).String(); got != want {
				t.Errorf("%s: %s = %q, want %q", c.name, path, got, want)
			}
		}
	}
	for _, bad := range []string{`{"error":"model \"x\" not found"}`, `{"model":"m","message":{"content":"half"},"done":false}`, `{"model":`} {
		if _, err := ResponseToChat([]byte(bad), "i", "m", 0); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// readAll drains an SSE reader, returning what it produced and how it ended.
func readAll(body string) (string, error) {
	r := NewSSEReader(io.NopCloser(strings.NewReader(body)), "id", "m", 1)
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}

func TestSSEReader(t *testing.T) {
	stream := `{"model":"m","message":{"role":"assistant","content":"","thinking":"th"},"done":false}
{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}

{"model":"m","message":{"role":"assistant","content":"lo"},"done":false}
{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get","arguments":{"a":1}}}]},"done":false}
{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}
`
	out, err := readAll(stream)
	if err != nil {
		t.Fatal(err)
	}
	var text, thinking, finish string
	var calls []gjson.Result
	var usage gjson.Result
	events := strings.Split(strings.TrimSpace(out), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("no [DONE] at the end: %q", out)
	}
	for i, ev := range events[:len(events)-1] {
		d := gjson.Parse(strings.TrimPrefix(ev, "data: "))
		if d.Get("object").String() != "chat.completion.chunk" || d.Get("id").String() != "id" {
			t.Fatalf("event %d: %s", i, ev)
		}
		if i == 0 && d.Get("choices.0.delta.role").String() != "assistant" {
			t.Errorf("the first chunk has no role: %s", ev)
		}
		text += d.Get("choices.0.delta.content").String()
		thinking += d.Get("choices.0.delta.reasoning_content").String()
		calls = append(calls, d.Get("choices.0.delta.tool_calls").Array()...)
		if f := d.Get("choices.0.finish_reason").String(); f != "" {
			finish = f
		}
		if d.Get("usage").Exists() {
			usage = d.Get("usage")
		}
	}
	if text != "Hello" || thinking != "th" || finish != "tool_calls" || len(calls) != 1 ||
		calls[0].Get("function.arguments").String() != `{"a":1}` || calls[0].Get("index").Int() != 0 || calls[0].Get("id").String() != "call_0" ||
		usage.Get("prompt_tokens").Int() != 5 || usage.Get("completion_tokens").Int() != 2 {
		t.Fatalf("text %q thinking %q finish %q calls %v usage %s", text, thinking, finish, calls, usage.Raw)
	}
}

func TestSSEReaderNeverEndsCleanWithoutDone(t *testing.T) {
	cases := []struct {
		name, body string
		wantErr    error
		wantEvent  string
	}{
		{"truncated", `{"model":"m","message":{"content":"Hel"},"done":false}` + "\n", ErrTruncated, ""},
		{"empty", ``, ErrTruncated, ""},
		{"not JSON", "{\"model\":\"m\",\"message\":{\"content\":\"a\"},\"done\":false}\nnot json\n", nil, ""},
		{"error line", `{"error":"llama runner process has terminated"}` + "\n", nil, `"llama runner process has terminated"`},
	}
	for _, c := range cases {
		out, err := readAll(c.body)
		switch {
		case c.wantEvent != "":
			if err != nil || !strings.Contains(out, c.wantEvent) || !strings.Contains(out, `"error"`) {
				t.Errorf("%s: %q %v", c.name, out, err)
			}
		case err == nil:
			t.Errorf("%s: ended cleanly: %q", c.name, out)
		case c.wantErr != nil && !errors.Is(err, c.wantErr):
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
		}
		if strings.Contains(out, "[DONE]") {
			t.Errorf("%s: [DONE] after a broken stream: %q", c.name, out)
		}
	}
}

func TestEmbedConversions(t *testing.T) {
	req, err := EmbedRequestFromOpenAI([]byte(`{"model":"nomic-embed-text","input":["a","b"],"dimensions":8}`))
	if err != nil || gjson.GetBytes(req, "input.1").String() != "b" || gjson.GetBytes(req, "dimensions").Int() != 8 {
		t.Fatalf("%s %v", req, err)
	}
	if _, err := EmbedRequestFromOpenAI([]byte(`{"model":"m","input":[[1,2]]}`)); err == nil {
		t.Fatal("token arrays accepted")
	}
	out, err := EmbedResponseToOpenAI([]byte(`{"model":"nomic-embed-text","embeddings":[[0.1,0.2],[0.3,0.4]],"prompt_eval_count":4}`))
	if err != nil || gjson.GetBytes(out, "data.1.embedding.1").Float() != 0.4 || gjson.GetBytes(out, "data.1.index").Int() != 1 ||
		gjson.GetBytes(out, "usage.prompt_tokens").Int() != 4 || gjson.GetBytes(out, "object").String() != "list" {
		t.Fatalf("%s %v", out, err)
	}
}
