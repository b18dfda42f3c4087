package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/pgtest"
	"omniroute/tests/testproc"
)

// shareWithin is how soon one instance's write must show on another.
const shareWithin = time.Second

// teamServer is two real gateway binaries on one throw-away PostgreSQL
// database, set up as the README's team server section says: each instance
// has its own data directory, and they share the database and secret.key.
type teamServer struct {
	url   string // OMNIROUTE_DATABASE_URL
	a, b  *gatewayProc
	upURL string
	up    *fakeupstream.Upstream
	pg    *pgtest.Server
}

// newTeamServer starts the two instances on a fresh database of the test
// server (owned: a cluster of the test's own, which it may stop).
func newTeamServer(t *testing.T, owned bool, extraEnv ...string) *teamServer {
	t.Helper()
	start := pgtest.Start
	if owned {
		start = pgtest.StartOwned
	}
	pgs, err := start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	ts := &teamServer{url: pgs.NewDatabase(t), up: fakeupstream.New(), pg: pgs}
	ts.upURL = ts.up.Start()
	t.Cleanup(ts.up.Close)
	env := append([]string{"OMNIROUTE_DATABASE_URL=" + ts.url}, extraEnv...)
	dirA, dirB := t.TempDir(), t.TempDir()
	ts.a = startGateway(t, dirA, 0, env...)
	key, err := os.ReadFile(filepath.Join(dirA, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "secret.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	ts.b = startGateway(t, dirB, 0, env...)
	return ts
}

// within polls ok until it holds, failing the test when that takes longer
// than shareWithin; it returns how long it took.
func within(t *testing.T, what string, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > shareWithin {
			t.Fatalf("%s: not within %v", what, shareWithin)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not a timing assertion
	}
	return time.Since(start)
}

// TestTeamServerSharesConnectionsKeysAndLeases: two instances on one
// PostgreSQL serve one configuration. Connections and a client key created
// through A work on B within a second, a key deleted through B is refused by
// A within a second, and 100 concurrent lease acquisitions split across both
// instances for 3 connections leave exactly 3 ACTIVE leases.
func TestTeamServerSharesConnectionsKeysAndLeases(t *testing.T) {
	ts := newTeamServer(t, false)
	a, b := ts.a, ts.b
	if a.key != b.key {
		t.Fatalf("the instances show different default keys (%q, %q): B did not join A's database", a.key, b.key)
	}

	// Each answers under its own name and lists both as live.
	resp, _ := a.do(http.MethodGet, "/api/monitoring/health", nil, nil)
	nameA := resp.Header.Get("X-OmniRoute-Instance")
	resp, _ = b.do(http.MethodGet, "/api/monitoring/health", nil, nil)
	nameB := resp.Header.Get("X-OmniRoute-Instance")
	if nameA == "" || nameB == "" || nameA == nameB {
		t.Fatalf("X-OmniRoute-Instance: A %q, B %q; want two names", nameA, nameB)
	}
	for _, g := range []*gatewayProc{a, b} {
		m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/instances", nil)
		list, _ := m["instances"].([]any)
		live := map[string]bool{}
		for _, it := range list {
			row, _ := it.(map[string]any)
			if row["live"] == true {
				live[row["name"].(string)] = true
			}
		}
		if m["shared"] != true || len(list) != 2 || !live[nameA] || !live[nameB] {
			t.Fatalf("GET /api/instances on %s: %v; want A and B live", g.base, m)
		}
	}

	conns := []string{
		a.addConn("one", ts.upURL, "key-1", 1),
		a.addConn("two", ts.upURL, "key-2", 2),
		a.addConn("three", ts.upURL, "key-3", 3),
	}
	took := within(t, "connections created on A listed by B", func() bool { return len(listConns(t, b)) == 3 })
	t.Logf("connections visible on B after %v", took)

	created := a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{
		"name": "team", "scopes": []string{"inference", "lease:exclusive"}, "allowedConnections": conns})
	key, _ := created["key"].(string)
	keyID, _ := created["id"].(string)
	const model = "openai-compatible/gpt-4o-mini"
	took = within(t, "a key created on A accepted by B", func() bool {
		resp, _ := b.chat(key, model, false)
		return resp.StatusCode == http.StatusOK
	})
	t.Logf("key accepted by B after %v", took)

	// 100 owners race for the 3 connections, half through each instance.
	const owners = 100
	type result struct {
		status int
		conn   string
	}
	results := make([]result, owners)
	var wg sync.WaitGroup
	for i := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := a
			if i%2 == 1 {
				g = b
			}
			resp, body := g.do(http.MethodPost, "/api/v1/session-leases", map[string]any{"action": "acquire", "model": model},
				map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": fmt.Sprintf("vlo_%043d", i)})
			results[i] = result{resp.StatusCode, gjson.GetBytes(body, "connectionId").String()}
		}()
	}
	wg.Wait()
	granted := map[string]int{}
	refused := 0
	for i, r := range results {
		switch r.status {
		case http.StatusOK:
			granted[r.conn]++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Errorf("owner %d: status %d", i, r.status)
		}
	}
	if len(granted) != 3 || refused != owners-3 {
		t.Fatalf("leases granted per connection %v and %d refused; want one on each of 3 connections and %d refused", granted, refused, owners-3)
	}
	for _, c := range conns {
		if granted[c] != 1 {
			t.Fatalf("connection %s granted %d leases, want 1 (%v)", c, granted[c], granted)
		}
	}
	if n := activeLeases(t, ts.url); n != 3 {
		t.Fatalf("%d ACTIVE leases in the database, want 3", n)
	}

	// A key deleted through B stops working on A.
	b.mustMgmt(http.StatusOK, http.MethodDelete, "/api/keys/"+keyID, nil)
	took = within(t, "a key deleted on B refused by A", func() bool {
		resp, _ := a.chat(key, model, false)
		return resp.StatusCode == http.StatusUnauthorized
	})
	t.Logf("deleted key refused by A after %v", took)
	// A clean stop removes B from the list at once.
	b.stop()
	if m := a.mustMgmt(http.StatusOK, http.MethodGet, "/api/instances", nil); len(m["instances"].([]any)) != 1 {
		t.Fatalf("after B stopped, A lists %v", m["instances"])
	}
	a.stop()
}

// pgConn connects to the database at url for the test's own queries; the
// connection closes when the test ends.
func pgConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func activeLeases(t *testing.T, url string) int {
	t.Helper()
	conn := pgConn(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM exclusive_connection_leases WHERE state = 'ACTIVE'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTeamServerOutage: with PostgreSQL stopped for 5 s both instances keep
// serving inference from the state they know, grant no lease they cannot
// record, and after it returns they converge again (a key created on A works
// on B).
func TestTeamServerOutage(t *testing.T) {
	ts := newTeamServer(t, true)
	a, b := ts.a, ts.b
	conn := a.addConn("one", ts.upURL, "key-1", 1)
	created := a.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{
		"name": "team", "scopes": []string{"inference", "lease:exclusive"}, "allowedConnections": []string{conn}})
	key, _ := created["key"].(string)
	const model = "openai-compatible/gpt-4o-mini"
	within(t, "a key created on A accepted by B", func() bool {
		resp, _ := b.chat(key, model, false)
		return resp.StatusCode == http.StatusOK
	})

	if err := ts.pg.Pause(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	for time.Since(down) < 5*time.Second {
		for _, g := range []*gatewayProc{a, b} {
			start := time.Now()
			resp, body := g.chat(key, model, false)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("database down: %s answered %d: %s", g.base, resp.StatusCode, body)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("database down: a request took %v", d)
			}
		}
		time.Sleep(250 * time.Millisecond) // pacing of the probe requests, not a timing assertion
	}
	for i, g := range []*gatewayProc{a, b} {
		resp, body := g.do(http.MethodPost, "/api/v1/session-leases", map[string]any{"action": "acquire", "model": model},
			map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": fmt.Sprintf("vlo_%043d", i)})
		if resp.StatusCode != http.StatusServiceUnavailable || gjson.GetBytes(body, "error.code").String() != "LEASE_SERVICE_UNAVAILABLE" {
			t.Fatalf("database down: %s answered a lease acquire with %d %s; want 503 LEASE_SERVICE_UNAVAILABLE", g.base, resp.StatusCode, body)
		}
	}
	if err := ts.pg.Resume(); err != nil {
		t.Fatal(err)
	}

	// Converged: a key created on A after the outage works on B. The
	// listener reconnects with a backoff of at most 5 s; allow that too.
	var key2 string
	deadline := time.Now().Add(15 * time.Second)
	for key2 == "" {
		code, m := a.mgmt(http.MethodPost, "/api/keys", map[string]any{"name": "after", "scopes": []string{"inference"}})
		if code == http.StatusCreated {
			key2, _ = m["key"].(string)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A cannot write after the database returned: %d %v", code, m)
		}
		time.Sleep(100 * time.Millisecond) // poll interval
	}
	for {
		resp, _ := b.chat(key2, model, false)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B did not accept a key created on A after the outage: %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
	if n := activeLeases(t, ts.url); n != 0 {
		t.Fatalf("%d ACTIVE leases after the outage, want 0", n)
	}
	a.stop()
	b.stop()
}

// healthCount reads one number of the management health answer.
func healthCount(t *testing.T, g *gatewayProc, section, field string) float64 {
	t.Helper()
	m, _ := decodeHealth(t, g, true)[section].(map[string]any)
	n, _ := m[field].(float64)
	return n
}

// failOnA makes the first of two connections fail upstream with fault and sends one
// request through A, which moves to the second; it returns the first's id and
// how many requests the failing upstream has seen.
func failOnA(t *testing.T, ts *teamServer, fault fakeupstream.Fault) (bad, good string, hits int) {
	t.Helper()
	a, b := ts.a, ts.b
	bad = a.addConn("bad", ts.upURL, "key-bad", 1)
	good = a.addConn("good", ts.upURL, "key-good", 2)
	within(t, "connections created on A routed by B", func() bool {
		resp, _ := b.chat(b.key, teamModel, false)
		return resp.StatusCode == http.StatusOK
	})
	ts.up.SetFault("key-bad", fault)
	resp, body := a.chat(a.key, teamModel, false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good {
		t.Fatalf("A with the first connection failing: %d via %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	hits = ts.up.Hits("key-bad")
	if hits == 0 {
		t.Fatal("A never tried the failing connection")
	}
	return bad, good, hits
}

// failAgainOnA sends A a second request the failing connection fails
// (a request counts once toward the breaker, whatever its retries), which
// the good connection serves.
func failAgainOnA(t *testing.T, ts *teamServer, good string) {
	t.Helper()
	resp, body := ts.a.chat(ts.a.key, teamModel, false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good {
		t.Fatalf("A's second request: %d via %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
}

// skipsBad checks that B serves through good at the first attempt without
// sending the failing connection anything.
func skipsBad(t *testing.T, ts *teamServer, good string, hits int) {
	t.Helper()
	resp, body := ts.b.chat(ts.b.key, teamModel, false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good ||
		resp.Header.Get("X-OmniRoute-Attempts") != "1" {
		t.Fatalf("B: %d via %q after %s attempts, want 200 via the good connection at the first attempt: %s", resp.StatusCode,
			resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), resp.Header.Get("X-OmniRoute-Attempts"), body)
	}
	if got := ts.up.Hits("key-bad"); got != hits {
		t.Fatalf("B sent the connection A found failing %d more request(s)", got-hits)
	}
}

const teamModel = "openai-compatible/gpt-4o-mini"

// TestTeamServerSharesCooldowns: a connection whose key the upstream refused
// (401) through A is cooled on A, and within a second B counts it cooling down and skips it (it never
// sends it the request). The breaker stays CLOSED here (default threshold), so
// the cooldown alone decides.
func TestTeamServerSharesCooldowns(t *testing.T) {
	ts := newTeamServer(t, false)
	// A cooldown that outlasts the checks below however slow the machine: at
	// the default 3 s (an API key's first step) a loaded machine's health read
	// on A came after the cooldown had ended ("A counts 0 connections cooling
	// down"). What is checked is that it is shared, not how long it lasts.
	ts.a.mustMgmt(http.StatusOK, http.MethodPatch, "/api/resilience",
		map[string]any{"connectionCooldown": map[string]any{"apikey": map[string]any{"baseCooldownMs": 120_000}}})
	_, good, hits := failOnA(t, ts, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	if n := healthCount(t, ts.a, "connectionHealth", "coolingDown"); n != 1 {
		t.Fatalf("A counts %v connections cooling down, want 1: %v", n, decodeHealth(t, ts.a, true))
	}
	if n := healthCount(t, ts.a, "circuitBreakers", "open"); n != 0 {
		t.Fatalf("A has %v OPEN breakers; this test needs the cooldown alone", n)
	}
	took := within(t, "the cooldown A set counted by B", func() bool {
		return healthCount(t, ts.b, "connectionHealth", "coolingDown") == 1
	})
	t.Logf("cooldown on B after %v", took)
	skipsBad(t, ts, good, hits)
	ts.a.stop()
	ts.b.stop()
}

// TestTeamServerSharesBreakers: the provider breaker A opened (threshold 2:
// two failing requests, each counting once whatever its retries) shows OPEN
// on B within a second, and B does not send that provider the request.
func TestTeamServerSharesBreakers(t *testing.T) {
	ts := newTeamServer(t, false, "OMNIROUTE_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD=2",
		"OMNIROUTE_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD=1")
	_, good, _ := failOnA(t, ts, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	failAgainOnA(t, ts, good)
	hits := ts.up.Hits("key-bad")
	if n := healthCount(t, ts.a, "circuitBreakers", "open"); n != 1 {
		t.Fatalf("A has %v OPEN breakers after the failures, want 1: %v", n, decodeHealth(t, ts.a, true))
	}
	took := within(t, "the breaker A opened shown OPEN by B", func() bool {
		return healthCount(t, ts.b, "circuitBreakers", "open") == 1
	})
	t.Logf("breaker OPEN on B after %v", took)
	skipsBad(t, ts, good, hits)
	ts.a.stop()
	ts.b.stop()
}

// TestImportDBMovesADesktopInstallToPostgres: a desktop user's gateway (SQLite)
// with a connection, a client key, a setting and served requests is stopped;
// `omniroute migrate` prepares the empty PostgreSQL database, `omniroute
// import-db` copies the desktop's database into it (`omniroute export` copies
// it back into a new SQLite file), and
// the same data directory started on PostgreSQL serves the same key through the
// same connection, with the setting and the request log. A second import into
// the now populated database is refused.
func TestImportDBMovesADesktopInstallToPostgres(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	url := pgs.NewDatabase(t)
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	dir := t.TempDir()

	g := startGateway(t, dir, 0)
	conn := g.addConn("work", upURL, "key-work", 1)
	created := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{"name": "ci"})
	key, _ := created["key"].(string)
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"maxAttempts": 4})
	for range 3 {
		if resp, body := g.chat(key, teamModel, false); resp.StatusCode != http.StatusOK {
			t.Fatalf("chat on SQLite: %d %s", resp.StatusCode, body)
		}
	}
	defaultKey, port := g.key, g.port
	g.stop()

	env := append(gatewayEnv(dir, port), "OMNIROUTE_DATABASE_URL="+url)
	// A deployment script may migrate the empty database first.
	if out, errOut, code := runCLI(t, env, "migrate"); code != 0 || !strings.HasPrefix(out, "schema version ") {
		t.Fatalf("migrate: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code := runCLI(t, env, "import-db")
	if code != 0 {
		t.Fatalf("import-db: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"provider_connections", "api_keys", "request_logs", "secret.key"} {
		if !strings.Contains(out, want) {
			t.Errorf("import-db output lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := runCLI(t, env, "import-db"); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Errorf("a second import: exit %d, stderr %q; want 1 and 'not empty'", code, errOut)
	}

	// And back: the PostgreSQL database exported into a new SQLite file has
	// the desktop's rows.
	backup := filepath.Join(t.TempDir(), "backup.db")
	out, errOut, code = runCLI(t, env, "export", "--to", backup)
	if code != 0 || !strings.Contains(out, "request_logs") {
		t.Fatalf("export: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, env, "export", "--to", backup); code != 1 || !strings.Contains(errOut, "exists") {
		t.Errorf("export over an existing file: exit %d, %q; want 1 and 'exists'", code, errOut)
	}

	p := startGateway(t, dir, 0, "OMNIROUTE_DATABASE_URL="+url)
	if p.key != defaultKey {
		t.Errorf("default key on PostgreSQL %q, want the desktop's %q", p.key, defaultKey)
	}
	resp, body := p.chat(key, teamModel, false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != conn {
		t.Fatalf("the imported key through the imported connection: %d via %q: %s", resp.StatusCode,
			resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	if s := p.mustMgmt(http.StatusOK, http.MethodGet, "/api/settings", nil); s["maxAttempts"] != float64(4) {
		t.Errorf("settings after import: maxAttempts %v, want 4", s["maxAttempts"])
	}
	db := pgConn(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var logs int
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM request_logs WHERE status = 200`).Scan(&logs); err != nil {
		t.Fatal(err)
	}
	if logs < 3 {
		t.Errorf("%d request logs in PostgreSQL, want the desktop's 3 (and more)", logs)
	}
	p.stop()
}

// TestTeamServerOneProbeAcrossInstances: when the breaker A opened reaches
// HALF_OPEN on both instances, a burst of requests through A and B sends the
// failing provider exactly one probe: the database grants it to one instance,
// the other moves on.
func TestTeamServerOneProbeAcrossInstances(t *testing.T) {
	ts := newTeamServer(t, false, "OMNIROUTE_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD=2",
		"OMNIROUTE_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD=1", "OMNIROUTE_CIRCUIT_BREAKER_API_KEY_RESET_TIMEOUT_MS=1000")
	_, good, _ := failOnA(t, ts, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	failAgainOnA(t, ts, good) // a request counts once: the second opens it
	within(t, "the breaker A opened shown OPEN by B", func() bool {
		return healthCount(t, ts.b, "circuitBreakers", "open") == 1
	})
	deadline := time.Now().Add(10 * time.Second)
	for healthCount(t, ts.a, "circuitBreakers", "halfOpen") != 1 || healthCount(t, ts.b, "circuitBreakers", "halfOpen") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the breaker did not reach HALF_OPEN on both: A %v, B %v", decodeHealth(t, ts.a, true)["circuitBreakers"],
				decodeHealth(t, ts.b, true)["circuitBreakers"])
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
	before := ts.up.Hits("key-bad")
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := ts.a
			if i%2 == 1 {
				g = ts.b
			}
			resp, body := g.chat(g.key, teamModel, false)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good {
				t.Errorf("%s: %d via %q: %s", g.base, resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
			}
		}()
	}
	wg.Wait()
	if probes := ts.up.Hits("key-bad") - before; probes != 1 {
		t.Fatalf("the failing provider got %d probe request(s) from the burst, want exactly 1", probes)
	}
	ts.a.stop()
	ts.b.stop()
}

// TestTeamServerUnreachableDatabase: the database host stops answering (its
// port accepts connections and then says nothing, like a network partition)
// for 7 s. Requests keep their usual speed on both instances, including one
// that cools a connection (the cooldown is written behind the request) while
// the lease view is refreshed in the background; after the database returns
// the cooldown reaches it.
func TestTeamServerUnreachableDatabase(t *testing.T) {
	ts := newTeamServer(t, true)
	a, b := ts.a, ts.b
	bad := a.addConn("bad", ts.upURL, "key-bad", 1)
	good := a.addConn("good", ts.upURL, "key-good", 2)
	within(t, "connections created on A routed by B", func() bool {
		resp, _ := b.chat(b.key, teamModel, false)
		return resp.StatusCode == http.StatusOK
	})
	if err := ts.pg.Pause(); err != nil {
		t.Fatal(err)
	}
	tarpit, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ts.pg.Port()))
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var heldMu sync.Mutex
	go func() {
		for {
			c, err := tarpit.Accept()
			if err != nil {
				return
			}
			heldMu.Lock()
			held = append(held, c) // accepted, never answered
			heldMu.Unlock()
		}
	}()
	closeTarpit := func() {
		_ = tarpit.Close()
		heldMu.Lock()
		for _, c := range held {
			_ = c.Close()
		}
		heldMu.Unlock()
	}
	defer closeTarpit()

	ts.up.SetFault("key-bad", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	start := time.Now()
	var slowest time.Duration
	for i := 0; time.Since(start) < 7*time.Second; i++ {
		g := a
		if i%2 == 1 {
			g = b
		}
		t0 := time.Now()
		resp, body := g.chat(g.key, teamModel, false)
		d := time.Since(t0)
		slowest = max(slowest, d)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good {
			t.Fatalf("database unreachable: %s answered %d via %q: %s", g.base, resp.StatusCode,
				resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
		}
		if d > time.Second {
			t.Fatalf("database unreachable: a request through %s took %v", g.base, d)
		}
		time.Sleep(100 * time.Millisecond) // pacing of the probe requests, not a timing assertion
	}
	t.Logf("slowest request while the database was unreachable: %v", slowest)
	closeTarpit()
	if err := ts.pg.Resume(); err != nil {
		t.Fatal(err)
	}
	// The cooldown A set while the database was away reaches it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var status string
		db, err := pgx.Connect(ctx, ts.url)
		if err == nil {
			err = db.QueryRow(ctx, `SELECT test_status FROM provider_connections WHERE id = $1`, bad).Scan(&status)
			_ = db.Close(ctx)
		}
		if err == nil && status != "active" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the cooldown set during the outage never reached the database (status %q, %v)", status, err)
		}
		time.Sleep(200 * time.Millisecond) // poll interval
	}
	a.stop()
	b.stop()
}

// TestTeamServerSharesSessionPins: a session served through A by the second
// connection (the first was failing) is pinned there; once the first serves
// again, B sends that session to the second as well (the pin A wrote), and a
// request without the session to the first.
func TestTeamServerSharesSessionPins(t *testing.T) {
	ts := newTeamServer(t, false)
	a, b := ts.a, ts.b
	first := a.addConn("first", ts.upURL, "key-first", 1)
	second := a.addConn("second", ts.upURL, "key-second", 2)
	within(t, "connections created on A routed by B", func() bool {
		resp, _ := b.chat(b.key, teamModel, false)
		return resp.StatusCode == http.StatusOK
	})
	session := func(g *gatewayProc) string {
		resp, body := g.do(http.MethodPost, "/v1/chat/completions", chatBody(teamModel, false),
			map[string]string{"Authorization": "Bearer " + g.key, "X-OmniRoute-Session": "team-session-1"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: session request %d: %s", g.base, resp.StatusCode, body)
		}
		return resp.Header.Get("X-OmniRoute-Selected-Connection-Id")
	}
	ts.up.SetFault("key-first", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	if got := session(a); got != second {
		t.Fatalf("A served the session via %q, want the second connection %s", got, second)
	}
	ts.up.ClearFault("key-first")
	// A's cooldown of the first connection is written behind the request: B
	// must have it before the clear, or the clear could land first.
	within(t, "the first connection's cooldown seen by B", func() bool {
		return healthCount(t, b, "connectionHealth", "coolingDown") == 1
	})
	a.mustMgmt(http.StatusOK, http.MethodPost, "/api/resilience/cooldowns", map[string]any{"connectionIds": []string{first}})
	within(t, "the cleared cooldown seen by B", func() bool {
		return healthCount(t, b, "connectionHealth", "coolingDown") == 0
	})
	if resp, body := b.chat(b.key, teamModel, false); resp.StatusCode != http.StatusOK ||
		resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != first {
		t.Fatalf("B without a session: %d via %q, want the first connection: %s", resp.StatusCode,
			resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	// The pin is written behind A's request and reaches B through the change
	// feed: wait until B's routing (explain, no request sent) puts it first.
	within(t, "A's session pin adopted by B", func() bool {
		code, m := b.mgmt(http.MethodGet, "/api/routing/explain?model="+url.QueryEscape(teamModel)+"&session=team-session-1", nil)
		cands, _ := m["candidates"].([]any)
		if code != http.StatusOK || len(cands) == 0 {
			return false
		}
		c, _ := cands[0].(map[string]any)
		return c["connectionId"] == second
	})
	if got := session(b); got != second {
		t.Fatalf("B served the session via %q, want %s where A pinned it", got, second)
	}
	a.stop()
	b.stop()
}

// TestTeamServerNeedsTheSharedKey: an instance joining a populated database
// without the instances' secret.key, or with another one, refuses to start
// and says to copy the key.
func TestTeamServerNeedsTheSharedKey(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	env := "OMNIROUTE_DATABASE_URL=" + pgs.NewDatabase(t)
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	a := startGateway(t, t.TempDir(), 0, env)
	a.addConn("one", upURL, "key-1", 1)

	if _, err := tryStart(t, t.TempDir(), testproc.FreePort(t), env); err == nil || !strings.Contains(err.Error(), "copy secret.key") {
		t.Fatalf("an instance without secret.key: %v; want a refusal saying to copy secret.key", err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "secret.key"), []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tryStart(t, other, testproc.FreePort(t), env); err == nil || !strings.Contains(err.Error(), "needs the same secret.key") {
		t.Fatalf("an instance with another secret.key: %v; want a refusal naming the shared key", err)
	}
	a.stop()
}
