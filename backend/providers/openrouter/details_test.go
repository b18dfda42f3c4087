package openrouter

import (
	"bytes"
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

// The reference's examples ("Reasoning Details API Shape"): a signed
// Anthropic text entry, an encrypted one, and OpenAI's summary + encrypted
// pair with its id.
const (
	claudeSig  = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds1YAqXZKdsV0KYYk"
	claudeData = "eyJlbmNyeXB0ZWQiOiJ0cnVlIiwiY29udGVudCI6IltSRURBQ1RFRF0ifQ=="
	answer     = `{"id":"gen-1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"",` +
		`"reasoning":"Let me think.","reasoning_details":[` +
		`{"type":"reasoning.text","text":"Let me think.","signature":"` + claudeSig + `","id":null,"format":"anthropic-claude-v1","index":0},` +
		`{"type":"reasoning.encrypted","data":"` + claudeData + `","id":null,"format":"anthropic-claude-v1","index":1}],` +
		`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}}]}`
	openaiAnswer = `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi","reasoning_details":[` +
		`{"type":"reasoning.summary","summary":"Analyzed the problem.","id":"rs_1","format":"openai-responses-v1","index":0},` +
		`{"type":"reasoning.encrypted","data":"gAAAA-opaque","id":"rs_1","format":"openai-responses-v1","index":1}]}}]}`
)

// TestAnswerToPivot: a JSON answer's reasoning_details become the pivot's
// thinking_blocks, an Anthropic-format signature and data verbatim; its
// reasoning string stays the reasoning text; OpenAI's entries are sealed
// and their summary becomes reasoning_content; reasoning_details stay.
func TestAnswerToPivot(t *testing.T) {
	out := Answer([]byte(answer))
	msg := gjson.GetBytes(out, "choices.0.message")
	if !gjson.ValidBytes(out) || msg.Get("thinking_blocks.#").Int() != 2 ||
		msg.Get("thinking_blocks.0.type").String() != "thinking" || msg.Get("thinking_blocks.0.thinking").String() != "Let me think." ||
		msg.Get("thinking_blocks.0.signature").String() != claudeSig ||
		msg.Get("thinking_blocks.1.type").String() != "redacted_thinking" || msg.Get("thinking_blocks.1.data").String() != claudeData ||
		msg.Get("reasoning_content").Exists() || msg.Get("reasoning_details.#").Int() != 2 {
		t.Fatalf("claude answer: %s", out)
	}
	out = Answer([]byte(openaiAnswer))
	msg = gjson.GetBytes(out, "choices.0.message")
	data := msg.Get("thinking_blocks.0.data").String()
	if msg.Get("reasoning_content").String() != "Analyzed the problem." || msg.Get("thinking_blocks.#").Int() != 1 ||
		!strings.HasPrefix(data, sealPrefix) {
		t.Fatalf("openai answer: %s", out)
	}
	if e, ok := unseal(data); !ok || e.Get("id").String() != "rs_1" || e.Get("format").String() != "openai-responses-v1" ||
		e.Get("data").String() != "gAAAA-opaque" {
		t.Fatalf("sealed entry %s", e.Raw)
	}
	plain := []byte(`{"choices":[{"message":{"role":"assistant","content":"Hi"}}]}`)
	if got := Answer(plain); !bytes.Equal(got, plain) {
		t.Fatalf("an answer without reasoning_details changed: %s", got)
	}
}

// TestChunkToPivot: stream deltas as the reference shows them: text
// entries give reasoning_content (unless the delta has its own reasoning
// text), a signature ends the thinking block, an encrypted entry is a
// redacted_thinking block.
func TestChunkToPivot(t *testing.T) {
	tests := []struct {
		name, in, reasoning, blocks string
	}{
		{"text", `{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"Let me","signature":null,"format":"anthropic-claude-v1","index":0}]}}]}`,
			"Let me", ""},
		{"text beside reasoning", `{"choices":[{"index":0,"delta":{"reasoning":"Let me","reasoning_details":[{"type":"reasoning.text","text":"Let me","format":"anthropic-claude-v1","index":0}]}}]}`,
			"", ""},
		{"signature", `{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"","signature":"` + claudeSig + `","format":"anthropic-claude-v1","index":0}]}}]}`,
			"", `[{"type":"thinking","signature":"` + claudeSig + `"}]`},
		{"encrypted", `{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"` + claudeData + `","format":"anthropic-claude-v1","index":1}]}}]}`,
			"", `[{"type":"redacted_thinking","data":"` + claudeData + `"}]`},
	}
	for _, tt := range tests {
		out := Chunk([]byte(tt.in))
		d := gjson.GetBytes(out, "choices.0.delta")
		if !gjson.ValidBytes(out) || d.Get("reasoning_content").String() != tt.reasoning || d.Get("thinking_blocks").Raw != tt.blocks {
			t.Errorf("%s: %s", tt.name, out)
		}
	}
}

// TestReplayGivesDetailsBack: the pivot's blocks of a replayed turn go back
// to OpenRouter as reasoning_details, in order: Anthropic-format entries
// with their signature and data as they came, sealed entries as the
// entries they carry; a message's own reasoning_details stay; a turn
// without blocks keeps its reasoning text as "reasoning" (the row's
// ReasoningReplay).
func TestReplayGivesDetailsBack(t *testing.T) {
	claude := gjson.GetBytes(Answer([]byte(answer)), "choices.0.message.thinking_blocks").Raw
	openai := gjson.GetBytes(Answer([]byte(openaiAnswer)), "choices.0.message.thinking_blocks").Raw
	body := `{"model":"m","messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":"","reasoning_content":"Let me think.","thinking_blocks":` + claude + `,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"sunny"},` +
		`{"role":"assistant","content":"Hi","reasoning_content":"Analyzed the problem.","thinking_blocks":` + openai + `},` +
		`{"role":"assistant","content":"Yo","reasoning_details":[{"type":"reasoning.text","text":"mine"}],"thinking_blocks":` + claude + `},` +
		`{"role":"assistant","content":"plain","reasoning_content":"unsigned"},` +
		`{"role":"user","content":"thanks"}]}`
	p := row()
	out, err := p.ChatBody([]byte(body))
	if err != nil || !gjson.ValidBytes(out) {
		t.Fatalf("%v %s", err, out)
	}
	if strings.Contains(string(out), "thinking_blocks") || strings.Contains(string(out), "reasoning_content") {
		t.Fatalf("pivot members left: %s", out)
	}
	m := gjson.GetBytes(out, "messages.1")
	want := `[{"type":"reasoning.text","text":"Let me think.","signature":"` + claudeSig + `","format":"anthropic-claude-v1","index":0},` +
		`{"type":"reasoning.encrypted","data":"` + claudeData + `","format":"anthropic-claude-v1","index":1}]`
	if m.Get("reasoning_details").Raw != want || m.Get("reasoning").Exists() || m.Get("tool_calls.0.id").String() != "call_1" {
		t.Errorf("claude turn: %s\nwant details %s", m.Raw, want)
	}
	m = gjson.GetBytes(out, "messages.3.reasoning_details")
	if m.Get("#").Int() != 1 || m.Get("0.type").String() != "reasoning.encrypted" || m.Get("0.id").String() != "rs_1" ||
		m.Get("0.format").String() != "openai-responses-v1" || m.Get("0.data").String() != "gAAAA-opaque" {
		t.Errorf("openai turn: %s", m.Raw)
	}
	if got := gjson.GetBytes(out, "messages.4.reasoning_details").Raw; got != `[{"type":"reasoning.text","text":"mine"}]` {
		t.Errorf("a message's own details: %s", got)
	}
	if m := gjson.GetBytes(out, "messages.5"); m.Get("reasoning").String() != "unsigned" || m.Get("reasoning_details").Exists() {
		t.Errorf("unsigned turn: %s", m.Raw)
	}
}

// TestExecutorRewritesAnswers: over loopback, the executor gives a JSON
// answer and a stream (read a byte at a time) in the pivot's form, other
// lines and answers untouched.
func TestExecutorRewritesAnswers(t *testing.T) {
	stream := "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		": OPENROUTER PROCESSING\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"Let me\",\"format\":\"anthropic-claude-v1\",\"index\":0}]}}]}\r\n\r\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"\",\"signature\":\"" + claudeSig + "\",\"format\":\"anthropic-claude-v1\",\"index\":0}]}}]}\n\n" +
		"data: [DONE]"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); gjson.GetBytes(b, "stream").Bool() {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	e := NewExecutor(providers.ExecDeps{Client: srv.Client(), UserAgent: "t"})
	p := row()
	p.BaseURL = srv.URL
	target := &providers.Target{Provider: p, BaseURL: srv.URL, Model: "anthropic/claude-sonnet-4.5", Secret: "k"}
	resp, err := e.Do(context.Background(), target, providers.Call{Body: []byte(`{"model":"m"}`)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ContentLength != -1 || gjson.GetBytes(body, "choices.0.message.thinking_blocks.0.signature").String() != claudeSig {
		t.Fatalf("json: %d %s", resp.ContentLength, body)
	}

	resp, err = e.Do(context.Background(), target, providers.Call{Body: []byte(`{"model":"m","stream":true}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	body, err = io.ReadAll(iotest.OneByteReader(resp.Body))
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(body), "\n")
	if !strings.HasPrefix(string(body), "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n: OPENROUTER PROCESSING\n\n") ||
		!strings.HasSuffix(string(body), "\n\ndata: [DONE]") || len(lines) != 9 {
		t.Fatalf("stream framing: %q", body)
	}
	third := strings.TrimSuffix(strings.TrimPrefix(lines[4], "data: "), "\r")
	fourth := strings.TrimPrefix(lines[6], "data: ")
	if gjson.Get(third, "choices.0.delta.reasoning_content").String() != "Let me" || !strings.HasSuffix(lines[4], "\r") ||
		gjson.Get(fourth, "choices.0.delta.thinking_blocks.0.signature").String() != claudeSig {
		t.Fatalf("stream: %q", body)
	}
}
