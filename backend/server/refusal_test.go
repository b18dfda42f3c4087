package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
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

// refusingUpstream is an OpenAI-compatible upstream whose stream answers with
// the events given, as OpenAI's chat completions reference streams a refusal:
// its text in choices[].delta.refusal, a chunk per piece.
func refusingUpstream(t *testing.T, events ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range events {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// refusalChunk is one chunk of a refusal stream (OpenAI's wire).
func refusalChunk(delta, finish string) string {
	return `{"id":"chatcmpl-r","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":` + finish + `}]}`
}

// TestRefusalStreamIsNeverContinued (issue 41): OpenAI streams a refusal's
// text in delta.refusal and ends it with finish_reason "stop". A refusal
// ending "stop" is an answer (not EMPTY_RESPONSE); one cut before its end is
// not continued on another target (a continuation would go on writing the
// refused answer): the client gets the interruption, the next target is never
// asked.
func TestRefusalStreamIsNeverContinued(t *testing.T) {
	start := refusalChunk(`{"role":"assistant","content":"","refusal":null}`, "null")
	cases := []struct {
		name   string
		events []string
		ok     bool // the stream completes (an answer)
	}{
		{"ends stop", []string{start,
			refusalChunk(`{"refusal":"I'm sorry, "}`, "null"),
			refusalChunk(`{"refusal":"I can't help with that."}`, "null"),
			refusalChunk(`{}`, `"stop"`), `[DONE]`}, true},
		{"cut after refusal deltas", []string{start,
			refusalChunk(`{"content":"Here is "}`, "null"),
			refusalChunk(`{"refusal":"I'm sorry, I can't help with that."}`, "null")}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "shy",
				"apiKey": "sk-shy-0123456789", "baseUrl": refusingUpstream(t, c.events...), "priority": 1, "models": []string{"m1"}})
			if code != http.StatusCreated {
				t.Fatalf("create: %d %v", code, m)
			}
			// The next target honours a prefill (vLLM's flag): it would continue.
			code, m = e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "next",
				"apiKey": "key-b", "baseUrl": e.upURL, "priority": 2, "models": []string{"m1"},
				"providerSpecificData": map[string]any{"assistantPrefill": "vllm"}})
			if code != http.StatusCreated {
				t.Fatalf("create: %d %v", code, m)
			}
			resp, body := e.chat("m1", true, nil)
			s := string(body)
			if resp.StatusCode != 200 || strings.Contains(s, "omniroute continued") || strings.Contains(s, "omniroute restarted") {
				t.Fatalf("%d, a refusal was continued:\n%s", resp.StatusCode, s)
			}
			if n := e.up.Hits("key-b"); n != 0 {
				t.Fatalf("the next target was asked %d times to go on with a refusal:\n%s", n, s)
			}
			var refusal strings.Builder
			for _, ev := range parseSSE(t, body) {
				refusal.WriteString(gjson.Get(ev.data, "choices.0.delta.refusal").String())
			}
			if !strings.Contains(refusal.String(), "I'm sorry") {
				t.Fatalf("the refusal did not reach the client:\n%s", s)
			}
			e.restart() // flushes the request log
			_, logs := e.mgmt("GET", "/api/logs?limit=10", nil)
			rows := logs["logs"].([]any)
			if len(rows) != 1 {
				t.Fatalf("%d log rows, want 1: %v", len(rows), rows)
			}
			got, _ := rows[0].(map[string]any)["errorCode"].(string)
			if c.ok && got != "" {
				t.Fatalf("a refusal ending stop logged %s: %v", got, rows[0])
			}
			if !c.ok && (got == "" || got == "EMPTY_RESPONSE") {
				t.Fatalf("a cut refusal logged %q: %v", got, rows[0])
			}
		})
	}
}
