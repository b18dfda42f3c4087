package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"omniroute/tests/fakeupstream"
)

// herdSize is how many failing requests the herd sends, half through each
// instance.
const herdSize = 8

// herdBody is an OpenAI 429 without a retry hint: the ladder's 3 s base
// cooldown applies, and the gateway does not retry in place.
const herdBody = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`

// cooldownView is one connection's cooldown as an instance (or the database)
// holds it: its backoff level and its deadline in Unix milliseconds.
type cooldownView struct {
	level int
	until int64
}

// cooldownOf reads connection id's cooldown from g's /api/resilience/cooldowns.
func cooldownOf(t *testing.T, g *gatewayProc, id string) cooldownView {
	t.Helper()
	m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience/cooldowns", nil)
	list, _ := m["connections"].([]any)
	for _, x := range list {
		c, _ := x.(map[string]any)
		if c["id"] != id {
			continue
		}
		v := cooldownView{}
		if n, ok := c["backoffLevel"].(float64); ok {
			v.level = int(n)
		}
		if s, ok := c["rateLimitedUntil"].(string); ok {
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("rateLimitedUntil %q: %v", s, err)
			}
			v.until = at.UnixMilli()
		}
		return v
	}
	t.Fatalf("%s does not list connection %s: %v", g.base, id, m)
	return cooldownView{}
}

// herdDB is the test's own session on the team server's database: it reads
// the stored row and counts the cooldown writes the database received.
type herdDB struct {
	conn *pgx.Conn
	id   string
}

// openHerdDB connects to the database and installs an audit trigger that
// records every UPDATE of connection id that leaves it with a cooldown
// deadline: each one is a cooldown some instance wrote.
func openHerdDB(t *testing.T, url, id string) *herdDB {
	t.Helper()
	conn := pgConn(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, sql := range []string{
		`CREATE TABLE test_cooldown_writes (seq serial PRIMARY KEY, backoff_level int, rate_limited_until bigint)`,
		`CREATE FUNCTION test_audit_cooldown() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN
		   IF NEW.rate_limited_until > 0 THEN
		     INSERT INTO test_cooldown_writes (backoff_level, rate_limited_until) VALUES (NEW.backoff_level, NEW.rate_limited_until);
		   END IF;
		   RETURN NEW;
		 END $$`,
		fmt.Sprintf(`CREATE TRIGGER test_audit_cooldown AFTER UPDATE ON provider_connections FOR EACH ROW
		 WHEN (NEW.id = '%s') EXECUTE FUNCTION test_audit_cooldown()`, id),
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	return &herdDB{conn: conn, id: id}
}

func (d *herdDB) row(t *testing.T) cooldownView {
	t.Helper()
	var v cooldownView
	if err := d.conn.QueryRow(context.Background(), `SELECT backoff_level, rate_limited_until FROM provider_connections WHERE id = $1`,
		d.id).Scan(&v.level, &v.until); err != nil {
		t.Fatal(err)
	}
	return v
}

// writes lists the cooldown writes the database received, oldest first.
func (d *herdDB) writes(t *testing.T) []cooldownView {
	t.Helper()
	rows, err := d.conn.Query(context.Background(), `SELECT backoff_level, rate_limited_until FROM test_cooldown_writes ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cooldownView, error) {
		var v cooldownView
		err := r.Scan(&v.level, &v.until)
		return v, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// coolingEvents counts the history's "cooling_down" events of the connection
// (the usage timeline's cooldown segments), written by any instance.
func (d *herdDB) coolingEvents(t *testing.T) int {
	t.Helper()
	var n int
	if err := d.conn.QueryRow(context.Background(), `SELECT COUNT(*) FROM state_events WHERE kind = 'cooldown'
		AND state = 'cooling_down' AND connection_id = $1`, d.id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// agreed waits until A, B and the database hold the same cooldown of the
// connection, and returns it.
func (ts *teamServer) agreed(t *testing.T, db *herdDB, id string) cooldownView {
	t.Helper()
	var a, b, d cooldownView
	start := time.Now()
	for {
		a, b, d = cooldownOf(t, ts.a, id), cooldownOf(t, ts.b, id), db.row(t)
		if a == d && b == d {
			t.Logf("A, B and the database agree after %v: level %d, deadline %s", time.Since(start).Round(time.Millisecond), d.level,
				time.UnixMilli(d.until).UTC().Format(time.RFC3339Nano))
			return d
		}
		if time.Since(start) > shareWithin {
			t.Fatalf("not agreed within %v: A %+v, B %+v, database %+v", shareWithin, a, b, d)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not a timing assertion
	}
}

// TestTeamServerCooldownHerdCountsOnce: the cooldown anti-thundering-herd
// holds across instances. A herd of failing requests split across A and B
// reaches the upstream together (the fake holds them until all have arrived)
// and gets 429s with account-wide evidence (X-RateLimit-Scope: account), so
// both instances see the failure before either knows the other's. The
// database decides: afterwards A, B and the database show backoff level 1 and
// the same deadline, the database received exactly one cooldown write, and
// the team's history (the usage timeline) holds one cooldown segment.
// After the deadline (plus a margin) the next failure climbs to level 2 — one
// more write.
func TestTeamServerCooldownHerdCountsOnce(t *testing.T) {
	ts := newTeamServer(t, false, "OMNIROUTE_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD=1000")
	a, b := ts.a, ts.b
	id := a.addConn("herd", ts.upURL, "key-herd", 1)
	within(t, "the connection created on A routed by B", func() bool {
		resp, _ := b.chat(b.key, teamModel, false)
		return resp.StatusCode == http.StatusOK
	})
	db := openHerdDB(t, ts.url, id)
	ts.up.Reset()
	ts.up.SetFault("key-herd", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429,
		Headers: map[string]string{"X-RateLimit-Scope": "account"}, Gather: herdSize, Body: herdBody})

	var wg sync.WaitGroup
	statuses := make([]int, herdSize)
	for i := range herdSize {
		g := a
		if i%2 == 1 {
			g = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := g.chat(g.key, teamModel, false)
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusTooManyRequests {
			t.Fatalf("herd request %d answered %d, want 429", i, s)
		}
	}
	if n := ts.up.Hits("key-herd"); n != herdSize {
		t.Fatalf("the upstream saw %d requests, want the whole herd (%d) at once", n, herdSize)
	}
	first := ts.agreed(t, db, id)
	if first.level != 1 {
		t.Fatalf("backoff level %d after one herd, want 1", first.level)
	}
	if w := db.writes(t); len(w) != 1 {
		t.Fatalf("the database received %d cooldown writes for one herd, want 1: %+v", len(w), w)
	}
	within(t, "the team's history records the cooldown", func() bool { return db.coolingEvents(t) >= 1 })
	time.Sleep(200 * time.Millisecond) // room for a second event to land, were there one
	if n := db.coolingEvents(t); n != 1 {
		t.Fatalf("the history holds %d cooldown segments for one herd, want 1", n)
	}

	// The deadline passes (a margin for the two clocks' readings); the next
	// failure, through B, climbs one rung.
	time.Sleep(time.Until(time.UnixMilli(first.until)) + 50*time.Millisecond)
	if resp, body := b.chat(b.key, teamModel, false); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after the cooldown: %d, want the upstream's 429: %s", resp.StatusCode, body)
	}
	if n := ts.up.Hits("key-herd"); n != herdSize+1 {
		t.Fatalf("the upstream saw %d requests, want %d", n, herdSize+1)
	}
	second := ts.agreed(t, db, id)
	if second.level != 2 || second.until <= first.until {
		t.Fatalf("after expiry: level %d until %+d ms, want level 2 and a later deadline", second.level, second.until-first.until)
	}
	if w := db.writes(t); len(w) != 2 {
		t.Fatalf("the database received %d cooldown writes, want 2: %+v", len(w), w)
	}
	within(t, "the history records the second cooldown", func() bool { return db.coolingEvents(t) == 2 })
	a.stop()
	b.stop()
}
