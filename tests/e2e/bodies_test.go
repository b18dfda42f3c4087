package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// logRow finds a request's log row by its request id (rows are written
// asynchronously: waits for it).
func (g *gatewayProc) logRow(t *testing.T, requestID string) map[string]any {
	t.Helper()
	var row map[string]any
	waitFor(t, "the log row of "+requestID, func() bool {
		m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs?requestId="+requestID, nil)
		logs, _ := m["logs"].([]any)
		if len(logs) == 1 {
			row, _ = logs[0].(map[string]any)
		}
		return row != nil
	})
	return row
}

// newestRequestID is the request id of the newest log row of key keyID.
func (g *gatewayProc) newestRequestID(t *testing.T, keyID string, n int) []map[string]any {
	t.Helper()
	var rows []map[string]any
	waitFor(t, "log rows", func() bool {
		rows = rows[:0]
		m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs?keyId="+keyID, nil)
		logs, _ := m["logs"].([]any)
		for _, l := range logs {
			rows = append(rows, l.(map[string]any))
		}
		return len(rows) >= n
	})
	return rows
}

// TestBodyCapture: capture on for one key keeps that key's bodies — the
// client's Anthropic request and streamed answer, the OpenAI request sent
// upstream and its SSE answer — redacted (a pasted sk- key, a bearer token and
// the connection's own secret by value), and nothing for another key or a
// private one. Off by default.
func TestBodyCapture(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	const connSecret = "conn-secret-bbbb"
	g.addConn("primary", upURL, "conn-secret-aaaa", 1)
	g.addConn("secondary", upURL, connSecret, 2)
	up.SetFault("conn-secret-aaaa", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})

	if m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/capture", nil); m["enabled"] != false || m["active"] != false {
		t.Fatalf("capture not off by default: %v", m)
	}
	mkKey := func(name string) (id, value string) {
		m := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{"name": name})
		return m["id"].(string), m["key"].(string)
	}
	capID, capKey := mkKey("captured")
	otherID, otherKey := mkKey("other")
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/capture", map[string]any{"enabled": true, "forMinutes": 10, "keyIds": []string{capID}})
	if code, m := g.mgmt(http.MethodPatch, "/api/capture", map[string]any{"keyIds": []string{"nope"}}); code != http.StatusBadRequest {
		t.Fatalf("unknown key: %d %v", code, m)
	}

	prompt := "my key is sk-live-abcdefghijklmnopqrst, header Bearer tok_1234567890abcdef, upstream " + connSecret
	send := func(key string) {
		body := map[string]any{"model": "openai-compatible/gpt-4o-mini", "max_tokens": 64, "stream": true,
			"messages": []any{map[string]any{"role": "user", "content": prompt}}}
		resp, out := g.do(http.MethodPost, "/v1/messages", body, map[string]string{"x-api-key": key, "anthropic-version": "2023-06-01"})
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("event: message_stop")) {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
	}
	send(capKey)
	send(otherKey)

	row := g.newestRequestID(t, capID, 1)[0]
	if row["hasBodies"] != true {
		t.Fatalf("captured key's row has no bodies: %v", row)
	}
	other := g.newestRequestID(t, otherID, 1)[0]
	if other["hasBodies"] == true {
		t.Fatalf("other key's row has bodies: %v", other)
	}
	if code, _ := g.mgmt(http.MethodGet, "/api/logs/"+other["requestId"].(string)+"/bodies", nil); code != http.StatusNotFound {
		t.Fatalf("other key's bodies: status %d, want 404", code)
	}
	b := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs/"+row["requestId"].(string)+"/bodies", nil)
	all := ""
	for _, f := range []string{"clientRequest", "upstreamRequest", "upstreamResponse", "clientResponse"} {
		s, _ := b[f].(string)
		if s == "" {
			t.Errorf("%s is empty", f)
		}
		all += s
	}
	for _, secret := range []string{"sk-live-abcdefghijklmnopqrst", "tok_1234567890abcdef", connSecret} {
		if strings.Contains(all, secret) {
			t.Errorf("%q survived in the captured bodies", secret)
		}
	}
	if b["clientFormat"] != "anthropic" || b["upstreamFormat"] != "openai" {
		t.Errorf("formats %v → %v", b["clientFormat"], b["upstreamFormat"])
	}
	// The translation is visible: Anthropic in, OpenAI upstream (the served
	// attempt), SSE kept on both sides.
	var up1 map[string]any
	if err := json.Unmarshal([]byte(b["upstreamRequest"].(string)), &up1); err != nil || up1["messages"] == nil || up1["max_tokens"] == nil && up1["max_completion_tokens"] == nil {
		t.Errorf("upstream request is not the OpenAI translation (%v): %s", err, b["upstreamRequest"])
	}
	if !strings.Contains(b["clientRequest"].(string), `"[redacted]"`) && !strings.Contains(b["clientRequest"].(string), "[redacted]") {
		t.Errorf("client request not redacted: %s", b["clientRequest"])
	}
	if !strings.HasPrefix(b["upstreamResponse"].(string), "data: ") || !strings.Contains(b["clientResponse"].(string), "event: message_start") {
		t.Errorf("SSE not kept:\nupstream %.200s\nclient %.200s", b["upstreamResponse"], b["clientResponse"])
	}

	// A private key is never captured, even when capture covers every key.
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/keys/"+capID, map[string]any{"private": true})
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/capture", map[string]any{"keyIds": []string{}})
	send(capKey)
	rows := g.newestRequestID(t, capID, 2)
	if rows[0]["hasBodies"] == true {
		t.Fatalf("private key's request was captured: %v", rows[0])
	}
}

// TestPlayground: the dashboard playground sends a real streamed request
// under its own key (created on first use, listed as "playground", its
// secret never answered), and its log row — named by the answer's
// X-OmniRoute-Request-Id — shows the failover from the failing connection;
// ?connection= pins one connection.
func TestPlayground(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})

	k := s.gw.mustMgmt(http.StatusOK, http.MethodPost, "/api/playground/key", nil)
	if k["name"] != "playground" || k["key"] != nil {
		t.Fatalf("playground key %v", k)
	}
	resp, out := s.gw.do(http.MethodPost, "/api/playground/v1/chat/completions", chatBody("openai-compatible/gpt-4o-mini", true),
		map[string]string{"Authorization": "Bearer " + s.gw.token})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	if text, done := sseContent(t, out); text == "" || !done {
		t.Fatalf("stream %q done=%v", text, done)
	}
	id := resp.Header.Get("X-OmniRoute-Request-Id")
	row := s.gw.logRow(t, id)
	if row["apiKeyId"] != k["id"] || row["connectionId"] != s.secondary {
		t.Fatalf("row %v", row)
	}
	attempts, _ := row["attempts"].([]any)
	if len(attempts) != 2 || attempts[0].(map[string]any)["connectionId"] != s.primary || attempts[1].(map[string]any)["verdict"] != "success" {
		t.Fatalf("timeline %v", attempts)
	}
	// The same key again (not a second one), listed on the Keys page.
	keys := s.gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/keys", nil)["keys"].([]any)
	n := 0
	for _, kk := range keys {
		if kk.(map[string]any)["name"] == "playground" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d playground keys, want 1", n)
	}
	// Every client format: Messages, Responses and Gemini-native (the model
	// in the URL, as the dashboard encodes it; SSE framing kept from ?alt=sse).
	for _, c := range []struct{ path, want string }{
		{"/api/playground/v1/messages", "event: message_stop"},
		{"/api/playground/v1/responses", "response.completed"},
		{"/api/playground/v1beta/models/openai-compatible%2Fgpt-4o-mini:streamGenerateContent?alt=sse", `data: {"candidates"`},
	} {
		body := map[string]any{"model": "openai-compatible/gpt-4o-mini", "max_tokens": 32, "stream": true,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		if strings.Contains(c.path, "responses") {
			body = map[string]any{"model": "openai-compatible/gpt-4o-mini", "stream": true, "input": "hi"}
		} else if strings.Contains(c.path, "v1beta") {
			body = map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}}
		}
		resp, out := s.gw.do(http.MethodPost, c.path, body, map[string]string{"Authorization": "Bearer " + s.gw.token})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: status %d, want %q in:\n%.400s", c.path, resp.StatusCode, c.want, out)
		}
	}
	// Pinned to the failing connection: no failover, its error answered.
	resp, out = s.gw.do(http.MethodPost, "/api/playground/v1/chat/completions?connection="+s.primary, chatBody("openai-compatible/gpt-4o-mini", false),
		map[string]string{"Authorization": "Bearer " + s.gw.token})
	if resp.StatusCode < 400 {
		t.Fatalf("pinned to the failing connection: status %d: %s", resp.StatusCode, out)
	}
	// Revoked: the next use makes a new key.
	s.gw.mustMgmt(http.StatusOK, http.MethodDelete, "/api/keys/"+k["id"].(string), nil)
	k2 := s.gw.mustMgmt(http.StatusOK, http.MethodPost, "/api/playground/key", nil)
	if k2["id"] == k["id"] {
		t.Fatal("revoked playground key came back")
	}
	// Without the management token: refused.
	resp, _ = s.gw.do(http.MethodPost, "/api/playground/v1/chat/completions", chatBody("openai-compatible/gpt-4o-mini", false), nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
}

// TestBodyCaptureOfAContinuedStream: a stream cut mid-answer and continued on
// another connection is captured whole upstream — the cut stream, then the
// continuation's — with both connections' secrets redacted.
func TestBodyCaptureOfAContinuedStream(t *testing.T) {
	t.Parallel()
	r := newContinueRig(t, true, nil, nil)
	r.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/capture", map[string]any{"enabled": true})
	r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
	r.expectContinued(r.ask(true), 2)
	m := r.gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs?limit=1", nil)
	row := m["logs"].([]any)[0].(map[string]any)
	if row["hasBodies"] != true {
		t.Fatalf("no bodies: %v", row)
	}
	b := r.gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs/"+row["requestId"].(string)+"/bodies", nil)
	up, _ := b["upstreamResponse"].(string)
	// The primary speaks OpenAI SSE (data: {"id":"chatcmpl…), the fallback Anthropic's (event: message_start).
	if !strings.Contains(up, "chat.completion.chunk") || !strings.Contains(up, "event: message_start") {
		t.Errorf("upstream answer is not the cut stream plus the continuation:\n%s", up)
	}
	if !strings.Contains(b["clientResponse"].(string), ": omniroute continued the answer") {
		t.Errorf("client answer lacks the continuation:\n%s", b["clientResponse"])
	}
}

// TestCaptureAndPlaygroundBadInput: bad capture settings, unknown bodies and
// bad playground calls get a clear 4xx in the error envelope, never a 500.
func TestCaptureAndPlaygroundBadInput(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), 0)
	mgmt := map[string]string{"Authorization": "Bearer " + g.token}
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"retention 0", "PATCH", "/api/capture", map[string]any{"retentionMinutes": 0}, 400, "INVALID_FIELD"},
		{"body cap too small", "PATCH", "/api/capture", map[string]any{"maxBodyBytes": 10}, 400, "INVALID_FIELD"},
		{"total below body cap", "PATCH", "/api/capture", map[string]any{"maxBodyBytes": 4096, "maxTotalBytes": 4095}, 400, "INVALID_FIELD"},
		{"until not a time", "PATCH", "/api/capture", map[string]any{"until": "soon"}, 400, "INVALID_FIELD"},
		{"until negative", "PATCH", "/api/capture", map[string]any{"until": -5}, 400, "INVALID_FIELD"},
		{"forMinutes 0", "PATCH", "/api/capture", map[string]any{"forMinutes": 0}, 400, "INVALID_FIELD"},
		{"forMinutes over a week", "PATCH", "/api/capture", map[string]any{"forMinutes": 10081}, 400, "INVALID_FIELD"},
		{"unknown key", "PATCH", "/api/capture", map[string]any{"keyIds": []string{"nope"}}, 400, "UNKNOWN_KEY"},
		{"unknown field", "PATCH", "/api/capture", `{"enabled":true,"bogus":1}`, 400, ""},
		{"bodies of an unknown request", "GET", "/api/logs/nope/bodies", nil, 404, "BODIES_NOT_FOUND"},
		{"playground unknown route", "POST", "/api/playground/v1/embeddings", map[string]any{"model": "m"}, 404, "ROUTE_NOT_FOUND"},
		{"playground unknown connection", "POST", "/api/playground/v1/chat/completions?connection=nope", chatBody("m", false), 400, "UNKNOWN_CONNECTION"},
		{"playground without a model", "POST", "/api/playground/v1/chat/completions", map[string]any{"messages": []any{}}, 400, "MODEL_REQUIRED"},
	} {
		resp, body := g.do(c.method, c.path, c.body, mgmt)
		checkError(t, c.name, resp, body, c.status, c.code)
	}
	// Nothing was changed by the refused settings.
	if m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/capture", nil); m["enabled"] != false || m["retentionMinutes"] != float64(1440) {
		t.Errorf("settings changed by refused input: %v", m)
	}
}
