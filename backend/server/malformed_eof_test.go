package server_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMalformedEventArrivingWithEOFEndsTheStream: on a committed stream, when
// the upstream's malformed event, the rest of its stream and the end of its
// body arrive in one read, nothing after the malformed event reaches the
// client (the parser's end-of-body flush used to relay it, then the error
// followed a whole answer: TestStreamFaultsNeverLie failed about one run in
// six). The upstream writes the rest only once the client has the first
// words, so the stream is committed first: no sleep, no luck.
func TestMalformedEventArrivingWithEOFEndsTheStream(t *testing.T) {
	chunk := func(content string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}]}` + "\n\n"
	}
	rest := "data: {not json\n\n" + chunk("AFTER-THE-BAD-EVENT") +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	gotFirst := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(chunk("Hello")))
		w.(http.Flusher).Flush()
		select { // the rest, the malformed event first, in one write that ends the body
		case <-gotFirst:
			_, _ = w.Write([]byte(rest))
		case <-r.Context().Done():
		}
	}))
	defer up.Close()

	e := newEnv(t)
	e.patchResilience(map[string]any{"failover": map[string]any{"streamContinuation": false}})
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "one-write",
		"apiKey": "sk-one-write-0123", "baseUrl": up.URL, "models": []string{"gpt-4o-mini"}})
	if code != http.StatusCreated {
		t.Fatalf("create connection: %d %v", code, m)
	}
	req, _ := http.NewRequest(http.MethodPost, e.ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got strings.Builder
	sc := bufio.NewScanner(resp.Body)
	signalled := false
	for sc.Scan() {
		got.WriteString(sc.Text() + "\n")
		if !signalled && strings.Contains(sc.Text(), "Hello") {
			signalled = true
			close(gotFirst)
		}
	}
	if !signalled {
		close(gotFirst)
	}
	s := got.String()
	if !strings.Contains(s, "Hello") || strings.Contains(s, "AFTER-THE-BAD-EVENT") || strings.Contains(s, "[DONE]") || !strings.Contains(s, "stream interrupted") {
		t.Fatalf("want the first words, then the error, nothing of what followed the malformed event:\n%s", s)
	}
}
