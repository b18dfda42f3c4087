//go:build linux

package hostile

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestHostileBodiesOnEveryInferenceRoute: the endpoints beside chat
// (completions, embeddings, Ollama's and Gemini's APIs) refuse hostile bodies
// as chat does — a 4xx in their own error shape, the process up, nothing sent
// upstream — including the case-variant duplicate key of the allowedModels
// bypass.
func TestHostileBodiesOnEveryInferenceRoute(t *testing.T) {
	u := newUpstream(t)
	p := start(t, t.TempDir())
	p.addConn("up", u.URL, "sk-up-0123456789", "m", 1)
	deep := append([]byte(`{"model":"m","prompt":"x","input":"x","messages":[],"contents":`), nested(9<<20)...)
	cases := []struct {
		name, path string
		body       []byte
		code       string // the gateway's code, wherever the route's shape puts it
	}{
		{"completions, 9 MB nesting", "/v1/completions", deep, "JSON_TOO_DEEP"},
		{"completions, Model twice", "/v1/completions", []byte(`{"model":"m","prompt":"x","MODEL":"other"}`), "DUPLICATE_FIELD"},
		{"completions, no prompt", "/v1/completions", []byte(`{"model":"m"}`), "PROMPT_REQUIRED"},
		{"embeddings, invalid UTF-8", "/v1/embeddings", []byte("{\"model\":\"m\",\"input\":\"\xff\"}"), "INVALID_JSON"},
		{"embeddings, Model twice", "/v1/embeddings", []byte(`{"model":"m","input":"x","Model":"other"}`), "DUPLICATE_FIELD"},
		{"ollama chat, 9 MB nesting", "/ollama/api/chat", deep, "JSON_TOO_DEEP"},
		{"ollama chat, Model twice", "/ollama/api/chat", []byte(`{"model":"m","messages":[],"mOdel":"other"}`), "DUPLICATE_FIELD"},
		{"ollama generate, no prompt", "/ollama/api/generate", []byte(`{"model":"m"}`), "PROMPT_REQUIRED"},
		{"gemini, 9 MB nesting", "/v1beta/models/m:generateContent", deep, "JSON_TOO_DEEP"},
		{"gemini, not JSON", "/v1beta/models/m:streamGenerateContent?alt=sse", []byte(`{"contents":`), "INVALID_JSON"},
	}
	for _, c := range cases {
		resp, body := p.do(http.MethodPost, c.path, c.body, p.auth())
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %q %.200s", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		var v struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &v) != nil || !strings.Contains(string(v.Error), c.code) {
			t.Errorf("%s: the answer does not name %s: %.300s", c.name, c.code, body)
		}
		p.mustBeUp(c.name)
	}
	if n := u.hits.Load(); n != 0 {
		t.Fatalf("the upstream got %d request(s) for bodies the gateway refused", n)
	}
}
