package ollama

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate/sse"
)

var fixed = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

func now() time.Time { return fixed }

func TestChatToChat(t *testing.T) {
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
	in := `{"model":"llama3.2","messages":[
		{"role":"system","content":"be brief"},
		{"role":"user","content":"what is this?","images":["` + png + `"]},
		{"role":"assistant","content":"","thinking":"hmm","tool_calls":[{"function":{"name":"look","arguments":{"x":1}}},{"function":{"name":"peek","arguments":{}}}]},
		{"role":"tool","tool_name":"peek","content":"P"},
		{"role":"tool","content":"L"}],
		"tools":[{"type":"function","function":{"name":"look","parameters":{"type":"object"}}}],
		"format":"json","think":"high",
		"options":{"temperature":0.5,"num_predict":100,"stop":["x"],"top_k":40,"seed":7}}`
	out, err := ChatToChat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	c := gjson.ParseBytes(out)
	checks := map[string]string{
		"messages.0.content":                         "be brief",
		"messages.1.content.0.text":                  "what is this?",
		"messages.2.reasoning_content":               "hmm",
		"messages.2.tool_calls.0.function.name":      "look",
		"messages.2.tool_calls.0.function.arguments": `{"x":1}`,
		"messages.3.tool_call_id":                    c.Get("messages.2.tool_calls.1.id").String(), // by name
		"messages.4.tool_call_id":                    c.Get("messages.2.tool_calls.0.id").String(), // the one left
		"response_format.type":                       "json_object",
		"reasoning_effort":                           "high",
		"max_tokens":                                 "100",
		"temperature":                                "0.5",
		"seed":                                       "7",
		"stop.0":                                     "x",
		"stream":                                     "true",
		"tools.0.function.name":                      "look",
	}
	for path, want := range checks {
		if got := c.Get(path).String(); got != want {
			t.Errorf("%s = %q, want %q\n%s", path, got, want, out)
		}
	}
	if u := c.Get("messages.1.content.1.image_url.url").String(); !strings.HasPrefix(u, "data:image/png;base64,"+png[:8]) {
		t.Errorf("image url %q", u)
	}
	if c.Get("top_k").Exists() || c.Get("options").Exists() {
		t.Errorf("unknown options leaked: %s", out)
	}
	if c.Get("messages.2.tool_calls.0.id").String() == c.Get("messages.2.tool_calls.1.id").String() {
		t.Error("tool call ids repeat")
	}
	for _, bad := range []string{
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`,
		`{"model":"m","messages":[],"format":5}`,
	} {
		if _, err := ChatToChat([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	out, _ = ChatToChat([]byte(`{"model":"m","messages":[],"stream":false,"options":{"num_predict":-1},"format":{"type":"object"}}`))
	c = gjson.ParseBytes(out)
	if c.Get("stream").Bool() || c.Get("max_tokens").Exists() || c.Get("response_format.json_schema.schema.type").String() != "object" {
		t.Errorf("%s", out)
	}
}

func TestGenerateToChat(t *testing.T) {
	out, err := GenerateToChat([]byte(`{"model":"m","prompt":"hi","system":"sys","stream":false}`))
	if err != nil {
		t.Fatal(err)
	}
	c := gjson.ParseBytes(out)
	if c.Get("messages.0.role").String() != "system" || c.Get("messages.1.content").String() != "hi" || c.Get("stream").Bool() {
		t.Fatalf("%s", out)
	}
	if _, err := GenerateToChat([]byte(`{"model":"m","prompt":"a","suffix":"b"}`)); !errors.Is(err, ErrSuffix) {
		t.Fatalf("suffix: %v", err)
	}
}

func TestResponseFromChat(t *testing.T) {
	chat := `{"model":"up","choices":[{"message":{"role":"assistant","content":"Hi","reasoning_content":"r","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`
	out, err := ResponseFromChat([]byte(chat), Chat, fixed)
	if err != nil {
		t.Fatal(err)
	}
	r := gjson.ParseBytes(out)
	if r.Get("message.content").String() != "Hi" || r.Get("message.thinking").String() != "r" || r.Get("message.tool_calls.0.function.arguments.a").Int() != 1 ||
		r.Get("done_reason").String() != "length" || r.Get("prompt_eval_count").Int() != 3 || r.Get("eval_count").Int() != 2 ||
		r.Get("created_at").String() != "2026-12-04T10:00:00Z" || !r.Get("done").Bool() || r.Get("model").String() != "up" {
		t.Fatalf("%s", out)
	}
	out, _ = ResponseFromChat([]byte(chat), Generate, fixed)
	if gjson.GetBytes(out, "response").String() != "Hi" || gjson.GetBytes(out, "message").Exists() {
		t.Fatalf("generate: %s", out)
	}
	if _, err := ResponseFromChat([]byte(`{"choices":[]}`), Chat, fixed); err == nil {
		t.Fatal("no choices: no error")
	}
}

func lines(t *testing.T, b []byte) []gjson.Result {
	t.Helper()
	var out []gjson.Result
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if !jsonv.Valid(sc.Bytes()) {
			t.Fatalf("not JSON: %q", sc.Bytes())
		}
		out = append(out, gjson.Parse(sc.Text()))
	}
	return out
}

func TestStreamFromChat(t *testing.T) {
	tr := NewStreamFromChat("asked", Chat, now)
	var dst []byte
	for _, ev := range []string{
		`{"model":"up","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"lo"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":2}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":4}}`,
		`[DONE]`,
	} {
		var err error
		if dst, err = tr.Event(dst, sse.Event{Data: []byte(ev)}); err != nil {
			t.Fatal(err)
		}
	}
	dst = tr.End(dst)
	ls := lines(t, dst)
	if len(ls) != 5 {
		t.Fatalf("%d lines:\n%s", len(ls), dst)
	}
	if ls[0].Get("message.thinking").String() != "think" || ls[1].Get("message.content").String() != "Hel" || ls[1].Get("model").String() != "up" {
		t.Errorf("pieces:\n%s", dst)
	}
	if ls[3].Get("message.tool_calls.0.function.arguments.a").Int() != 2 {
		t.Errorf("tool call line %s", ls[3].Raw)
	}
	last := ls[4]
	if !last.Get("done").Bool() || last.Get("eval_count").Int() != 4 || last.Get("prompt_eval_count").Int() != 5 || last.Get("done_reason").String() != "stop" {
		t.Errorf("done line %s", last.Raw)
	}
	// Cut before the finish: not complete, no done line.
	tr = NewStreamFromChat("m", Generate, now)
	dst, _ = tr.Event(nil, sse.Event{Data: []byte(`{"choices":[{"index":0,"delta":{"content":"x"}}]}`)})
	if tr.Complete() || strings.Contains(string(tr.End(dst)), `"done":true`) {
		t.Errorf("cut stream ended as done")
	}
	if !strings.Contains(string(dst), `"response":"x"`) {
		t.Errorf("generate piece: %s", dst)
	}
}

func TestEmbed(t *testing.T) {
	req, err := EmbedRequestToOpenAI([]byte(`{"model":"e","input":["a","b"],"truncate":true,"keep_alive":"5m","dimensions":4}`))
	if err != nil || gjson.GetBytes(req, "truncate").Exists() || gjson.GetBytes(req, "input.1").String() != "b" || gjson.GetBytes(req, "dimensions").Int() != 4 {
		t.Fatalf("%s %v", req, err)
	}
	out, err := EmbedResponseFromOpenAI([]byte(`{"model":"e","data":[{"embedding":[0.1,0.2]},{"embedding":[0.3,0.4]}],"usage":{"prompt_tokens":2}}`))
	if err != nil || gjson.GetBytes(out, "embeddings.1.0").Float() != 0.3 || gjson.GetBytes(out, "prompt_eval_count").Int() != 2 {
		t.Fatalf("%s %v", out, err)
	}
	for _, bad := range []string{`{"data":5}`, `{"data":[{"embedding":"x"}]}`, `{`} {
		if _, err := EmbedResponseFromOpenAI([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// FuzzOllama: untrusted request and answer bytes never panic, and every
// translation that succeeds writes valid JSON (lines, for streams).
func FuzzOllama(f *testing.F) {
	for _, s := range []string{`{"model":"m","messages":[{"role":"user","content":"x","images":["aGk="]}]}`,
		`{"model":"m","prompt":"p","options":{"num_predict":3}}`, `{"choices":[{"message":{"content":"x","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{"}}]},"finish_reason":"stop"}]}`, `{"data":[{"embedding":[1]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if jsonv.CheckRequest(b) == nil {
			for _, fn := range []func([]byte) ([]byte, error){ChatToChat, GenerateToChat, EmbedRequestToOpenAI} {
				if out, err := fn(b); err == nil && !jsonv.Valid(out) {
					t.Fatalf("request %q → invalid %q", b, out)
				}
			}
		}
		for _, k := range []Kind{Chat, Generate} {
			if out, err := ResponseFromChat(b, k, fixed); err == nil && !jsonv.Valid(out) {
				t.Fatalf("answer %q → invalid %q", b, out)
			}
			tr := NewStreamFromChat("m", k, now)
			if out, err := tr.Event(nil, sse.Event{Data: b}); err == nil {
				lines(t, tr.End(out))
			}
		}
		if out, err := EmbedResponseFromOpenAI(b); err == nil && !jsonv.Valid(out) {
			t.Fatalf("embed %q → invalid %q", b, out)
		}
	})
}
