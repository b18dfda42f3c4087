package server_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestTestCallsARedirectNoAuthSuccess: an upstream that answers 307 to the
// model list and the completion (a login page, a moved endpoint) never had
// the key judged: Test says the auth step is not ok (naming the redirect),
// the whole check is not ok, and the key is not called rejected.
func TestTestCallsARedirectNoAuthSuccess(t *testing.T) {
	e := newEnv(t)
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "https://login.example.com/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(up.Close)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "moved",
		"apiKey": "key-r", "baseUrl": up.URL + "/v1", "models": []string{"gpt-4o-mini"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	code, m = e.mgmt("POST", "/api/providers/"+id+"/test", nil)
	st := steps(m["steps"])
	if code != 200 || m["ok"] != false || m["rejected"] != false || st["auth"]["ok"] != false || st["auth"]["status"].(float64) != 307 {
		t.Fatalf("test: %d %v", code, m)
	}
	if hits.Load() < 2 {
		t.Fatalf("the upstream saw %d requests, want the model list and a completion", hits.Load())
	}
	if c := e.connHealth(e.health(), id); c["state"] == "key_rejected" {
		t.Fatalf("a redirect is not a rejected key: %v", c)
	}
}
