package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// addModelConn creates a connection of provider ("openai-compatible" or
// "anthropic-compatible") to the fake serving models.
func (e *env) addModelConn(provider, name, upstreamKey string, priority int, models ...string) {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": provider, "name": name,
		"apiKey": upstreamKey, "baseUrl": e.upURL, "priority": priority, "models": models})
	if code != http.StatusCreated {
		e.t.Fatalf("create connection %s: %d %v", name, code, m)
	}
}

func (e *env) client(path string, body any) (*http.Response, []byte) {
	e.t.Helper()
	return e.do("POST", path, body, map[string]string{"Authorization": "Bearer " + e.key})
}

// TestEmbeddingsFailOver: /v1/embeddings reaches the OpenAI-compatible
// connections that serve the model at their /embeddings, passes over a
// chat-only wire, and moves on from a rate-limited key as chat does.
func TestEmbeddingsFailOver(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("anthropic-compatible", "claude-only", "emb-anthropic", 1, "text-embedding-3-small")
	e.addModelConn("openai-compatible", "limited", "emb-limited", 2, "text-embedding-3-small")
	e.addModelConn("openai-compatible", "spare", "emb-spare", 3, "text-embedding-3-small")
	e.up.SetFault("emb-limited", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "30"}})

	resp, body := e.client("/v1/embeddings", map[string]any{"model": "text-embedding-3-small", "input": []string{"hello world", "bye"}})
	if resp.StatusCode != 200 {
		t.Fatalf("embeddings: %d %s", resp.StatusCode, body)
	}
	if n := len(gjson.GetBytes(body, "data").Array()); n != 2 {
		t.Fatalf("want 2 vectors, got %d: %s", n, body)
	}
	if d := len(gjson.GetBytes(body, "data.0.embedding").Array()); d != fakeupstream.EmbeddingDims {
		t.Fatalf("vector of %d dims: %s", d, body)
	}
	if e.up.Hits("emb-anthropic") != 0 {
		t.Fatal("the chat-only connection was sent an embeddings request")
	}
	if got := e.up.LastPath("emb-spare"); got != "/v1/embeddings" {
		t.Fatalf("upstream path %q", got)
	}
	if e.up.Hits("emb-limited") != 1 {
		t.Fatalf("the rate-limited key was tried %d times", e.up.Hits("emb-limited"))
	}
	// The log row says which endpoint and what it cost.
	e.restart() // flushes the request log
	_, logs := e.mgmt("GET", "/api/logs?limit=1", nil)
	row := logs["logs"].([]any)[0].(map[string]any)
	attempts := row["attempts"].([]any)
	if row["promptTokens"] != float64(5) || len(attempts) != 3 ||
		attempts[0].(map[string]any)["code"] != "FORMAT_NOT_SUPPORTED" || attempts[1].(map[string]any)["status"] != float64(429) {
		t.Fatalf("log row: %v", row)
	}

	for _, c := range []struct {
		name string
		body string
		code string
	}{
		{"no input", `{"model":"text-embedding-3-small"}`, "INPUT_REQUIRED"},
		{"input a number", `{"model":"text-embedding-3-small","input":5}`, "INPUT_REQUIRED"},
		{"streamed", `{"model":"text-embedding-3-small","input":"x","stream":true}`, "INVALID_FIELD"},
		{"no model", `{"input":"x"}`, "MODEL_REQUIRED"},
		{"case-variant model", `{"model":"text-embedding-3-small","input":"x","Model":"other"}`, "DUPLICATE_FIELD"},
	} {
		resp, body := e.client("/v1/embeddings", c.body)
		if resp.StatusCode != 400 || errorCode(body) != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.name, resp.StatusCode, body, c.code)
		}
	}
}

// TestEmbeddingsOnlyChatWires: a model only chat-only wires serve answers
// with a clear refusal naming why, never a 5xx.
func TestEmbeddingsOnlyChatWires(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("anthropic-compatible", "claude-only", "emb-anthropic", 1, "voyage-3")
	resp, body := e.client("/v1/embeddings", map[string]any{"model": "voyage-3", "input": "x"})
	if resp.StatusCode >= 500 && resp.StatusCode != 502 || resp.StatusCode < 400 {
		t.Fatalf("embeddings on a chat-only wire: %d %s", resp.StatusCode, body)
	}
	t.Logf("%d %s", resp.StatusCode, body)
	if !strings.Contains(string(body), "embeddings") {
		t.Fatalf("the refusal does not say why: %s", body)
	}
	if e.up.Hits("emb-anthropic") != 0 {
		t.Fatal("the chat-only connection was called")
	}
}

// TestCompletionsPassThrough: /v1/completions reaches an OpenAI-compatible
// upstream's /completions untouched, fill-in-the-middle included, streamed
// and not.
func TestCompletionsPassThrough(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("openai-compatible", "coder", "fim-key", 1, "qwen2.5-coder")
	resp, body := e.client("/v1/completions", map[string]any{"model": "qwen2.5-coder", "prompt": "def add(a, b):", "suffix": "\n\nprint(add(1, 2))", "max_tokens": 16})
	if resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	if got := gjson.GetBytes(body, "choices.0.text").String(); got != "<middle of def add(a, b):…\n\nprint(add(1, 2))>" {
		t.Fatalf("text %q", got)
	}
	if got := e.up.LastPath("fim-key"); got != "/v1/completions" {
		t.Fatalf("upstream path %q", got)
	}
	if _, sent := e.up.LastRequest("fim-key"); gjson.GetBytes(sent, "suffix").String() == "" {
		t.Fatalf("the suffix did not reach the upstream: %s", sent)
	}
	resp, body = e.client("/v1/completions", map[string]any{"model": "qwen2.5-coder", "prompt": "x", "suffix": "y", "stream": true})
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	var text strings.Builder
	done := false
	for _, ev := range parseSSE(t, body) {
		if ev.data == "[DONE]" {
			done = true
			continue
		}
		text.WriteString(gjson.Get(ev.data, "choices.0.text").String())
	}
	if text.String() != "<middle of x…y>" || !done {
		t.Fatalf("streamed text %q (done %v): %s", text.String(), done, body)
	}
	resp, body = e.client("/v1/completions", `{"model":"qwen2.5-coder"}`)
	if resp.StatusCode != 400 || errorCode(body) != "PROMPT_REQUIRED" {
		t.Fatalf("no prompt: %d %s", resp.StatusCode, body)
	}
}

// TestCompletionsTranslatedToChat: a model served only over the Anthropic
// wire answers a completion without suffix (as chat, then back to a text
// completion, streamed and not); a suffix is refused with FIM_UNSUPPORTED.
func TestCompletionsTranslatedToChat(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("anthropic-compatible", "claude", "cmpl-anthropic", 1, "claude-sonnet-4-5")
	resp, body := e.client("/v1/completions", map[string]any{"model": "claude-sonnet-4-5", "prompt": "Say hi", "max_tokens": 20})
	if resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	if gjson.GetBytes(body, "object").String() != "text_completion" ||
		gjson.GetBytes(body, "choices.0.text").String() != fakeupstream.Content("cmpl-anthropic") ||
		gjson.GetBytes(body, "choices.0.finish_reason").String() != "stop" {
		t.Fatalf("answer: %s", body)
	}
	if got := e.up.LastPath("cmpl-anthropic"); got != "/v1/messages" {
		t.Fatalf("upstream path %q", got)
	}
	resp, body = e.client("/v1/completions", map[string]any{"model": "claude-sonnet-4-5", "prompt": "Say hi", "max_tokens": 20, "stream": true})
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	var text strings.Builder
	done := false
	for _, ev := range parseSSE(t, body) {
		if ev.data == "[DONE]" {
			done = true
			continue
		}
		if gjson.Get(ev.data, "object").String() != "text_completion" {
			t.Fatalf("event %s", ev.data)
		}
		text.WriteString(gjson.Get(ev.data, "choices.0.text").String())
	}
	if text.String() != fakeupstream.Content("cmpl-anthropic") || !done {
		t.Fatalf("streamed %q (done %v)", text.String(), done)
	}
	hits := e.up.Hits("cmpl-anthropic")
	resp, body = e.client("/v1/completions", map[string]any{"model": "claude-sonnet-4-5", "prompt": "a", "suffix": "b"})
	if resp.StatusCode != 400 || errorCode(body) != "FIM_UNSUPPORTED" {
		t.Fatalf("suffix on a chat-only wire: %d %s", resp.StatusCode, body)
	}
	if e.up.Hits("cmpl-anthropic") != hits {
		t.Fatal("the refused request reached the upstream")
	}
}
