package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/testproc"
)

func writeJSON(t *testing.T, path string, v any) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportCommand: `omniroute import` with no gateway running writes the
// database (the connection is there at the next start); with the gateway
// running it goes through the management API, so the connection routes at
// once; the CLI's own file is never changed; a re-import updates in place.
func TestImportCommand(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	home, dir := t.TempDir(), t.TempDir()
	port := testproc.FreePort(t)
	env := append(gatewayEnv(dir, port), "HOME="+home)

	// Offline: nothing listens on the gateway's port.
	codexFile := filepath.Join(home, ".codex", "auth.json")
	codexBytes := writeJSON(t, codexFile, map[string]any{"tokens": map[string]any{"access_token": "codex-access-token-0001",
		"refresh_token": "codex-refresh-0001", "account_id": "acct-e2e"}})
	out, errOut, code := runCLI(t, env, "import", "codex")
	if code != 0 || !strings.Contains(out, "created") {
		t.Fatalf("offline import: code %d\n%s%s", code, out, errOut)
	}

	g := startGateway(t, dir, port)
	conns := g.mustMgmt(200, "GET", "/api/providers", nil)["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["provider"] != "codex" || conns[0].(map[string]any)["accessTokenMasked"] != "code…0001" {
		t.Fatalf("after an offline import: %v", conns)
	}

	// The Codex CLI's own wire (Responses) through the imported codex account.
	codexID := conns[0].(map[string]any)["id"].(string)
	g.mustMgmt(200, "PATCH", "/api/providers/"+codexID, map[string]any{"verify": false, "baseUrl": upURL + "/backend-api/codex"})
	resp, body := g.do("POST", "/v1/responses", map[string]any{"model": "codex/gpt-5-codex", "stream": true, "instructions": "x",
		"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi"}}}}},
		map[string]string{"Authorization": "Bearer " + g.key})
	if resp.StatusCode != 200 || !strings.Contains(string(body), "response.completed") || !strings.Contains(string(body), "Hello from codex-access-token-0001") {
		t.Fatalf("codex through the binary: %d %s", resp.StatusCode, body)
	}
	if h, sent := up.LastRequest("codex-access-token-0001"); fakeupstream.CodexContractError(h, sent) != "" || h.Get("chatgpt-account-id") != "acct-e2e" {
		t.Fatalf("codex wire contract: %s %v", fakeupstream.CodexContractError(h, sent), h)
	}

	// Online: Claude Code's login, through the running gateway.
	claudeFile := filepath.Join(home, ".claude", ".credentials.json")
	access := "sk-ant-oat01-e2e-imported-token"
	writeJSON(t, claudeFile, map[string]any{"claudeAiOauth": map[string]any{"accessToken": access, "refreshToken": "rt", "expiresAt": 4102444800000}})
	out, errOut, code = runCLI(t, env, "import", "claude-code")
	if code != 0 || !strings.Contains(out, "created") {
		t.Fatalf("online import: code %d\n%s%s", code, out, errOut)
	}
	var id string
	for _, c := range g.mustMgmt(200, "GET", "/api/providers", nil)["connections"].([]any) {
		if m := c.(map[string]any); m["provider"] == "claude" {
			id = m["id"].(string)
		}
	}
	if id == "" {
		t.Fatal("the running gateway does not list the imported connection")
	}
	g.mustMgmt(200, "PATCH", "/api/providers/"+id, map[string]any{"verify": false, "baseUrl": upURL + "/v1"})
	resp, body = g.do("POST", "/v1/messages", map[string]any{"model": "claude/claude-sonnet-4-5", "max_tokens": 16,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"x-api-key": g.key})
	if resp.StatusCode != 200 || !strings.Contains(string(body), fakeupstream.Content(access)) {
		t.Fatalf("request through the imported login: %d %s", resp.StatusCode, body)
	}

	out, _, code = runCLI(t, env, "import", "claude-code")
	if code != 0 || !strings.Contains(out, "updated") {
		t.Fatalf("re-import: code %d %s", code, out)
	}
	if now, _ := os.ReadFile(codexFile); !bytes.Equal(now, codexBytes) {
		t.Fatal("the Codex CLI's file was changed")
	}
	if _, errOut, code := runCLI(t, env, "import", "vscode"); code == 0 || !strings.Contains(errOut, "unknown import source") {
		t.Fatalf("bad source: code %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, env, "import", "gemini-cli"); code == 0 || !strings.Contains(errOut, "no gemini-cli login") {
		t.Fatalf("missing file: code %d %s", code, errOut)
	}
	g.stop()
}
