package e2e

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/testproc"
)

// TestPlaceholderKeyRefused: the README's placeholder key ("…") and the
// other obvious placeholders are refused with 400 INVALID_API_KEY naming
// apiKey, on create and on update; nothing is stored.
func TestPlaceholderKeyRefused(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), 0)
	t.Cleanup(g.stop)
	for _, key := range []string{"…", "...", "sk-...", "sk-…", "YOUR_API_KEY", "<key>", "your-api-key-here", " … "} {
		resp, body := g.do("POST", "/api/providers", map[string]any{"provider": "glm", "apiKey": key},
			map[string]string{"Authorization": "Bearer " + g.token})
		checkError(t, "apiKey "+strconv.Quote(key), resp, body, http.StatusBadRequest, "INVALID_API_KEY")
		if p := gjson.GetBytes(body, "error.param").String(); p != "apiKey" {
			t.Errorf("apiKey %q: error.param %q, want apiKey", key, p)
		}
	}
	if m := g.mustMgmt(http.StatusOK, "GET", "/api/providers", nil); len(m["connections"].([]any)) != 0 {
		t.Errorf("a placeholder was stored: %v", m)
	}
	// A real-looking key is taken; updating it to a placeholder is refused.
	upPort := testproc.FreePort(t)
	m := g.mustMgmt(http.StatusCreated, "POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "x",
		"apiKey": "sk-live-0123456789abcdef", "baseUrl": "http://127.0.0.1:" + strconv.Itoa(upPort) + "/v1", "models": []string{"m"}})
	id := m["connection"].(map[string]any)["id"].(string)
	resp, body := g.do("PATCH", "/api/providers/"+id, map[string]any{"apiKey": "…"}, map[string]string{"Authorization": "Bearer " + g.token})
	checkError(t, "update to a placeholder", resp, body, http.StatusBadRequest, "INVALID_API_KEY")
}

// TestUnreachableConnectionIsNotActive: a connection whose upstream nothing
// answers (discovery found it unreachable) reads testStatus "unreachable"
// beside its modelsError, never "active", in the connection and in the
// cooldowns view.
func TestUnreachableConnectionIsNotActive(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), 0)
	t.Cleanup(g.stop)
	port := testproc.FreePort(t) // nothing listens there
	m := g.mustMgmt(http.StatusCreated, "POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "gone",
		"apiKey": "sk-live-0123456789abcdef", "baseUrl": "http://127.0.0.1:" + strconv.Itoa(port) + "/v1"})
	conn := m["connection"].(map[string]any)
	id := conn["id"].(string)
	got := g.mustMgmt(http.StatusOK, "GET", "/api/providers/"+id, nil)
	c := got
	if inner, ok := got["connection"].(map[string]any); ok {
		c = inner
	}
	if c["modelsError"] == "" || c["testStatus"] != "unreachable" {
		t.Errorf("connection: testStatus %v beside modelsError %q, want unreachable", c["testStatus"], c["modelsError"])
	}
	cd := g.mustMgmt(http.StatusOK, "GET", "/api/resilience/cooldowns", nil)
	for _, it := range cd["connections"].([]any) {
		if it := it.(map[string]any); it["id"] == id && (it["testStatus"] != "unreachable" || it["status"] != "unreachable") {
			t.Errorf("cooldowns: status %v testStatus %v, want unreachable both", it["status"], it["testStatus"])
		}
	}
}
