package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestOllamaStreamCutIsContinued: an Ollama client's /api/chat and
// /api/generate stream cut after some text is finished by the fallback from
// the delivered text, as Chat and Messages streams are: one complete NDJSON
// answer ending in one done line, no error line, the delivered text sent to
// the fallback as a trailing assistant message.
func TestOllamaStreamCutIsContinued(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		for _, ep := range []struct{ path, field string }{{"/ollama/api/chat", "message.content"}, {"/ollama/api/generate", "response"}} {
			t.Run(strings.TrimPrefix(ep.path, "/ollama/api/"), func(t *testing.T) {
				r := newContinueRig(t, two, nil, nil)
				r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
				body := map[string]any{"model": rescueCombo, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
				if ep.field == "response" {
					body = map[string]any{"model": rescueCombo, "prompt": "hi"}
				}
				resp, out := r.gw.do(http.MethodPost, ep.path, body, map[string]string{"Authorization": "Bearer " + r.gw.key})
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, out)
				}
				var text strings.Builder
				dones, errors := 0, 0
				for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					if !gjson.Valid(line) {
						t.Fatalf("not an NDJSON line %q in:\n%s", line, out)
					}
					text.WriteString(gjson.Get(line, ep.field).String())
					if gjson.Get(line, "done").Bool() {
						dones++
					}
					if gjson.Get(line, "error").Exists() {
						errors++
					}
				}
				if text.String() != r.continuedText() || dones != 1 || errors != 0 {
					t.Errorf("continued answer %q (done lines %d, error lines %d), want %q complete:\n%s",
						text.String(), dones, errors, r.continuedText(), out)
				}
				if ph, fh := r.hits(); ph != 1 || fh != 1 {
					t.Errorf("hits primary=%d fallback=%d, want 1 and 1", ph, fh)
				}
				_, last := r.up.LastRequest(r.fallbackKey)
				var req struct {
					Messages []struct {
						Role string `json:"role"`
					} `json:"messages"`
				}
				if json.Unmarshal(last, &req) != nil || len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role != "assistant" {
					t.Errorf("the fallback did not get the delivered text as a trailing assistant message: %s", last)
				}
				r.checkLogContinued(2)
			})
		}
	})
}

// TestOllamaShowAndPs: /ollama/api/show describes a model /api/tags lists
// (404 {"error"} for another), /ollama/api/ps answers an empty models list;
// both need the client key.
func TestOllamaShowAndPs(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	t.Cleanup(g.stop)
	g.addConn("oa", upURL, "key-a", 1)
	auth := map[string]string{"Authorization": "Bearer " + g.key}
	for _, body := range []map[string]any{{"model": "gpt-4o-mini"}, {"name": "gpt-4o-mini"}} {
		resp, out := g.do("POST", "/ollama/api/show", body, auth)
		if resp.StatusCode != 200 || !gjson.GetBytes(out, "details").IsObject() || !gjson.GetBytes(out, "capabilities").IsArray() ||
			!gjson.GetBytes(out, "model_info").IsObject() {
			t.Errorf("show %v: %d %s", body, resp.StatusCode, out)
		}
	}
	resp, out := g.do("POST", "/ollama/api/show", map[string]any{"model": "not-pulled"}, auth)
	if resp.StatusCode != 404 || !strings.Contains(gjson.GetBytes(out, "error").String(), "not found") {
		t.Errorf("show of an unknown model: %d %s", resp.StatusCode, out)
	}
	resp, out = g.do("POST", "/ollama/api/show", map[string]any{}, auth)
	if resp.StatusCode != 400 || !gjson.GetBytes(out, "error").Exists() {
		t.Errorf("show without a model: %d %s", resp.StatusCode, out)
	}
	resp, out = g.do("GET", "/ollama/api/ps", nil, auth)
	if resp.StatusCode != 200 || !gjson.GetBytes(out, "models").IsArray() {
		t.Errorf("ps: %d %s", resp.StatusCode, out)
	}
	if resp, _ = g.do("GET", "/ollama/api/ps", nil, nil); resp.StatusCode != 401 {
		t.Errorf("ps without a key: %d, want 401", resp.StatusCode)
	}
}
