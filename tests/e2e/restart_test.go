package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// upstreamSecret is a distinctive upstream API key: it must never show up in
// an API answer, a log line or a file on disk.
const upstreamSecret = "sk-e2e-UNIQUE-SECRET-123456"

// connView is what must survive a restart of one connection.
type connView struct {
	ID, Provider, Name, BaseURL, APIKeyMasked string
	Priority                                  float64
	Active                                    bool
	Models                                    string
}

func listConns(t *testing.T, g *gatewayProc) map[string]connView {
	t.Helper()
	resp, body := g.do(http.MethodGet, "/api/providers", nil, map[string]string{"Authorization": "Bearer " + g.token})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/providers: %d %s", resp.StatusCode, body)
	}
	if bytes.Contains(body, []byte(upstreamSecret)) {
		t.Errorf("GET /api/providers reveals the raw upstream key: %s", body)
	}
	var out struct {
		Connections []map[string]any `json:"connections"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET /api/providers: %v: %s", err, body)
	}
	views := map[string]connView{}
	for _, c := range out.Connections {
		str := func(k string) string { s, _ := c[k].(string); return s }
		models, _ := json.Marshal(c["models"])
		prio, _ := c["priority"].(float64)
		active, _ := c["isActive"].(bool)
		v := connView{ID: str("id"), Provider: str("provider"), Name: str("name"), BaseURL: str("baseUrl"),
			APIKeyMasked: str("apiKeyMasked"), Priority: prio, Active: active, Models: string(models)}
		if _, has := c["apiKey"]; has {
			t.Errorf("connection %s has an apiKey field in GET /api/providers", v.ID)
		}
		if v.APIKeyMasked == "" {
			t.Errorf("connection %s has no apiKeyMasked", v.ID)
		}
		views[v.ID] = v
	}
	return views
}

// assertNoSecretOnDisk reads every file of the data dir (the SQLite database,
// its -wal and -shm files included) and fails if the raw upstream key is there.
func assertNoSecretOnDisk(t *testing.T, dir, when string) {
	t.Helper()
	sawDB, sawName := false, false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if filepath.Base(path) == "omniroute.db" && len(b) > 0 {
			sawDB = true
		}
		// The connection's name is stored in clear: seeing it proves the
		// files read hold the connection rows, so the check is not vacuous.
		sawName = sawName || bytes.Contains(b, []byte("secret-account"))
		if bytes.Contains(b, []byte(upstreamSecret)) {
			t.Errorf("%s: %s contains the raw upstream key %q", when, path, upstreamSecret)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: read data dir: %v", when, err)
	}
	if !sawDB {
		t.Errorf("%s: no omniroute.db in the data dir %s", when, dir)
	}
	if !sawName {
		t.Errorf("%s: the connection rows are in no file of %s (wrong database path?)", when, dir)
	}
}

func getJSON(t *testing.T, g *gatewayProc, path string) map[string]any {
	t.Helper()
	return g.mustMgmt(http.StatusOK, http.MethodGet, path, nil)
}

// TestRestartKeepsEverything: a user configures the gateway, quits it and
// starts it again: accounts, keys, settings, the management token and the
// default key are all still there, and secrets were never exposed on the way.
func TestRestartKeepsEverything(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	dir := t.TempDir()

	g1 := startGateway(t, dir, 0)
	// `omniroute token` prints the token the banner showed.
	if out, errOut, code := runCLI(t, gatewayEnv(dir, g1.port), "token"); code != 0 || strings.TrimSpace(out) != g1.token {
		t.Errorf("omniroute token: code %d, printed %q, want the banner's %q (stderr %q)", code, strings.TrimSpace(out), g1.token, errOut)
	}
	// Anonymous health before any connection: setup not complete.
	if h := decodeHealth(t, g1, false); h["setupComplete"] != false {
		t.Errorf("anonymous health before setup: %v, want setupComplete false", h)
	}

	primary := g1.addConn("secret-account", upURL, upstreamSecret, 1)
	secondary := g1.addConn("backup-account", upURL, "key-b", 2)
	created := g1.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{"name": "ci-agent"})
	newKey, _ := created["key"].(string)
	newKeyID, _ := created["id"].(string)
	if !strings.HasPrefix(newKey, "sk-omni-") || newKeyID == "" {
		t.Fatalf("POST /api/keys: want id and an sk-omni- key, got %v", created)
	}
	if newKey == g1.key {
		t.Fatal("POST /api/keys returned the default key")
	}
	if s := g1.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"maxAttempts": 4}); s["maxAttempts"] != float64(4) {
		t.Errorf("PATCH /api/settings answered %v, want maxAttempts 4", s)
	}
	// The gateway uses the stored (encrypted) secret upstream.
	resp, body := g1.chat(newKey, "openai-compatible/gpt-4o-mini", false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != primary {
		t.Fatalf("chat with the new key: %d via %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	if h, _ := up.LastRequest(upstreamSecret); h == nil || h.Get("Authorization") != "Bearer "+upstreamSecret {
		t.Errorf("upstream did not receive the configured key, got headers %v", h)
	}
	if h := decodeHealth(t, g1, false); h["setupComplete"] != true {
		t.Errorf("anonymous health after setup: %v, want setupComplete true", h)
	}

	before := listConns(t, g1)
	if len(before) != 2 || before[primary].Name != "secret-account" || before[secondary].Name != "backup-account" {
		t.Fatalf("connections before restart: %+v", before)
	}
	if m := before[primary].APIKeyMasked; strings.Contains(m, upstreamSecret) {
		t.Errorf("apiKeyMasked %q is the raw key", m)
	}
	for _, id := range []string{primary, secondary} {
		resp, body := g1.do(http.MethodGet, "/api/providers/"+id, nil, map[string]string{"Authorization": "Bearer " + g1.token})
		if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(upstreamSecret)) {
			t.Errorf("GET /api/providers/%s: %d, must be 200 without the raw key: %s", id, resp.StatusCode, body)
		}
	}
	assertNoSecretOnDisk(t, dir, "while running")

	g1.stop()
	assertNoSecretOnDisk(t, dir, "after stop")

	g2 := startGateway(t, dir, g1.port) // same data dir, same address
	if g2.token != g1.token {
		t.Errorf("management token changed across restart: %q → %q", g1.token, g2.token)
	}
	if g2.key != g1.key {
		t.Errorf("default key changed across restart: %q → %q", g1.key, g2.key)
	}
	if out, _, code := runCLI(t, gatewayEnv(dir, g2.port), "token"); code != 0 || strings.TrimSpace(out) != g1.token {
		t.Errorf("omniroute token after restart: code %d, printed %q, want %q", code, strings.TrimSpace(out), g1.token)
	}
	after := listConns(t, g2)
	if len(after) != len(before) {
		t.Errorf("connections after restart: %+v, before: %+v", after, before)
	}
	for id, b := range before {
		if a, ok := after[id]; !ok || a != b {
			t.Errorf("connection %s after restart = %+v, before = %+v", id, a, b)
		}
	}
	if s := getJSON(t, g2, "/api/settings"); s["maxAttempts"] != float64(4) {
		t.Errorf("settings after restart: %v, want maxAttempts 4", s)
	}
	keys, _ := getJSON(t, g2, "/api/keys")["keys"].([]any)
	found := false
	for _, k := range keys {
		if km, _ := k.(map[string]any); km["id"] == newKeyID {
			found = true
			if km["name"] != "ci-agent" {
				t.Errorf("key %s after restart: %v", newKeyID, km)
			}
		}
	}
	if !found {
		t.Errorf("created key %s missing after restart: %v", newKeyID, keys)
	}
	if d := getJSON(t, g2, "/api/keys/default"); d["key"] != g1.key {
		t.Errorf("GET /api/keys/default after restart = %v, want the banner's key", d["key"])
	}
	// Both keys still authenticate, and the decrypted secret still reaches the upstream.
	for name, key := range map[string]string{"created key": newKey, "default key": g1.key} {
		resp, body := g2.chat(key, "openai-compatible/gpt-4o-mini", true)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != primary {
			t.Errorf("chat after restart with the %s: %d via %q: %s", name, resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
		}
	}
	if n := up.Hits(upstreamSecret); n != 3 {
		t.Errorf("upstream hits with the stored key = %d, want 3", n)
	}
	if h := decodeHealth(t, g2, true); h["version"] == nil || h["connectionHealth"] == nil {
		t.Errorf("management health lacks version/connectionHealth: %v", h)
	}
	g2.stop()
	assertNoSecretOnDisk(t, dir, "after second stop")

	for i, g := range []*gatewayProc{g1, g2} {
		if logs := g.logs(); strings.Contains(logs, upstreamSecret) {
			t.Errorf("run %d: the raw upstream key is in the process output:\n%s", i+1, logs)
		}
	}
}

// decodeHealth reads GET /api/monitoring/health, anonymously or with the token.
func decodeHealth(t *testing.T, g *gatewayProc, management bool) map[string]any {
	t.Helper()
	hdr := map[string]string{}
	if management {
		hdr["Authorization"] = "Bearer " + g.token
	}
	resp, body := g.do(http.MethodGet, "/api/monitoring/health", nil, hdr)
	var m map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &m) != nil {
		t.Fatalf("health: %d %s", resp.StatusCode, body)
	}
	switch m["status"] {
	case "setup", "healthy", "degraded", "unhealthy":
	default:
		t.Errorf("health status %v, want setup|healthy|degraded|unhealthy", m["status"])
	}
	if !management {
		for _, k := range []string{"version", "memoryUsage", "providerHealth", "connectionHealth"} {
			if _, ok := m[k]; ok {
				t.Errorf("anonymous health reveals %q: %s", k, body)
			}
		}
	}
	return m
}
