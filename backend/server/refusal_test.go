package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestStreamedRefusalIsAnAnswer (issue 40 D): a stream that ends as a
// refusal (OpenAI finish_reason content_filter, nothing else) is a success:
// not logged EMPTY_RESPONSE, not counted as a server failure, so three of
// them cool neither the model nor the connection, and the next request is
// served by the same connection.
func TestStreamedRefusalIsAnAnswer(t *testing.T) {
	e := newEnv(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"id":"r","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}]}`,
			`{"id":"r","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	}))
	t.Cleanup(refusing.Close)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "shy",
		"apiKey": "sk-shy-0123456789", "baseUrl": refusing.URL + "/v1", "prefix": "shy", "models": []string{"m"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	conn := m["connection"].(map[string]any)["id"].(string)
	for i := 1; i <= 4; i++ {
		resp, body := e.chat("shy/m", true, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != conn {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	_, logs := e.mgmt("GET", "/api/logs?limit=10", nil)
	for _, l := range logs["logs"].([]any) {
		if c := l.(map[string]any)["errorCode"]; c != nil && c != "" {
			t.Fatalf("a refusal logged %v: %v", c, l)
		}
	}
	_, cd := e.mgmt("GET", "/api/resilience/model-cooldowns", nil)
	if n := len(cd["items"].([]any)); n != 0 {
		t.Fatalf("refusals cooled a model: %v", cd)
	}
}
