package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An upstream whose answer headers are far larger than the upstream
// connection's 2 KiB read buffer (60 rate-limit style headers and one 6 KB
// line, as some providers send) is still relayed whole, JSON and streamed.
func TestLargeUpstreamHeadersAreRead(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for i := range 60 {
			h.Set(fmt.Sprintf("X-Ratelimit-Window-%02d", i), strings.Repeat("7", 60))
		}
		h.Set("X-Long-Policy", strings.Repeat("p", 6000))
		if body, _ := io.ReadAll(r.Body); strings.Contains(string(body), `"stream":true`) {
			h.Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"big headers"},"finish_reason":null}]}`+"\n\n")
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		h.Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"big headers"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`)
	}))
	t.Cleanup(up.Close)
	e := newEnvClock(t, true)
	e.upURL = up.URL + "/v1"
	e.addConn("big-headers", "sk-up", 1)
	for _, stream := range []bool{false, true} {
		resp, body := e.chat("openai-compatible/gpt-4o-mini", stream, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "big headers") {
			t.Fatalf("stream %v: %d %s", stream, resp.StatusCode, body)
		}
	}
}
