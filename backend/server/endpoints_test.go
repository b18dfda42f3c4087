package server_test

import (
	"encoding/base64"
	"encoding/binary"
	"math"
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
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": provider, "name": name,
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
	if text, done := completionText(t, body); text != "<middle of x…y>" || !done {
		t.Fatalf("streamed text %q (done %v): %s", text, done, body)
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
	if text, done := completionText(t, body); text != fakeupstream.Content("cmpl-anthropic") || !done {
		t.Fatalf("streamed %q (done %v)", text, done)
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

// completionText is the text of a streamed text completion and whether it
// ended with [DONE]; every other event must be a text_completion chunk.
func completionText(t *testing.T, body []byte) (string, bool) {
	t.Helper()
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
	return text.String(), done
}

// addGeminiModelConn creates a gemini (native Gemini API) connection to the
// fake serving models.
func (e *env) addGeminiModelConn(name, upstreamKey string, priority int, models ...string) {
	e.t.Helper()
	base := strings.TrimSuffix(e.upURL, "/v1") + "/v1beta"
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "gemini", "name": name,
		"apiKey": upstreamKey, "baseUrl": base, "priority": priority, "models": models})
	if code != http.StatusCreated {
		e.t.Fatalf("create connection %s: %d %v", name, code, m)
	}
}

// TestEmbeddingsGemini: /v1/embeddings fails over from a failing
// OpenAI-compatible connection to a gemini one, which serves it as
// batchEmbedContents; the answer is OpenAI's, with an estimated usage; and
// a Gemini 429 in Google's shape fails over the other way.
func TestEmbeddingsGemini(t *testing.T) {
	e := newEnv(t)
	const model = "gemini-embedding-001"
	e.addModelConn("openai-compatible", "broken", "gemb-broken", 1, model)
	e.addGeminiModelConn("gemini", "gemb-gemini", 2, model)
	e.up.SetFault("gemb-broken", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500})

	resp, body := e.client("/v1/embeddings", map[string]any{"model": model, "input": []string{"hello world", "bye"}})
	if resp.StatusCode != 200 {
		t.Fatalf("embeddings: %d %s", resp.StatusCode, body)
	}
	if gjson.GetBytes(body, "object").String() != "list" || gjson.GetBytes(body, "data.1.index").Int() != 1 ||
		gjson.GetBytes(body, "data.1.object").String() != "embedding" || gjson.GetBytes(body, "model").String() != model {
		t.Fatalf("answer: %s", body)
	}
	if d := len(gjson.GetBytes(body, "data.0.embedding").Array()); d != fakeupstream.EmbeddingDims {
		t.Fatalf("vector of %d dims: %s", d, body)
	}
	// "hello world" is 11 characters (3 tokens), "bye" 3 (1): the estimate.
	if gjson.GetBytes(body, "usage.prompt_tokens").Int() != 4 || gjson.GetBytes(body, "usage.total_tokens").Int() != 4 {
		t.Fatalf("usage: %s", body)
	}
	if got := e.up.LastPath("gemb-gemini"); got != "/v1beta/models/"+model+":batchEmbedContents" {
		t.Fatalf("upstream path %q", got)
	}
	if e.up.Hits("gemb-broken") == 0 { // (a 500 may be retried once on the same connection)
		t.Fatal("the failing connection was not tried first")
	}

	// The log row carries the estimated usage and the passed-over attempt.
	e.restart() // flushes the request log
	_, logs := e.mgmt("GET", "/api/logs?limit=1", nil)
	row := logs["logs"].([]any)[0].(map[string]any)
	if row["promptTokens"] != float64(4) || len(row["attempts"].([]any)) < 2 {
		t.Fatalf("log row: %v", row)
	}

	// Gemini's own answer for the same text through OpenAI's route: the
	// vectors agree, so the values went through unchanged.
	e.addModelConn("openai-compatible", "reference", "gemb-ref", 9, "ref-model")
	_, ref := e.client("/v1/embeddings", map[string]any{"model": "ref-model", "input": []string{"hello world", "bye"}})
	if gjson.GetBytes(ref, "data.1.embedding").Raw != gjson.GetBytes(body, "data.1.embedding").Raw {
		t.Fatalf("vectors differ: %s vs %s", gjson.GetBytes(ref, "data.1.embedding").Raw, gjson.GetBytes(body, "data.1.embedding").Raw)
	}

	// A Google-shaped 429 on a gemini connection fails over to the next.
	e2 := newEnv(t)
	e2.addGeminiModelConn("limited", "gemb-limited", 1, model)
	e2.addModelConn("openai-compatible", "spare", "gemb-spare", 2, model)
	e2.up.SetFault("gemb-limited", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429})
	resp, body = e2.client("/v1/embeddings", map[string]any{"model": model, "input": "x"})
	if resp.StatusCode != 200 || e2.up.Hits("gemb-limited") != 1 || e2.up.LastPath("gemb-spare") != "/v1/embeddings" {
		t.Fatalf("after a Gemini 429: %d %s (limited hit %d times)", resp.StatusCode, body, e2.up.Hits("gemb-limited"))
	}
}

// TestEmbeddingsGeminiOnly: a Gemini-only setup serves /v1/embeddings
// (dimensions as outputDimensionality, base64 vectors) and Ollama's
// /api/embed.
func TestEmbeddingsGeminiOnly(t *testing.T) {
	e := newEnv(t)
	const model = "text-embedding-004"
	e.addGeminiModelConn("gemini", "gemb-only", 1, model)

	resp, body := e.client("/v1/embeddings", map[string]any{"model": model, "input": "one", "dimensions": 4})
	if resp.StatusCode != 200 || len(gjson.GetBytes(body, "data.0.embedding").Array()) != 4 {
		t.Fatalf("dimensions: %d %s", resp.StatusCode, body)
	}
	_, sent := e.up.LastRequest("gemb-only")
	if got := gjson.GetBytes(sent, "requests.0.outputDimensionality").Int(); got != 4 {
		t.Fatalf("outputDimensionality %d: %s", got, sent)
	}
	resp, b64 := e.client("/v1/embeddings", map[string]any{"model": model, "input": "one", "dimensions": 4, "encoding_format": "base64"})
	s := gjson.GetBytes(b64, "data.0.embedding").String()
	raw, err := base64.StdEncoding.DecodeString(s)
	if resp.StatusCode != 200 || err != nil || len(raw) != 16 {
		t.Fatalf("base64: %d %s", resp.StatusCode, b64)
	}
	want := gjson.GetBytes(body, "data.0.embedding").Array()
	for i := range 4 {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != float32(want[i].Float()) {
			t.Fatalf("value %d: %v, want %v", i, got, want[i].Float())
		}
	}

	resp, body = e.do("POST", "/ollama/api/embed", map[string]any{"model": model, "input": []string{"a", "b"}},
		map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 || len(gjson.GetBytes(body, "embeddings").Array()) != 2 {
		t.Fatalf("ollama embed: %d %s", resp.StatusCode, body)
	}

	// Token arrays cannot be sent to Gemini: a clear 400.
	resp, body = e.client("/v1/embeddings", map[string]any{"model": model, "input": [][]int{{1, 2}}})
	if resp.StatusCode != 400 || !strings.Contains(string(body), "token arrays") {
		t.Fatalf("token input: %d %s", resp.StatusCode, body)
	}
}
