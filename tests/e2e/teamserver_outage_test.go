package e2e

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/pgtest"
	"omniroute/tests/tcpproxy"
	"omniroute/tests/testproc"
)

// viaProxy rewrites a database URL to go through a TCP proxy in front of it.
func viaProxy(t *testing.T, dbURL string) (string, *tcpproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tcpproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	u.Host = "127.0.0.1:" + strconv.Itoa(p.Port())
	return u.String(), p
}

// TestTeamServerDatabaseCut: instance A reaches the database through a TCP
// proxy the test cuts, B directly. While cut, A's management writes answer
// 503 DATABASE_UNAVAILABLE with Retry-After (not 500); A keeps serving a key
// within team.maxStalenessMs (3 s here) of its last revalidation, then
// refuses it with 503 DATABASE_UNAVAILABLE — the key B deleted meanwhile
// included; after the cut heals A serves its default key again and refuses
// the deleted one with 401.
func TestTeamServerDatabaseCut(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	direct := pgs.NewDatabase(t)
	proxied, proxy := viaProxy(t, direct)
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startGateway(t, dirA, 0, "OMNIROUTE_DATABASE_URL="+proxied)
	key, err := os.ReadFile(filepath.Join(dirA, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "secret.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	b := startGateway(t, dirB, 0, "OMNIROUTE_DATABASE_URL="+direct)
	a.addConn("one", upURL, "key-1", 1)
	a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"team": map[string]any{"maxStalenessMs": 3000}})
	// A key created on B reaches A through the change feed: A's keys are
	// revalidated at that moment.
	created := b.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{"name": "doomed", "scopes": []string{"inference"}})
	doomed, _ := created["key"].(string)
	doomedID, _ := created["id"].(string)
	within(t, "the key created on B accepted by A", func() bool {
		resp, _ := a.chat(doomed, teamModel, false)
		return resp.StatusCode == http.StatusOK
	})
	cutAt := time.Now()
	proxy.Cut()

	// A management write: 503 DATABASE_UNAVAILABLE with Retry-After.
	resp, body := a.do(http.MethodPatch, "/api/settings", map[string]any{"maxAttempts": 5},
		map[string]string{"Authorization": "Bearer " + a.token})
	if resp.StatusCode != http.StatusServiceUnavailable || gjson.GetBytes(body, "error.code").String() != "DATABASE_UNAVAILABLE" ||
		resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a management write while the database is cut: %d Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	resp, body = a.do(http.MethodPost, "/api/keys", map[string]any{"name": "during"}, map[string]string{"Authorization": "Bearer " + a.token})
	if resp.StatusCode != http.StatusServiceUnavailable || gjson.GetBytes(body, "error.code").String() != "DATABASE_UNAVAILABLE" {
		t.Fatalf("a key created while the database is cut: %d %s", resp.StatusCode, body)
	}
	// Within the bound the keys A knows still serve.
	if resp, body := a.chat(doomed, teamModel, false); resp.StatusCode != http.StatusOK {
		if time.Since(cutAt) < 2500*time.Millisecond {
			t.Fatalf("within team.maxStalenessMs the key was refused: %d %s", resp.StatusCode, body)
		}
	}
	b.mustMgmt(http.StatusOK, http.MethodDelete, "/api/keys/"+doomedID, nil)
	// Past the bound: refused with 503, the deleted key and the default one alike.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := a.chat(doomed, teamModel, false)
		if resp.StatusCode == http.StatusServiceUnavailable {
			if gjson.GetBytes(body, "error.code").String() != "DATABASE_UNAVAILABLE" || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("a stale key: %d %s", resp.StatusCode, body)
			}
			t.Logf("the key was refused %v after the cut (bound 3 s; the heartbeat notices within 5 s)", time.Since(cutAt).Round(100*time.Millisecond))
			break
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a key A knows, before the bound: %d %s", resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted key still served %v after the cut (team.maxStalenessMs 3 s)", time.Since(cutAt))
		}
		time.Sleep(100 * time.Millisecond) // poll interval
	}
	if resp, body := a.chat(a.key, teamModel, false); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the default key past the bound: %d %s", resp.StatusCode, body)
	}
	// Healed: A serves its default key again and refuses the deleted one.
	proxy.Restore()
	deadline = time.Now().Add(25 * time.Second)
	for {
		resp, _ := a.chat(a.key, teamModel, false)
		gone, _ := a.chat(doomed, teamModel, false)
		if resp.StatusCode == http.StatusOK && gone.StatusCode == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the cut healed: default key %d, deleted key %d", resp.StatusCode, gone.StatusCode)
		}
		time.Sleep(200 * time.Millisecond) // poll interval
	}
	if !strings.Contains(a.logs(), "shared database") {
		t.Log("no shared-database warning in A's log")
	}
	a.stop()
	b.stop()
}

// TestTeamServerWaitsForTheDatabaseAtStart: with the database cut, an
// instance started with --wait-for-db 0 exits at once saying so; one started
// with --wait-for-db 30s logs its retries and serves once the cut heals (2 s
// later). Before, it exited at once whatever happened.
func TestTeamServerWaitsForTheDatabaseAtStart(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	proxied, proxy := viaProxy(t, pgs.NewDatabase(t))
	proxy.Cut()
	env := "OMNIROUTE_DATABASE_URL=" + proxied
	for _, bad := range []string{"abc", "-1s", "25h"} {
		if _, stderr, code := runCLI(t, gatewayEnv(t.TempDir(), testproc.FreePort(t), env), "--headless", "--wait-for-db", bad); code != 2 ||
			!strings.Contains(stderr, "--wait-for-db") {
			t.Fatalf("--wait-for-db %s: exit %d %q; want 2 naming the flag", bad, code, stderr)
		}
	}
	start := time.Now()
	if _, err := tryStartArgs(t, t.TempDir(), testproc.FreePort(t), []string{"--headless", "--wait-for-db", "0"}, env); err == nil ||
		!strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("--wait-for-db 0 with the database cut: %v; want an exit naming the unreachable database", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("--wait-for-db 0 took %v to give up", took)
	}
	healed := make(chan struct{})
	go func() {
		time.Sleep(2 * time.Second) // the outage's length, not a timing assertion
		proxy.Restore()
		close(healed)
	}()
	start = time.Now()
	g, err := tryStartArgs(t, t.TempDir(), testproc.FreePort(t), []string{"--headless", "--wait-for-db", "30s"}, env)
	<-healed
	if err != nil {
		t.Fatalf("--wait-for-db 30s: %v", err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Fatalf("the instance started in %v, before the database was reachable", took)
	}
	if !strings.Contains(g.logs(), "not reachable yet, retrying") {
		t.Fatalf("no retry logged while waiting:\n%s", g.logs())
	}
	g.stop()
}

// TestTeamServerQueuedLeaseRelease: a lease held through A is released
// through A while A's database is cut: A answers 202 RELEASE_QUEUED, the
// lease stays ACTIVE in the database meanwhile, and within seconds of the
// cut healing it is RELEASED there (before, the release failed with 503 and
// the connection stayed held until the lease's TTL, 120 s).
func TestTeamServerQueuedLeaseRelease(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	direct := pgs.NewDatabase(t)
	proxied, proxy := viaProxy(t, direct)
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	a := startGateway(t, t.TempDir(), 0, "OMNIROUTE_DATABASE_URL="+proxied)
	conn := a.addConn("one", upURL, "key-1", 1)
	created := a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{
		"name": "leases", "scopes": []string{"inference", "lease:exclusive"}, "allowedConnections": []string{conn}})
	key, _ := created["key"].(string)
	owner := "vlo_" + strings.Repeat("q", 43)
	lease := func(body map[string]any) (*http.Response, []byte) {
		return a.do(http.MethodPost, "/api/v1/session-leases", body,
			map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": owner})
	}
	resp, body := lease(map[string]any{"action": "acquire", "model": teamModel})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("acquire: %d %s", resp.StatusCode, body)
	}
	gen := gjson.GetBytes(body, "generation").Int()
	proxy.Cut()
	resp, body = lease(map[string]any{"action": "release", "generation": gen})
	if resp.StatusCode != http.StatusAccepted || gjson.GetBytes(body, "state").String() != "RELEASE_QUEUED" {
		t.Fatalf("release while the database is cut: %d %s; want 202 RELEASE_QUEUED", resp.StatusCode, body)
	}
	if n := activeLeases(t, direct); n != 1 {
		t.Fatalf("%d active leases in the database during the cut, want the held 1", n)
	}
	proxy.Restore()
	healed := time.Now()
	for activeLeases(t, direct) != 0 {
		if time.Since(healed) > 10*time.Second {
			t.Fatal("the queued release was not applied within 10 s of the database answering again")
		}
		time.Sleep(100 * time.Millisecond) // poll interval
	}
	t.Logf("queued release applied %v after the cut healed", time.Since(healed).Round(100*time.Millisecond))
	a.stop()
}
