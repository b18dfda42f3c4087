package copilot

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
)

// The members as Copilot's own client reads them: reasoning_text and
// reasoning_opaque on a message and on deltas.
const (
	opaque     = "3kq9Yt1sZ2x0QW5jcnlwdGVkLXJlYXNvbmluZw=="
	cpAnswer   = `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"reasoning_text":"The user wants the weather.","reasoning_opaque":"` + opaque + `","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}}]}`
	cpTextOnly = `{"choices":[{"index":0,"delta":{"reasoning_text":"The user"}}]}`
	cpOpaque   = `{"choices":[{"index":0,"delta":{"reasoning_opaque":"` + opaque + `"}}]}`
)

// TestReasoningToPivot: an answer's reasoning_text is the pivot's reasoning
// text and its reasoning_opaque a thinking block's sealed signature (with
// the text); in a stream the text comes as reasoning_content and the token
// as a block's signature alone; Copilot's members stay.
func TestReasoningToPivot(t *testing.T) {
	msg := gjson.GetBytes(Answer([]byte(cpAnswer)), "choices.0.message")
	if msg.Get("reasoning_content").String() != "The user wants the weather." ||
		msg.Get("thinking_blocks.0.thinking").String() != "The user wants the weather." ||
		msg.Get("thinking_blocks.0.signature").String() != sealPrefix+opaque || msg.Get("reasoning_opaque").String() != opaque {
		t.Fatalf("answer: %s", msg.Raw)
	}
	if d := gjson.GetBytes(Chunk([]byte(cpTextOnly)), "choices.0.delta"); d.Get("reasoning_content").String() != "The user" || d.Get("thinking_blocks").Exists() {
		t.Fatalf("text delta: %s", d.Raw)
	}
	if d := gjson.GetBytes(Chunk([]byte(cpOpaque)), "choices.0.delta"); d.Get("thinking_blocks").Raw != `[{"type":"thinking","signature":"`+sealPrefix+opaque+`"}]` {
		t.Fatalf("opaque delta: %s", d.Raw)
	}
	plain := `{"choices":[{"index":0,"delta":{"content":"Hi"}}]}`
	if got := string(Chunk([]byte(plain))); got != plain {
		t.Fatalf("a plain delta changed: %s", got)
	}
}

// TestReplayGivesOpaqueBack: the row's Chat body gives Copilot its own
// token back as reasoning_opaque with the block's text as reasoning_text;
// another upstream's signed block and unsigned reasoning text are not sent;
// a message's own reasoning_opaque stays.
func TestReplayGivesOpaqueBack(t *testing.T) {
	blocks := gjson.GetBytes(Answer([]byte(cpAnswer)), "choices.0.message.thinking_blocks").Raw
	body := `{"model":"claude-sonnet-4.5","messages":[{"role":"user","content":"weather?"},` +
		`{"role":"assistant","content":null,"reasoning_content":"The user wants the weather.","thinking_blocks":` + blocks + `,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"toolu_1","content":"sunny"},` +
		`{"role":"assistant","content":"Hi","reasoning_content":"elsewhere","thinking_blocks":[{"type":"thinking","thinking":"elsewhere","signature":"EqQBCgIYAhIM"}]},` +
		`{"role":"assistant","content":"Yo","reasoning_opaque":"mine","thinking_blocks":` + blocks + `},` +
		`{"role":"user","content":"thanks"}]}`
	p := row()
	out, err := p.ChatBody([]byte(body))
	if err != nil || !gjson.ValidBytes(out) {
		t.Fatalf("%v %s", err, out)
	}
	if s := string(out); strings.Contains(s, "thinking_blocks") || strings.Contains(s, "reasoning_content") || strings.Contains(s, "EqQBCgIYAhIM") {
		t.Fatalf("pivot members or a foreign signature sent: %s", out)
	}
	if m := gjson.GetBytes(out, "messages.1"); m.Get("reasoning_opaque").String() != opaque || m.Get("reasoning_text").String() != "The user wants the weather." {
		t.Errorf("copilot turn: %s", m.Raw)
	}
	if m := gjson.GetBytes(out, "messages.3"); m.Get("reasoning_opaque").Exists() || m.Get("reasoning_text").Exists() {
		t.Errorf("foreign turn: %s", m.Raw)
	}
	if m := gjson.GetBytes(out, "messages.4"); m.Get("reasoning_opaque").String() != "mine" {
		t.Errorf("own member: %s", m.Raw)
	}
}

// TestExecutorReadsReasoning: over loopback the executor (the OpenAI wire
// with the editor headers) gives a JSON answer and a stream in the pivot's
// form.
func TestExecutorReadsReasoning(t *testing.T) {
	stream := "data: " + cpTextOnly + "\n\ndata: " + cpOpaque + "\n\ndata: [DONE]\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Editor-Version") == "" || r.URL.Path != "/chat/completions" {
			http.Error(w, "bad request", 400)
			return
		}
		if b, _ := io.ReadAll(r.Body); gjson.GetBytes(b, "stream").Bool() {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, cpAnswer)
	}))
	defer srv.Close()
	e := NewExecutor(providers.ExecDeps{Client: srv.Client(), UserAgent: "t"})
	target := &providers.Target{Provider: row(), BaseURL: srv.URL, Model: "claude-sonnet-4.5", Secret: "tok"}
	resp, err := e.Do(context.Background(), target, providers.Call{Body: []byte(`{"model":"m"}`)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.thinking_blocks.0.signature").String() != sealPrefix+opaque {
		t.Fatalf("json: %d %s", resp.StatusCode, body)
	}
	resp, err = e.Do(context.Background(), target, providers.Call{Body: []byte(`{"model":"m","stream":true}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(iotest.OneByteReader(resp.Body))
	resp.Body.Close()
	events := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	if len(events) != 3 || gjson.Get(strings.TrimPrefix(events[0], "data: "), "choices.0.delta.reasoning_content").String() != "The user" ||
		gjson.Get(strings.TrimPrefix(events[1], "data: "), "choices.0.delta.thinking_blocks.0.signature").String() != sealPrefix+opaque ||
		events[2] != "data: [DONE]" {
		t.Fatalf("stream: %q", body)
	}
}
