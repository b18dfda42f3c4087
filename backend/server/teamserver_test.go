package server_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/clock"
	"omniroute/tests/fakeupstream"
	"omniroute/tests/pgtest"
)

// newTeam wires two gateways in this process on one PostgreSQL database, as
// two team-server instances (own data directories, one secret.key), on the
// wall clock: the race detector and the goroutine-leak check then cover the
// change follower, the write-behind and the lease view refresh.
func newTeam(t *testing.T) (a, b *env) {
	t.Helper()
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	url := pgs.NewDatabase(t)
	up := fakeupstream.New()
	upURL := up.Start() + "/v1"
	t.Cleanup(up.Close)
	mk := func() *env {
		return &env{t: t, dir: t.TempDir(), clk: clock.NewFake(time.Now()), real: true, envs: map[string]string{},
			up: up, upURL: upURL, dbURL: url}
	}
	a = mk()
	a.envs["OMNIROUTE_INSTANCE_NAME"] = "a"
	a.start()
	t.Cleanup(a.stop)
	b = mk()
	b.envs["OMNIROUTE_INSTANCE_NAME"] = "b"
	key, err := os.ReadFile(filepath.Join(a.dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "secret.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	b.start()
	t.Cleanup(b.stop)
	return a, b
}

// eventually polls ok for up to a second.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 1 s", what)
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
}

// TestTeamInProcess: two instances in one process on one PostgreSQL database
// share a key, a connection's cooldown and the lease table; both close
// cleanly (the package's goroutine-leak check runs after).
func TestTeamInProcess(t *testing.T) {
	a, b := newTeam(t)
	if a.key != b.key {
		t.Fatalf("default keys differ: %q %q", a.key, b.key)
	}
	bad := a.addConn("bad", "key-bad", 1)
	good := a.addConn("good", "key-good", 2)
	key := a.leaseKey(bad, good)
	eventually(t, "a key created on A accepted by B", func() bool {
		resp, _ := b.chat("openai-compatible/gpt-4o-mini", false, map[string]string{"Authorization": "Bearer " + key})
		return resp.StatusCode == 200
	})
	a.up.SetFault("key-bad", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	if resp, body := a.chat("openai-compatible/gpt-4o-mini", false, map[string]string{"Authorization": "Bearer " + key}); resp.StatusCode != 200 ||
		resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != good {
		t.Fatalf("A: %d %s", resp.StatusCode, body)
	}
	eventually(t, "the cooldown A set seen by B", func() bool {
		_, m := b.mgmt("GET", "/api/monitoring/health", nil)
		ch, _ := m["connectionHealth"].(map[string]any)
		return ch["coolingDown"] == float64(1)
	})
	resp, body := b.lease(key, owner1, map[string]any{"action": "acquire", "model": "openai-compatible/gpt-4o-mini"})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "connectionId").String() != good {
		t.Fatalf("lease on B: %d %s", resp.StatusCode, body)
	}
	resp, body = a.lease(key, owner2, map[string]any{"action": "acquire", "model": "openai-compatible/gpt-4o-mini"})
	if resp.StatusCode != 429 {
		t.Fatalf("a second lease through A on the one serving connection: %d %s, want 429", resp.StatusCode, body)
	}
	if resp.Header.Get("X-OmniRoute-Instance") != "a" {
		t.Fatalf("X-OmniRoute-Instance %q, want a", resp.Header.Get("X-OmniRoute-Instance"))
	}
}
