package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestEchoedBearerLeavesNoTail: an upstream that echoes the connection's key
// (with characters a bearer shape stops at) behind "Bearer" has the whole
// key removed (by value, before any shape): the client's answer, the request
// log and the connection's last error hold nothing of it (before:
// "[redacted]&%key0001").
func TestEchoedBearerLeavesNoTail(t *testing.T) {
	e := newEnv(t)
	const secret = "tok-AB12&%key0001"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "invalid header Authorization: Bearer " + secret, "type": "auth"}})
		_, _ = w.Write(b) // Go escapes & as \u0026, as many upstreams do
		_, _ = io.WriteString(w, "")
	}))
	defer up.Close()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "echo",
		"apiKey": secret, "baseUrl": up.URL + "/v1", "models": []string{"gpt-4o-mini"}, "verify": false})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	resp, answer := e.chat("gpt-4o-mini", false, nil)
	if resp.StatusCode < 400 {
		t.Fatalf("chat: %d %s", resp.StatusCode, answer)
	}
	_, logs := e.do("GET", "/api/logs", nil, map[string]string{"Authorization": "Bearer " + e.token})
	_, conn := e.do("GET", "/api/providers/"+id, nil, map[string]string{"Authorization": "Bearer " + e.token})
	for what, b := range map[string][]byte{"answer": answer, "logs": logs, "connection": conn} {
		if s := string(b); strings.Contains(s, "key0001") || strings.Contains(s, "AB12") {
			t.Errorf("the %s holds part of the key: %s", what, s)
		}
	}
	if !strings.Contains(string(answer), "[redacted]") {
		t.Errorf("the upstream's words did not reach the client redacted: %s", answer)
	}
}

// TestBaseURLWithCredentialsRefused: a baseUrl carrying a credential is
// refused on create and edit with 400 BASE_URL_HAS_CREDENTIALS naming the
// field, never the value; nothing is stored or audited with it, and one
// stored before (an old database) is shown masked.
func TestBaseURLWithCredentialsRefused(t *testing.T) {
	e := newEnv(t)
	bad := []string{
		"https://user:PWsecret1@api.example.com/v1",
		"https://PWsecret2@api.example.com/v1",
		"https://api.example.com/v1?api-key=PWsecret3",
		"https://api.example.com/v1?key=PWsecret4",
		"https://api.example.com/v1?token=PWsecret5",
	}
	check := func(what string, code int, m map[string]any) {
		t.Helper()
		errObj, _ := m["error"].(map[string]any)
		if code != http.StatusBadRequest || errObj["code"] != "BASE_URL_HAS_CREDENTIALS" || errObj["param"] != "baseUrl" {
			t.Errorf("%s: %d %v", what, code, m)
		}
		if b, _ := json.Marshal(m); strings.Contains(string(b), "PWsecret") {
			t.Errorf("%s: the answer repeats the secret: %s", what, b)
		}
	}
	for _, u := range bad {
		code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "x",
			"apiKey": "k", "baseUrl": u, "models": []string{"gpt-4o-mini"}})
		check("create "+u, code, m)
	}
	id := e.addConn("plain", "k-plain", 1)
	for _, u := range bad {
		code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"baseUrl": u})
		check("edit "+u, code, m)
	}
	_, list := e.do("GET", "/api/providers", nil, map[string]string{"Authorization": "Bearer " + e.token})
	_, audit := e.do("GET", "/api/audit?limit=500", nil, map[string]string{"Authorization": "Bearer " + e.token})
	for what, b := range map[string][]byte{"connections": list, "audit": audit} {
		if strings.Contains(string(b), "PWsecret") {
			t.Errorf("the %s hold a refused credential: %s", what, b)
		}
	}

	// A row stored before the rule (an old database, a restore) is shown masked.
	row, err := e.srv.Store().Connection(id)
	if err != nil {
		t.Fatal(err)
	}
	row.BaseURL = "https://user:PWsecret6@api.example.com/v1?api-key=PWsecret7&api-version=1"
	if err := e.srv.Store().SaveConnection(&row); err != nil {
		t.Fatal(err)
	}
	_, one := e.do("GET", "/api/providers/"+id, nil, map[string]string{"Authorization": "Bearer " + e.token})
	got := gjson.GetBytes(one, "connection.baseUrl").String()
	if got == "" {
		got = gjson.GetBytes(one, "baseUrl").String()
	}
	if strings.Contains(string(one), "PWsecret") || got != "https://[redacted]@api.example.com/v1?api-key=[redacted]&api-version=1" {
		t.Errorf("stored credential shown: baseUrl %q in %s", got, one)
	}
}

// TestGeminiBodyModelNeverReachesUpstream: on the Gemini-native routes the
// URL names the model (checked against the key's allowedModels); a "model"
// in the body, in any spelling a JSON reader matches, is removed before the
// body goes upstream.
func TestGeminiBodyModelNeverReachesUpstream(t *testing.T) {
	e := newEnv(t)
	e.addGeminiConn("gem", "g39-gem", 1)
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "flash-only", "allowedModels": []string{"gemini-2.5-flash"}})
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %v", code, m)
	}
	hdr := map[string]string{"x-goog-api-key": m["key"].(string)}
	contents := `"contents":[{"role":"user","parts":[{"text":"hi"}]}]`
	for _, body := range []string{
		`{"model":"gemini-2.5-pro",` + contents + `}`,
		`{"mod\u0065l":"gemini-2.5-pro",` + contents + `}`,
		`{` + contents + `,"Model":"gemini-2.5-pro","generationConfig":{"temperature":0.5}}`,
	} {
		for _, path := range []string{"gemini-2.5-flash:generateContent", "gemini-2.5-flash:streamGenerateContent?alt=sse"} {
			resp, out := e.do("POST", "/v1beta/models/"+path, body, hdr)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: %d %s", path, body, resp.StatusCode, out)
			}
			_, sent := e.up.LastRequest("g39-gem")
			if strings.Contains(strings.ToLower(string(sent)), "gemini-2.5-pro") || strings.Contains(string(sent), `mod\u0065l`) {
				t.Errorf("%s: the body's model reached the upstream: %s", path, sent)
			}
			if gjson.GetBytes(sent, "contents.#").Int() != 1 || !json.Valid(sent) {
				t.Errorf("%s: upstream body %s", path, sent)
			}
		}
	}
	_, sent := e.up.LastRequest("g39-gem")
	if gjson.GetBytes(sent, "generationConfig.temperature").Float() != 0.5 {
		t.Errorf("the rest of the body was lost: %s", sent)
	}
}

// TestPlaygroundObeysItsKey: the playground runs as its key, restrictions
// included: a model outside its allowedModels, a connection outside its
// allowedConnections and a key without the inference scope are refused as
// they are for any client holding that key.
func TestPlaygroundObeysItsKey(t *testing.T) {
	e := newEnv(t)
	a := e.addConn("a", "pg-a", 1)
	b := e.addConn("b", "pg-b", 2)
	code, k := e.mgmt("POST", "/api/playground/key", nil)
	if code != http.StatusOK {
		t.Fatalf("playground key: %d %v", code, k)
	}
	keyID := k["id"].(string)
	mgmt := map[string]string{"Authorization": "Bearer " + e.token}
	chat := func(model, query string) (int, string, []byte) {
		t.Helper()
		body := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		resp, out := e.do("POST", "/api/playground/v1/chat/completions"+query, body, mgmt)
		return resp.StatusCode, gjson.GetBytes(out, "error.code").String(), out
	}
	if st, _, out := chat("gpt-4o-mini", ""); st != http.StatusOK {
		t.Fatalf("unrestricted: %d %s", st, out)
	}
	patch := func(v map[string]any) {
		t.Helper()
		if code, m := e.mgmt("PATCH", "/api/keys/"+keyID, v); code != http.StatusOK {
			t.Fatalf("patch key: %d %v", code, m)
		}
	}

	patch(map[string]any{"allowedModels": []string{"gpt-4o"}})
	if st, c, out := chat("gpt-4o-mini", ""); st != http.StatusForbidden || c != "MODEL_NOT_ALLOWED" {
		t.Errorf("model outside allowedModels: %d %s", st, out)
	}

	patch(map[string]any{"allowedModels": []string{}, "allowedConnections": []string{b}})
	hitsA := e.up.Hits("pg-a")
	if st, c, out := chat("gpt-4o-mini", "?connection="+a); st != http.StatusForbidden || c != "CONNECTION_NOT_ALLOWED" {
		t.Errorf("?connection outside allowedConnections: %d %s", st, out)
	}
	if st, _, out := chat("gpt-4o-mini", ""); st != http.StatusOK || !strings.Contains(string(out), "Hello from pg-b") {
		t.Errorf("allowedConnections [b]: %d %s", st, out)
	}
	if n := e.up.Hits("pg-a"); n != hitsA {
		t.Errorf("a connection outside allowedConnections was called %d times", n-hitsA)
	}

	patch(map[string]any{"allowedConnections": []string{}, "scopes": []string{"lease:exclusive"}})
	if st, c, out := chat("gpt-4o-mini", ""); st != http.StatusForbidden || c != "SCOPE_REQUIRED" {
		t.Errorf("no inference scope: %d %s", st, out)
	}
}
