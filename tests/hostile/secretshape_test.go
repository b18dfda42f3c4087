//go:build linux

package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestCredentialsInBaseURLNeverKept: a connection's baseUrl carrying a
// credential (user:password@, ?api-key=, ?key=, ?token=) is refused on create
// and edit with 400 BASE_URL_HAS_CREDENTIALS in the error envelope, naming the
// field but not the secret; the secret reaches no answer, audit entry, log
// line or database file. An upstream echoing the connection's key behind
// "Bearer" (a key a bearer shape cuts at '&') leaves nothing of it either.
func TestCredentialsInBaseURLNeverKept(t *testing.T) {
	const pw = "PWcanary39"
	const echoed = "tok-Q39&%key0001"
	u := newUpstream(t)
	u.on(echoed, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "bad Authorization: Bearer " + echoed}})
		_, _ = w.Write(b)
	})
	p := start(t, t.TempDir())
	tok := map[string]string{"Authorization": "Bearer " + p.token}
	var seen [][]byte
	bad := []string{
		"http://user:" + pw + "@" + u.URL[len("http://"):] + "/v1",
		"http://" + pw + "@" + u.URL[len("http://"):] + "/v1",
		u.URL + "/v1?api-key=" + pw,
		u.URL + "/v1?key=" + pw,
		u.URL + "/v1?token=" + pw,
	}
	for i, base := range bad {
		resp, b := p.do(http.MethodPost, "/api/providers", map[string]any{"provider": "openai-compatible",
			"name": fmt.Sprintf("bad%d", i), "apiKey": "k", "baseUrl": base, "models": []string{"m"}}, tok)
		checkEnvelope(t, "create "+base, resp.StatusCode, resp.Header.Get("Content-Type"), b, 400, "BASE_URL_HAS_CREDENTIALS")
		seen = append(seen, b)
	}
	id := p.addConn("echo", u.URL, echoed, "m", 1)
	for _, base := range bad {
		resp, b := p.do(http.MethodPatch, "/api/providers/"+id, map[string]any{"baseUrl": base}, tok)
		checkEnvelope(t, "edit "+base, resp.StatusCode, resp.Header.Get("Content-Type"), b, 400, "BASE_URL_HAS_CREDENTIALS")
		seen = append(seen, b)
	}
	resp, answer := p.do(http.MethodPost, "/v1/chat/completions", chat("m", false), p.auth())
	if resp.StatusCode < 400 || !bytes.Contains(answer, []byte("[redacted]")) {
		t.Errorf("the upstream's refusal did not reach the client redacted: %d %s", resp.StatusCode, answer)
	}
	seen = append(seen, answer)
	for _, path := range []string{"/api/providers", "/api/providers/" + id, "/api/audit?limit=500", "/api/logs"} {
		_, b := p.do(http.MethodGet, path, nil, tok)
		seen = append(seen, b)
	}
	p.stop()
	seen = append(seen, []byte(p.logs()))
	for _, f := range []string{"omniroute.db", "omniroute.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(p.dir, f))
		seen = append(seen, b)
	}
	for i, b := range seen {
		for _, secret := range []string{pw, "key0001", "Q39"} {
			if j := bytes.Index(b, []byte(secret)); j >= 0 {
				t.Errorf("%q leaked (source %d): %.300s", secret, i, b[max(0, j-150):])
			}
		}
	}
}
