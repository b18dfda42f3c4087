//go:build clients

package clients

import (
	"slices"
	"testing"

	"omniroute/tests/fakeupstream"
)

// endpointResult is one case of endpoints.mjs.
type endpointResult struct {
	Text   string   `json:"text"`
	Finish string   `json:"finish"`
	Args   string   `json:"args"`
	Count  int      `json:"count"`
	Dims   int      `json:"dims"`
	Names  []string `json:"names"`
	Error  string   `json:"error"`
}

// TestEndpointClients: the official OpenAI SDK's legacy completions (with a
// fill-in-the-middle suffix, as autocomplete sends) and embeddings (as
// indexing sends), and the official Ollama library on /ollama (chat streamed
// and not, a tool round trip, generate, embed, list), through the built
// gateway. The chat model is served over the Anthropic wire (translated), the
// autocomplete and embedding models by an OpenAI-compatible connection whose
// first key is rate-limited: the 429 is invisible to every client.
func TestEndpointClients(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-limited", 1, "qwen2.5-coder", "nomic-embed-text")
	s.addConn("openai-compatible", "key-coder", 2, "qwen2.5-coder", "nomic-embed-text")
	s.addConn("anthropic-compatible", "key-claude", 3, "claude-sonnet-4-5")
	s.up.SetFault("key-limited", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "60"}})

	var got map[string]endpointResult
	runScript(t, "endpoints.mjs", map[string]any{"base": s.gw, "key": s.key, "model": "claude-sonnet-4-5",
		"embedModel": "nomic-embed-text", "fimModel": "qwen2.5-coder"}, &got)
	claude := fakeupstream.Content("key-claude")
	checks := []struct {
		name string
		ok   func(r endpointResult) bool
	}{
		{"completions-fim", func(r endpointResult) bool {
			return r.Text == "<middle of def add(a, b):…\nprint(add(1, 2))>" && r.Finish == "stop"
		}},
		{"completions-stream", func(r endpointResult) bool { return r.Text == claude && r.Finish == "stop" }},
		{"embeddings", func(r endpointResult) bool { return r.Count == 2 && r.Dims == fakeupstream.EmbeddingDims }},
		{"ollama-chat", func(r endpointResult) bool { return r.Text == claude && r.Finish == "stop" }},
		{"ollama-chat-stream", func(r endpointResult) bool { return r.Text == claude && r.Finish == "stop" }},
		{"ollama-tools", func(r endpointResult) bool {
			return r.Args == fakeupstream.ToolArguments && r.Text == fakeupstream.ToolResultText("sunny")
		}},
		{"ollama-generate", func(r endpointResult) bool { return r.Text == claude && r.Finish == "stop" }},
		{"ollama-embed", func(r endpointResult) bool { return r.Count == 2 && r.Dims == fakeupstream.EmbeddingDims }},
		{"ollama-list", func(r endpointResult) bool {
			return slices.Contains(r.Names, "claude-sonnet-4-5") && slices.Contains(r.Names, "nomic-embed-text")
		}},
		{"ollama-show", func(r endpointResult) bool {
			return r.Text == "anthropic-compatible" && slices.Contains(r.Names, "completion")
		}},
		{"ollama-ps", func(r endpointResult) bool { return r.Count == 0 }},
	}
	for _, c := range checks {
		if r, ok := got[c.name]; !ok || r.Error != "" || !c.ok(r) {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
	if s.up.Hits("key-limited") == 0 {
		t.Error("the rate-limited key was never tried: the failover was not exercised")
	}
}
