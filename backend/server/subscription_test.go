package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/wall"
	"omniroute/tests/fakeupstream"
)

// Client ids of the catalogue, which the fake token server insists on.
const (
	claudeClientID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
	codexClientID  = "app_EMoamEEZ73f0CkXaXp7hrann"
)

// subEnv is a gateway whose HOME is a temporary directory holding fake CLI
// logins, with the OAuth token endpoints pointed at a fake token server.
type subEnv struct {
	*env
	home   string
	tokens *fakeupstream.TokenServer
}

func newSubEnv(t *testing.T, clientID, provider string) *subEnv {
	t.Helper()
	e := newEnv(t)
	s := &subEnv{env: e, home: t.TempDir(), tokens: fakeupstream.NewTokenServer(clientID, "rt-initial")}
	t.Cleanup(s.tokens.Close)
	e.envs["HOME"] = s.home
	e.envs["OMNIROUTE_"+strings.ToUpper(provider)+"_OAUTH_TOKEN_URL"] = s.tokens.URL()
	// A Claude import asks the upstream for its models: the fake answers
	// with the catalogue's import list, so the served names stay the same.
	e.envs["OMNIROUTE_"+strings.ToUpper(provider)+"_OAUTH_BASE_URL"] = e.upURL
	if p, ok := registry.Catalog(nil).Lookup(provider); ok && p.OAuth != nil {
		e.up.SetModels(p.OAuth.Models)
	}
	e.restart()
	return s
}

func writeFile(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// claudeLogin writes Claude Code's ~/.claude/.credentials.json and ~/.claude.json.
func (s *subEnv) claudeLogin(access string, expiresAt time.Time) string {
	path := filepath.Join(s.home, ".claude", ".credentials.json")
	writeFile(s.t, path, map[string]any{"claudeAiOauth": map[string]any{"accessToken": access, "refreshToken": "rt-initial",
		"expiresAt": expiresAt.UnixMilli(), "scopes": []string{"user:inference"}, "subscriptionType": "max"}})
	writeFile(s.t, filepath.Join(s.home, ".claude.json"), map[string]any{"oauthAccount": map[string]any{
		"accountUuid": "acct-claude-1", "emailAddress": "dev@example.com", "organizationUuid": "org-claude-1"}})
	return path
}

func jwt(claims map[string]any) string {
	b, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(b) + ".sig"
}

// codexLogin writes Codex's ~/.codex/auth.json.
func (s *subEnv) codexLogin(expiresAt time.Time) (path, access string) {
	access = jwt(map[string]any{"exp": expiresAt.Unix(), "sub": "user-1"})
	path = filepath.Join(s.home, ".codex", "auth.json")
	writeFile(s.t, path, map[string]any{"OPENAI_API_KEY": nil, "tokens": map[string]any{
		"id_token": jwt(map[string]any{"email": "coder@example.com"}), "access_token": access, "refresh_token": "rt-initial",
		"account_id": "acct-codex-1"}, "last_refresh": "2026-01-01T00:00:00Z"})
	return path, access
}

// importedClaude is a Claude Code login (access token, expiry) imported as
// a connection routed to the fake upstream: its id.
func (s *subEnv) importedClaude(access string, expiresAt time.Time) string {
	s.t.Helper()
	s.claudeLogin(access, expiresAt)
	code, m := s.importLogin("claude-code")
	if code != http.StatusCreated {
		s.t.Fatalf("import: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	s.setBaseURL(id, s.upURL)
	return id
}

func (s *subEnv) importLogin(source string) (int, map[string]any) {
	s.t.Helper()
	return s.mgmt("POST", "/api/providers/import", map[string]any{"source": source})
}

func (s *subEnv) connection(id string) map[string]any {
	s.t.Helper()
	code, m := s.mgmt("GET", "/api/providers/"+id, nil)
	if code != 200 {
		s.t.Fatalf("get connection: %d %v", code, m)
	}
	return m["connection"].(map[string]any)
}

func (s *subEnv) setBaseURL(id, base string) {
	s.t.Helper()
	if code, m := s.mgmt("PATCH", "/api/providers/"+id, map[string]any{"verify": false, "baseUrl": base}); code != 200 {
		s.t.Fatalf("patch baseUrl: %d %v", code, m)
	}
}

func (s *subEnv) messages(model string, stream bool, extra map[string]any) (*http.Response, []byte) {
	s.t.Helper()
	body := map[string]any{"model": model, "max_tokens": 64, "stream": stream,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	for k, v := range extra {
		body[k] = v
	}
	return s.post("/v1/messages", body, nil)
}

// TestImportClaudeCodeLoginIsRoutableWithMaskedSecrets: the CLI's file is
// read, never changed; the connection is created with sealed, masked
// secrets, routes requests with the OAuth beta, and a re-import updates it in place.
func TestImportClaudeCodeLoginIsRoutableWithMaskedSecrets(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	access := "sk-ant-oat01-imported-access-token"
	path := s.claudeLogin(access, s.clk.Now().Add(8*time.Hour))
	before, _ := os.ReadFile(path)
	st0, _ := os.Stat(path)

	code, m := s.importLogin("claude-code")
	if code != http.StatusCreated || m["created"] != true {
		t.Fatalf("import: %d %v", code, m)
	}
	c := m["connection"].(map[string]any)
	id := c["id"].(string)
	raw, _ := json.Marshal(m)
	if bytes.Contains(raw, []byte(access)) || bytes.Contains(raw, []byte("rt-initial")) {
		t.Fatalf("a secret leaked into the API answer: %s", raw)
	}
	if c["provider"] != "claude" || c["authType"] != "oauth" || c["accessTokenMasked"] != "sk-a…oken" || c["hasRefreshToken"] != true {
		t.Fatalf("connection %v", c)
	}
	psd := c["providerSpecificData"].(map[string]any)
	if psd["accountId"] != "acct-claude-1" || psd["organizationUUID"] != "org-claude-1" || psd["importedFrom"] != "claude-code" {
		t.Fatalf("providerSpecificData %v", psd)
	}
	after, _ := os.ReadFile(path)
	st1, _ := os.Stat(path)
	if !bytes.Equal(before, after) || !st0.ModTime().Equal(st1.ModTime()) || st1.Mode() != st0.Mode() {
		t.Fatal("the CLI's credential file was modified")
	}

	s.setBaseURL(id, s.upURL)
	resp, body := s.messages("claude/claude-sonnet-4-5", false, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), fakeupstream.Content(access)) {
		t.Fatalf("request: %d %s", resp.StatusCode, body)
	}
	h, _ := s.up.LastRequest(access)
	if h.Get("Authorization") != "Bearer "+access || !strings.Contains(h.Get("anthropic-beta"), "oauth-2025-04-20") || h.Get("X-Api-Key") != "" {
		t.Fatalf("wire headers: %v", h)
	}
	// Claude Code's own (bare) model names reach the imported account as they are.
	if resp, body := s.messages("claude-sonnet-4-5-20250929", false, nil); resp.StatusCode != 200 || s.up.LastModel(access) != "claude-sonnet-4-5-20250929" {
		t.Fatalf("bare model: %d %s", resp.StatusCode, body)
	}

	// Re-import after the CLI signed in again: same connection, new token.
	s.claudeLogin("sk-ant-oat01-second-access-token", s.clk.Now().Add(8*time.Hour))
	code, m = s.importLogin("claude-code")
	if code != http.StatusOK || m["created"] != false || m["connection"].(map[string]any)["id"] != id {
		t.Fatalf("re-import: %d %v", code, m)
	}
	if _, all := s.mgmt("GET", "/api/providers", nil); len(all["connections"].([]any)) != 1 {
		t.Fatalf("re-import created a second connection: %v", all)
	}
	if c := s.connection(id); c["baseUrl"] != s.upURL {
		t.Fatalf("re-import lost the user's settings: %v", c)
	}
}

func TestImportBadInputAnswers4xx(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	cases := []struct {
		body map[string]any
		code int
		err  string
	}{
		{map[string]any{}, 400, "SOURCE_REQUIRED"},
		{map[string]any{"source": "vscode"}, 400, "UNKNOWN_IMPORT_SOURCE"},
		{map[string]any{"source": "codex"}, 404, "CREDENTIALS_NOT_FOUND"},
		{map[string]any{"source": "codex", "path": "relative/auth.json"}, 400, "INVALID_PATH"},
	}
	for _, c := range cases {
		code, m := s.mgmt("POST", "/api/providers/import", c.body)
		got, _ := m["error"].(map[string]any)
		if code != c.code || got["code"] != c.err {
			t.Errorf("%v: %d %v", c.body, code, m)
		}
	}
	// "~/" is the user's home.
	s.claudeLogin("sk-ant-oat01-tilde-path-token-1", s.clk.Now().Add(time.Hour))
	if code, m := s.mgmt("POST", "/api/providers/import", map[string]any{"source": "claude-code", "path": "~/.claude/.credentials.json"}); code != 201 {
		t.Errorf("~/ path: %d %v", code, m)
	}
	bad := filepath.Join(s.home, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"tokens":{}}`), 0o600)
	if code, m := s.mgmt("POST", "/api/providers/import", map[string]any{"source": "codex", "path": bad}); code != 400 {
		t.Errorf("empty login: %d %v", code, m)
	}
}

// TestTokenNearExpiryRefreshedOnceUnderConcurrency: 50 concurrent requests
// on a token 30 s from expiry cause exactly one refresh; every request is
// sent with the new token, which is persisted.
func TestTokenNearExpiryRefreshedOnceUnderConcurrency(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	old := "sk-ant-oat01-about-to-expire"
	id := s.importedClaude(old, s.clk.Now().Add(30*time.Second))

	release := s.tokens.Hold()
	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := s.messages("claude/claude-sonnet-4-5", false, nil)
			codes[i] = resp.StatusCode
		}()
	}
	// The one exchange is held at the token server while the herd arrives.
	for deadline := time.Now().Add(10 * time.Second); s.tokens.Calls() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); inFlight(s) < 50 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := inFlight(s); n != 50 {
		t.Fatalf("%d requests in flight at the release, want all 50 waiting on the one refresh", n)
	}
	release()
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("request %d: %d", i, c)
		}
	}
	if n := s.tokens.Calls(); n != 1 {
		t.Fatalf("token endpoint called %d times, want exactly 1", n)
	}
	// (The old token's one request is the import's model list.)
	if s.up.Hits("at-1") != 50 || s.up.ModelHits(old, "claude-sonnet-4-5") != 0 {
		t.Fatalf("hits new %d old %d", s.up.Hits("at-1"), s.up.ModelHits(old, "claude-sonnet-4-5"))
	}
	// Persisted: a restarted gateway uses the refreshed token without refreshing.
	s.restart()
	if resp, _ := s.messages("claude/claude-sonnet-4-5", false, nil); resp.StatusCode != 200 || s.up.Hits("at-1") != 51 || s.tokens.Calls() != 1 {
		t.Fatalf("after restart: %d hits %d calls %d", resp.StatusCode, s.up.Hits("at-1"), s.tokens.Calls())
	}
	row, _ := s.srv.Store().Connection(id)
	if row.ExpiresAt != s.clk.Now().Add(time.Hour).UnixMilli() || strings.Contains(row.AccessTokenEnc, "at-1") {
		t.Fatalf("persisted expiry %d (sealed token must not be plaintext)", row.ExpiresAt)
	}
}

// TestUpstream401RefreshesOnce: a token the upstream refuses before its
// expiry is refreshed once and the request retried with the new one.
func TestUpstream401RefreshesOnce(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	old := "sk-ant-oat01-revoked-early-token"
	s.importedClaude(old, s.clk.Now().Add(8*time.Hour))
	s.up.SetFault(old, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	resp, body := s.messages("claude/claude-sonnet-4-5", false, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), fakeupstream.Content("at-1")) || s.tokens.Calls() != 1 {
		t.Fatalf("%d %s calls %d", resp.StatusCode, body, s.tokens.Calls())
	}
}

// TestThreeRefreshFailuresExpireAndReimportHeals: the guide's expired rule
// (EXPIRED_RETRY_MAX = 3 with backoff), then a re-import clears it.
func TestThreeRefreshFailuresExpireAndReimportHeals(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	id := s.importedClaude("sk-ant-oat01-already-expired-x", s.clk.Now().Add(-time.Minute))
	s.tokens.Fail(http.StatusBadRequest)

	for i := 1; i <= 3; i++ {
		resp, body := s.messages("claude/claude-sonnet-4-5", false, nil)
		if resp.StatusCode < 400 {
			t.Fatalf("failure %d answered %d", i, resp.StatusCode)
		}
		c := s.connection(id)
		want := "unavailable"
		if i == 3 {
			want = "expired"
		}
		if c["testStatus"] != want || c["errorCode"] != "OAUTH_REFRESH_FAILED" {
			t.Fatalf("after failure %d: status %v code %v (%s)", i, c["testStatus"], c["errorCode"], body)
		}
		if i < 3 {
			until, _ := time.Parse(time.RFC3339Nano, c["rateLimitedUntil"].(string))
			if !until.After(s.clk.Now()) {
				t.Fatalf("failure %d did not back off", i)
			}
			s.clk.Set(until) // the backoff ends exactly here
		}
	}
	if n := s.tokens.Calls(); n != 3 {
		t.Fatalf("token endpoint called %d times, want 3", n)
	}
	// Terminal: no further refresh attempt.
	s.clk.Advance(time.Hour)
	s.messages("claude/claude-sonnet-4-5", false, nil)
	if n := s.tokens.Calls(); n != 3 {
		t.Fatalf("an expired connection was tried again (%d calls)", n)
	}

	// The user signs in again with the CLI and re-imports.
	fresh := "sk-ant-oat01-after-new-sign-in"
	s.claudeLogin(fresh, s.clk.Now().Add(8*time.Hour))
	s.tokens.Fail(0)
	if code, m := s.importLogin("claude-code"); code != 200 || m["connection"].(map[string]any)["testStatus"] != "active" {
		t.Fatalf("re-import: %d %v", code, m)
	}
	resp, body := s.messages("claude/claude-sonnet-4-5", false, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), fakeupstream.Content(fresh)) {
		t.Fatalf("after re-import: %d %s", resp.StatusCode, body)
	}
}

func (s *subEnv) codexConn() (id, access string) {
	s.t.Helper()
	_, access = s.codexLogin(s.clk.Now().Add(10 * 24 * time.Hour))
	code, m := s.importLogin("codex")
	if code != http.StatusCreated {
		s.t.Fatalf("import codex: %d %v", code, m)
	}
	id = m["connection"].(map[string]any)["id"].(string)
	s.setBaseURL(id, strings.TrimSuffix(s.upURL, "/v1")+"/backend-api/codex")
	return id, access
}

// TestCodexClientsEndToEnd: the Codex CLI (Responses, passthrough), a Chat
// client and Claude Code (Messages, with a tool) through a codex connection
// to the fake Codex backend, which checks the wire contract.
func TestCodexClientsEndToEnd(t *testing.T) {
	s := newSubEnv(t, codexClientID, "codex")
	id, access := s.codexConn()
	auth := map[string]string{"Authorization": "Bearer " + s.key}

	// Codex CLI: Responses, streamed, passthrough.
	resp, body := s.do("POST", "/v1/responses", map[string]any{"model": "codex/gpt-5-codex", "stream": true, "store": false,
		"instructions": "You are Codex.", "input": []any{map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": "hi"}}}}}, auth)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "response.completed") || !strings.Contains(string(body), "Hello from") {
		t.Fatalf("responses: %d %s", resp.StatusCode, body)
	}
	h, sent := s.up.LastRequest(access)
	if msg := fakeupstream.CodexContractError(h, sent); msg != "" {
		t.Fatalf("wire contract: %s", msg)
	}
	if h.Get("chatgpt-account-id") != "acct-codex-1" || h.Get("originator") != "codex_cli_rs" || s.up.LastPath(access) != "/backend-api/codex/responses" {
		t.Fatalf("headers %v path %s", h, s.up.LastPath(access))
	}

	// The same client without streaming: one Responses object.
	resp, body = s.do("POST", "/v1/responses", map[string]any{"model": "codex/gpt-5-codex", "input": "hi"}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "object").String() != "response" ||
		gjson.GetBytes(body, "output.0.content.0.text").String() != fakeupstream.Content(access) {
		t.Fatalf("responses JSON: %d %s", resp.StatusCode, body)
	}

	// previous_response_id cannot work against a backend that stores nothing.
	hits := s.up.Hits(access)
	resp, body = s.do("POST", "/v1/responses", map[string]any{"model": "codex/gpt-5-codex", "input": "hi", "previous_response_id": "resp_1"}, auth)
	if resp.StatusCode != 400 || errorCode(body) != "PREVIOUS_RESPONSE_UNSUPPORTED" || s.up.Hits(access) != hits {
		t.Fatalf("previous_response_id: %d %s", resp.StatusCode, body)
	}

	// A Chat client, not streaming: the backend still streams, the client gets JSON.
	resp, body = s.do("POST", "/v1/chat/completions", map[string]any{"model": "codex/gpt-5-codex", "max_tokens": 50, "temperature": 0.2,
		"messages": []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "hi"}}}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content(access) {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	_, sent = s.up.LastRequest(access)
	if gjson.GetBytes(sent, "instructions").String() != "Be brief." || gjson.GetBytes(sent, "temperature").Exists() {
		t.Fatalf("translated body %s", sent)
	}

	// Claude Code: Messages, streamed, with a tool: the function call comes back as tool_use.
	resp, body = s.messages("codex/gpt-5-codex", true, map[string]any{"tools": []any{weatherTool}})
	events := parseSSE(t, body)
	var sawTool, sawStop bool
	for _, ev := range events {
		if ev.event == "content_block_start" && gjson.Get(ev.data, "content_block.type").String() == "tool_use" &&
			gjson.Get(ev.data, "content_block.name").String() == "get_weather" {
			sawTool = true
		}
		if ev.event == "message_delta" && gjson.Get(ev.data, "delta.stop_reason").String() == "tool_use" {
			sawStop = true
		}
	}
	if resp.StatusCode != 200 || !sawTool || !sawStop {
		t.Fatalf("messages: %d tool %v stop %v\n%s", resp.StatusCode, sawTool, sawStop, body)
	}
	_, sent = s.up.LastRequest(access)
	if gjson.GetBytes(sent, "tools.0.name").String() != "get_weather" || gjson.GetBytes(sent, "tools.0.type").String() != "function" {
		t.Fatalf("tools not translated: %s", sent)
	}

	// The usage windows the backend reported are on the connection.
	q := s.connection(id)["quota"].(map[string]any)
	five, week := q["fiveHour"].(map[string]any), q["weekly"].(map[string]any)
	if five["utilization"] != 0.42 || week["utilization"] != 0.1 {
		t.Fatalf("quota %v", q)
	}
	if r, _ := time.Parse(time.RFC3339, five["resetsAt"].(string)); !r.Equal(s.clk.Now().Add(time.Hour).Truncate(time.Second)) {
		t.Fatalf("5h reset %v", five["resetsAt"])
	}
	// And in the management health answer, by the most used window.
	_, health := s.mgmt("GET", "/api/monitoring/health", nil)
	subs, _ := health["subscriptions"].([]any)
	if len(subs) != 1 || subs[0].(map[string]any)["connectionId"] != id || subs[0].(map[string]any)["window"] != "fiveHour" ||
		subs[0].(map[string]any)["utilization"] != 0.42 {
		t.Fatalf("health subscriptions %v", health["subscriptions"])
	}
}

// TestClaudeWallLaneEndToEnd: a wall 429 on a connection with
// lowPriorityMode is retried at once on the same account in the slow lane,
// is not cooled, and every later request carries the header; without the
// opt-in the same 429 takes the normal cooldown path.
func TestClaudeWallLaneEndToEnd(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	access := "sk-ant-oat01-wall-account-token"
	id := s.importedClaude(access, s.clk.Now().Add(8*time.Hour))
	reset := s.clk.Now().Add(2 * time.Hour)
	wallHdr := map[string]string{wall.HeaderStatus: "rejected", wall.HeaderSlowOffer: "treatment",
		wall.HeaderReset: strconv.FormatInt(reset.Unix(), 10), "anthropic-ratelimit-unified-5h-utilization": "1.0",
		"anthropic-ratelimit-unified-5h-reset":       strconv.FormatInt(reset.Unix(), 10),
		"anthropic-ratelimit-unified-7d-utilization": "0.35", "anthropic-ratelimit-unified-7d-reset": strconv.FormatInt(reset.Add(72*time.Hour).Unix(), 10)}

	// Opt-in off: an ordinary cooldown.
	s.up.SetFault(access, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: wallHdr, Times: 1})
	if resp, _ := s.messages("claude/claude-sonnet-4-5", false, nil); resp.StatusCode == 200 {
		t.Fatal("without the opt-in the wall 429 must not be retried")
	}
	c := s.connection(id)
	if c["testStatus"] != "unavailable" || c["wall"].(map[string]any)["inLane"] != false {
		t.Fatalf("opt-in off: %v", c)
	}
	if q := c["quota"].(map[string]any); q["fiveHour"].(map[string]any)["utilization"] != 1.0 || q["status"] != "rejected" {
		t.Fatalf("quota from the wall answer: %v", q)
	}
	until, _ := time.Parse(time.RFC3339Nano, c["rateLimitedUntil"].(string))
	s.clk.Set(until)

	// Opt in through the connection's providerSpecificData.
	psd := c["providerSpecificData"].(map[string]any)
	psd["lowPriorityMode"] = true
	if code, m := s.mgmt("PATCH", "/api/providers/"+id, map[string]any{"providerSpecificData": psd}); code != 200 {
		t.Fatalf("opt in: %d %v", code, m)
	}
	s.up.SetFault(access, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: wallHdr, Times: 1})
	hits := s.up.Hits(access)
	resp, body := s.messages("claude/claude-sonnet-4-5", false, nil)
	if resp.StatusCode != 200 || s.up.Hits(access) != hits+2 {
		t.Fatalf("lane: %d %s (hits %d)", resp.StatusCode, body, s.up.Hits(access)-hits)
	}
	if resp.Header.Get("X-OmniRoute-Attempts") != "1" {
		t.Fatalf("the lane retry is part of one attempt, got %s", resp.Header.Get("X-OmniRoute-Attempts"))
	}
	h, _ := s.up.LastRequest(access)
	if h.Get("anthropic-usage-limit") != "slow" {
		t.Fatal("the retry must carry anthropic-usage-limit: slow")
	}
	c = s.connection(id)
	w := c["wall"].(map[string]any)
	if c["testStatus"] != "active" || w["inLane"] != true || w["laneUntil"] != reset.Add(time.Minute).UTC().Format(time.RFC3339) {
		t.Fatalf("after the lane was accepted: %v", c)
	}
	// The windows of the wall answer the lane consumed are still on the connection.
	if q := c["quota"].(map[string]any); q["status"] != "rejected" || q["observedAt"] != s.clk.Now().UTC().Format(time.RFC3339) {
		t.Fatalf("quota after the lane: %v", q)
	}
	if resp, _ := s.messages("claude/claude-sonnet-4-5", true, nil); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	if h, _ := s.up.LastRequest(access); h.Get("anthropic-usage-limit") != "slow" {
		t.Fatal("every request in the window carries the header")
	}
}

// TestClaudeLimitResetEndToEnd: autoLimitReset claims the reset for the
// organisation and retries at full speed.
func TestClaudeLimitResetEndToEnd(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	access := "sk-ant-oat01-reset-account-token"
	s.claudeLogin(access, s.clk.Now().Add(8*time.Hour))
	_, m := s.importLogin("claude-code")
	c := m["connection"].(map[string]any)
	id := c["id"].(string)
	psd := c["providerSpecificData"].(map[string]any)
	psd["autoLimitReset"] = true
	if code, m := s.mgmt("PATCH", "/api/providers/"+id, map[string]any{"verify": false, "providerSpecificData": psd, "baseUrl": s.upURL}); code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	s.up.SetLimitReset(&fakeupstream.LimitReset{Usage: `{"juniper_tide":{"arm":"reset","available":true}}`, Claim: `{"result":"reset"}`})
	s.up.SetFault(access, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
		Headers: map[string]string{wall.HeaderStatus: "rejected", wall.HeaderReset: fmt.Sprint(s.clk.Now().Add(time.Hour).Unix())}})
	resp, body := s.messages("claude/claude-sonnet-4-5", false, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if claims := s.up.ResetClaims(); len(claims) != 1 || claims[0] != "org-claude-1" {
		t.Fatalf("claims %v", claims)
	}
	if h, _ := s.up.LastRequest(access); h.Get("anthropic-usage-limit") != "" {
		t.Fatal("after a reset the retry is at full speed")
	}
	w := s.connection(id)["wall"].(map[string]any)
	if w["resetResult"] != "reset" || w["resetNextAt"] == nil {
		t.Fatalf("wall %v", w)
	}
}

// TestUsageWindowsFeedResetWindowRouting: two Codex accounts report their
// usage windows; a reset-window combo then prefers the one with the most left.
func TestUsageWindowsFeedResetWindowRouting(t *testing.T) {
	s := newSubEnv(t, codexClientID, "codex")
	idA, tokA := s.codexConn()
	// A second account: another auth.json, another account id.
	tokB := jwt(map[string]any{"exp": s.clk.Now().Add(24 * time.Hour).Unix(), "sub": "user-2"})
	writeFile(t, filepath.Join(s.home, "b.json"), map[string]any{"tokens": map[string]any{"access_token": tokB, "refresh_token": "rt-b", "account_id": "acct-codex-2"}})
	code, m := s.mgmt("POST", "/api/providers/import", map[string]any{"source": "codex", "path": filepath.Join(s.home, "b.json")})
	if code != http.StatusCreated {
		t.Fatalf("import b: %d %v", code, m)
	}
	idB := m["connection"].(map[string]any)["id"].(string)
	s.setBaseURL(idB, strings.TrimSuffix(s.upURL, "/v1")+"/backend-api/codex")
	for id, p := range map[string]string{idA: "ca", idB: "cb"} {
		if code, m := s.mgmt("PATCH", "/api/providers/"+id, map[string]any{"prefix": p}); code != 200 {
			t.Fatalf("prefix: %d %v", code, m)
		}
	}
	// Account B is nearly spent.
	s.up.SetFault(tokB, fakeupstream.Fault{Mode: fakeupstream.ModeLatency, Headers: map[string]string{"x-codex-primary-used-percent": "90"}})
	auth := map[string]string{"Authorization": "Bearer " + s.key}
	for _, model := range []string{"ca/gpt-5-codex", "cb/gpt-5-codex"} {
		if resp, body := s.chat(model, false, auth); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, body)
		}
	}
	s.addCombo("pool", "reset-window", map[string]any{"model": "codex/gpt-5-codex", "connectionId": idB},
		map[string]any{"model": "codex/gpt-5-codex", "connectionId": idA})
	for range 3 {
		resp, body := s.chat("pool", false, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != idA {
			t.Fatalf("served by %s (want the account with most left, %s): %d %s", resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), idA, resp.StatusCode, body)
		}
	}
	if s.up.Hits(tokA) != 4 || s.up.Hits(tokB) != 1 {
		t.Fatalf("hits a %d b %d", s.up.Hits(tokA), s.up.Hits(tokB))
	}
}

// inFlight is how many inference requests the gateway is serving.
func inFlight(s *subEnv) int64 { return s.srv.API().Gateway.InFlight() }

// TestRefreshCutByTheFirstByteDeadlineIsNotAnAuthFailure: a token endpoint
// that does not answer in time fails the attempt as a timeout; it does not
// count toward the expired rule.
func TestRefreshCutByTheFirstByteDeadlineIsNotAnAuthFailure(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	id := s.importedClaude("sk-ant-oat01-expired-slow-refresh", s.clk.Now().Add(-time.Minute))
	s.patchSettings(map[string]any{"firstByteTimeoutMs": 1000})
	release := s.tokens.Hold()
	defer release()
	resp, body := s.messages("claude/claude-sonnet-4-5", false, nil)
	if resp.StatusCode < 500 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	c := s.connection(id)
	if c["errorCode"] == "OAUTH_REFRESH_FAILED" || c["testStatus"] == "expired" {
		t.Fatalf("a slow token endpoint counted as an auth failure: %v", c)
	}
	row, _ := s.srv.Store().Connection(id)
	if row.ExpiredRetries != 0 {
		t.Fatalf("expired retries %d", row.ExpiredRetries)
	}
}

// TestCodexStreamCutIsContinued: a Codex stream (a Responses upstream) cut
// after its first text delta is finished from the delivered text by the
// combo's Anthropic target, for a Chat client and for Claude Code alike, with
// and without a reasoning summary before the text: one complete answer that
// says it was continued. The delivered text is read from the Responses
// events; without it nothing could be continued.
func TestCodexStreamCutIsContinued(t *testing.T) {
	for _, c := range []struct {
		client    string
		reasoning bool
	}{{"chat", false}, {"chat", true}, {"messages", false}, {"messages", true}, {"responses", false}} {
		t.Run(fmt.Sprintf("%s/reasoning=%v", c.client, c.reasoning), func(t *testing.T) {
			s := newSubEnv(t, codexClientID, "codex")
			_, access := s.codexConn()
			s.addAnthropicConn("fallback", "key-b", 2)
			s.addCombo("cx", "priority", target("codex/gpt-5-codex"), target("anthropic-compatible/claude-sonnet-4-5"))
			// Short deltas: the first (a few letters of "Hello") is the start of
			// the fallback's answer too, which the fake takes as a prefill only then.
			answer := fakeupstream.Content(access) // ASCII: a byte per character
			chunks := len(answer)/4 + 1
			first := answer[:len(answer)/chunks]
			s.up.SetStreamChunks(chunks)
			after := 1
			if c.reasoning {
				after += chunks // the reasoning summary's deltas come first
			}
			s.up.SetFault(access, fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: after, Times: 1})

			var resp *http.Response
			var body []byte
			var reasoning, text strings.Builder
			switch {
			case c.client == "chat":
				req := map[string]any{"model": "cx", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
				if c.reasoning {
					req["reasoning_effort"] = "low"
				}
				resp, body = s.do("POST", "/v1/chat/completions", req, map[string]string{"Authorization": "Bearer " + s.key})
				for _, ev := range parseSSE(t, body) {
					reasoning.WriteString(gjson.Get(ev.data, "choices.0.delta.reasoning_content").String())
					text.WriteString(gjson.Get(ev.data, "choices.0.delta.content").String())
				}
			case c.client == "responses":
				// Codex itself: the continuation is spliced into its response
				// (one response id, one message item).
				resp, body = s.do("POST", "/v1/responses", map[string]any{"model": "cx", "stream": true, "input": "hi"},
					map[string]string{"Authorization": "Bearer " + s.key})
				ids := map[string]bool{}
				for _, ev := range parseSSE(t, body) {
					if gjson.Get(ev.data, "type").String() == "response.output_text.delta" {
						text.WriteString(gjson.Get(ev.data, "delta").String())
					}
					if id := gjson.Get(ev.data, "response.id").String(); id != "" {
						ids[id] = true
					}
				}
				if len(ids) != 1 {
					t.Fatalf("response ids %v:\n%s", ids, body)
				}
			case c.reasoning:
				resp, body = s.messages("cx", true, map[string]any{"max_tokens": 2048, "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}})
				thinkingThenText(t, resp, body) // the thinking block, then one text block: the continuation's text in it
				reasoning.WriteString(fakeupstream.ReasoningText)
				text.WriteString(fakeupstream.Content("key-b"))
			default:
				resp, body = s.messages("cx", true, nil)
				for _, ev := range parseSSE(t, body) {
					if ev.event == "content_block_delta" {
						text.WriteString(gjson.Get(ev.data, "delta.text").String())
					}
				}
			}
			out := string(body)
			wantReasoning := ""
			if c.reasoning {
				wantReasoning = fakeupstream.ReasoningText
			}
			if want := fakeupstream.Content("key-b"); resp.StatusCode != 200 || text.String() != want || reasoning.String() != wantReasoning ||
				!strings.Contains(out, fmt.Sprintf(": omniroute continued the answer on anthropic-compatible/claude-sonnet-4-5 after %d characters (STREAM_TRUNCATED)", len(first))) ||
				strings.Contains(out, "stream interrupted") {
				t.Fatalf("status %d, reasoning %q, text %q, want %q continued after %q:\n%s", resp.StatusCode, reasoning.String(), text.String(), want, first, out)
			}
			// The prefill: the last message, the assistant's, holding the delivered
			// text (a string as the Messages client sent it, or one text block),
			// and no reasoning asked of the continuation.
			_, sent := s.up.LastRequest("key-b")
			last := gjson.GetBytes(sent, "messages.@reverse.0")
			prefill := last.Get("content")
			if prefill.IsArray() {
				prefill = prefill.Get("0.text")
			}
			if last.Get("role").String() != "assistant" || prefill.String() != first || gjson.GetBytes(sent, "thinking").Exists() {
				t.Fatalf("the fallback was not asked to continue from the delivered text: %s", sent)
			}
		})
	}
}

// TestImportedClaudeSubscriptionServesTheUpstreamsModelNames: a Claude
// import asks the upstream for its models, with the token just read and
// without refreshing it; the names served are the upstream's (the
// catalogue's import list is dropped), so a model newer than the release is
// routable at once; a re-import refreshes them; a list the user edited is
// kept; an upstream that does not answer leaves the catalogue's list.
func TestImportedClaudeSubscriptionServesTheUpstreamsModelNames(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	access := "sk-ant-oat01-discovery"
	s.claudeLogin(access, s.clk.Now().Add(8*time.Hour))
	served := func(c map[string]any) []string {
		var out []string
		for _, m := range c["servedModels"].([]any) {
			out = append(out, m.(string))
		}
		return out
	}

	s.up.SetModels([]string{"claude-opus-5-5", "claude-sonnet-5-0"})
	code, m := s.importLogin("claude-code")
	if code != http.StatusCreated {
		t.Fatalf("import: %d %v", code, m)
	}
	c := m["connection"].(map[string]any)
	id := c["id"].(string)
	if got := served(c); !slices.Equal(got, []string{"claude-opus-5-5", "claude-sonnet-5-0"}) || c["modelsSource"] != "upstream" {
		t.Fatalf("served %v (source %v), want the upstream's names only", got, c["modelsSource"])
	}
	if p := s.up.LastPath(access); p != "/v1/models" || s.tokens.Calls() != 0 {
		t.Fatalf("last upstream path %q, token calls %d: want the model list asked with the imported token", p, s.tokens.Calls())
	}
	if resp, body := s.messages("claude-opus-5-5", false, nil); resp.StatusCode != 200 || s.up.LastModel(access) != "claude-opus-5-5" {
		t.Fatalf("the discovered model does not route: %d %s", resp.StatusCode, body)
	}

	// The upstream ships a new model: a re-import picks it up.
	s.up.SetModels([]string{"claude-opus-5-5", "claude-sonnet-5-0", "claude-haiku-5-0"})
	if code, m = s.importLogin("claude-code"); code != http.StatusOK || !slices.Contains(served(m["connection"].(map[string]any)), "claude-haiku-5-0") {
		t.Fatalf("re-import: %d %v", code, m)
	}

	// The user's own list survives a re-import.
	if code, m := s.mgmt("PATCH", "/api/providers/"+id, map[string]any{"verify": false, "models": []string{"my-claude"}}); code != 200 {
		t.Fatalf("patch models: %d %v", code, m)
	}
	if _, m = s.importLogin("claude-code"); !slices.Contains(served(m["connection"].(map[string]any)), "my-claude") {
		t.Fatalf("re-import dropped the user's list: %v", m)
	}

	// A new account whose upstream does not list models keeps the catalogue's.
	s.up.SetFault("sk-ant-oat01-other", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500})
	path := filepath.Join(s.home, ".claude", ".credentials.json")
	writeFile(t, path, map[string]any{"claudeAiOauth": map[string]any{"accessToken": "sk-ant-oat01-other", "refreshToken": "rt-initial",
		"expiresAt": s.clk.Now().Add(8 * time.Hour).UnixMilli(), "scopes": []string{"user:inference"}}})
	writeFile(t, filepath.Join(s.home, ".claude.json"), map[string]any{"oauthAccount": map[string]any{"accountUuid": "acct-claude-2"}})
	code, m = s.importLogin("claude-code")
	p, _ := registry.Catalog(nil).Lookup("claude")
	if got := served(m["connection"].(map[string]any)); code != http.StatusCreated || !slices.Equal(got[:len(p.OAuth.Models)], p.OAuth.Models) {
		t.Fatalf("import with no model list: %d, served %v", code, got)
	}
}
