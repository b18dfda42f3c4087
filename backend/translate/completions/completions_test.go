package completions

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate/sse"
)

func TestRequestToChat(t *testing.T) {
	cases := []struct {
		name, in string
		err      string // "" for success
		check    func(t *testing.T, chat gjson.Result)
	}{
		{"string prompt", `{"model":"m","prompt":"Say hi","max_tokens":5,"temperature":0.2,"stop":["\n"],"stream":true}`, "", func(t *testing.T, c gjson.Result) {
			if c.Get("messages.#").Int() != 1 || c.Get("messages.0.role").String() != "user" || c.Get("messages.0.content").String() != "Say hi" {
				t.Errorf("messages %s", c.Get("messages").Raw)
			}
			if c.Get("max_tokens").Int() != 5 || c.Get("temperature").Float() != 0.2 || c.Get("stop.0").String() != "\n" || !c.Get("stream").Bool() {
				t.Errorf("copied fields lost: %s", c.Raw)
			}
			if c.Get("prompt").Exists() {
				t.Errorf("prompt kept: %s", c.Raw)
			}
		}},
		{"one-element array", `{"model":"m","prompt":["Say hi"]}`, "", func(t *testing.T, c gjson.Result) {
			if c.Get("messages.0.content").String() != "Say hi" {
				t.Errorf("%s", c.Raw)
			}
		}},
		{"empty suffix is no FIM", `{"model":"m","prompt":"a","suffix":""}`, "", nil},
		{"null suffix", `{"model":"m","prompt":"a","suffix":null}`, "", nil},
		{"best_of 1", `{"model":"m","prompt":"a","best_of":1,"echo":false,"logprobs":null}`, "", nil},
		{"suffix", `{"model":"m","prompt":"a","suffix":"b"}`, "fill-in-the-middle", nil},
		{"several prompts", `{"model":"m","prompt":["a","b"]}`, "several prompts", nil},
		{"token array", `{"model":"m","prompt":[1,2,3]}`, "must be a string", nil},
		{"number", `{"model":"m","prompt":5}`, "must be a string", nil},
		{"echo", `{"model":"m","prompt":"a","echo":true}`, `"echo"`, nil},
		{"logprobs", `{"model":"m","prompt":"a","logprobs":3}`, `"logprobs"`, nil},
		{"best_of 3", `{"model":"m","prompt":"a","best_of":3}`, `"best_of"`, nil},
	}
	for _, c := range cases {
		out, err := RequestToChat([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !jsonv.Valid(out) {
			t.Errorf("%s: invalid JSON %s", c.name, out)
			continue
		}
		if c.check != nil {
			c.check(t, gjson.ParseBytes(out))
		}
	}
	if _, err := RequestToChat([]byte(`{"model":"m","prompt":"a","suffix":"b"}`)); !errors.Is(err, ErrFillInTheMiddle) {
		t.Errorf("suffix: %v, want ErrFillInTheMiddle", err)
	}
}

func TestResponseFromChat(t *testing.T) {
	cases := []struct{ finish, want string }{{"stop", "stop"}, {"length", "length"}, {"content_filter", "content_filter"}, {"tool_calls", "stop"}}
	for _, c := range cases {
		chat := `{"id":"c1","object":"chat.completion","created":7,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"` + c.finish + `"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`
		out, err := ResponseFromChat([]byte(chat))
		if err != nil {
			t.Fatal(err)
		}
		r := gjson.ParseBytes(out)
		if r.Get("object").String() != "text_completion" || r.Get("choices.0.text").String() != "Hi there" ||
			r.Get("choices.0.finish_reason").String() != c.want || r.Get("usage.total_tokens").Int() != 5 ||
			r.Get("model").String() != "up" || r.Get("created").Int() != 7 || r.Get("id").String() != "c1" {
			t.Errorf("finish %s: %s", c.finish, out)
		}
	}
	for _, bad := range []string{`{"choices":[]}`, `{`, `{"choices":5}`} {
		if _, err := ResponseFromChat([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func feed(t *testing.T, events ...string) (string, *streamFromChat) {
	t.Helper()
	tr := NewStreamFromChat("asked").(*streamFromChat)
	var dst []byte
	for _, e := range events {
		var err error
		dst, err = tr.Event(dst, sse.Event{Data: []byte(e)})
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
	}
	return string(tr.End(dst)), tr
}

func TestStreamFromChat(t *testing.T) {
	out, tr := feed(t,
		`{"id":"c1","created":3,"model":"up","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c1","created":3,"model":"up","choices":[{"index":0,"delta":{"content":"Hel\"lo"}}]}`,
		`{"id":"c1","created":3,"model":"up","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c1","created":3,"model":"up","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}`,
		`[DONE]`)
	var text strings.Builder
	var p sse.Parser
	done, finish := false, ""
	_ = p.Feed([]byte(out), func(ev sse.Event) bool {
		if ev.IsDone() {
			done = true
			return true
		}
		r := gjson.ParseBytes(ev.Data)
		if r.Get("object").String() != "text_completion" || r.Get("model").String() != "up" {
			t.Errorf("event %s", ev.Data)
		}
		text.WriteString(r.Get("choices.0.text").String())
		if f := r.Get("choices.0.finish_reason").String(); f != "" {
			finish = f
		}
		return true
	})
	if text.String() != `Hel"lo` || !done || finish != "stop" {
		t.Fatalf("text %q done %v finish %q:\n%s", text.String(), done, finish, out)
	}
	if !tr.Complete() || tr.Usage().InputTokens != 4 || tr.Usage().OutputTokens != 2 {
		t.Fatalf("complete %v usage %+v", tr.Complete(), tr.Usage())
	}
	// A stream cut before its finish is not complete and gets no [DONE].
	out, tr = feed(t, `{"choices":[{"index":0,"delta":{"content":"par"}}]}`)
	if tr.Complete() || strings.Contains(out, "[DONE]") {
		t.Fatalf("cut stream: complete %v\n%s", tr.Complete(), out)
	}
	// An error event or a non-JSON event fails the translation.
	for _, bad := range []string{`{"error":{"message":"overloaded"}}`, "\xff"} {
		tr := NewStreamFromChat("m")
		if _, err := tr.Event(nil, sse.Event{Data: []byte(bad)}); err == nil || tr.Complete() {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

// FuzzCompletions: untrusted request and answer bytes never panic, and what
// the translators write is valid JSON.
func FuzzCompletions(f *testing.F) {
	for _, s := range []string{`{"model":"m","prompt":"a"}`, `{"model":"m","prompt":["a"],"stop":"x"}`, `{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}`,
		`{"choices":[{"delta":{"content":"x"},"finish_reason":null}],"usage":{"prompt_tokens":1}}`, `[DONE]`, `{"error":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if jsonv.CheckRequest(b) == nil {
			if out, err := RequestToChat(b); err == nil && !jsonv.Valid(out) {
				t.Fatalf("RequestToChat(%q) = invalid %q", b, out)
			}
		}
		if out, err := ResponseFromChat(b); err == nil && !jsonv.Valid(out) {
			t.Fatalf("ResponseFromChat(%q) = invalid %q", b, out)
		}
		tr := NewStreamFromChat("m")
		out, err := tr.Event(nil, sse.Event{Data: b})
		if err == nil {
			var p sse.Parser
			_ = p.Feed(append(out, tr.End(nil)...), func(ev sse.Event) bool {
				if !ev.IsDone() && !jsonv.Valid(ev.Data) {
					t.Fatalf("event from %q is not JSON: %q", b, ev.Data)
				}
				return true
			})
		}
	})
}
