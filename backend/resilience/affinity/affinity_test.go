package affinity

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type saver struct {
	mu    sync.Mutex
	saved []Pin
}

func (s *saver) SavePin(p Pin) error {
	s.mu.Lock()
	s.saved = append(s.saved, p)
	s.mu.Unlock()
	return nil
}

func TestPinLifecycle(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ttl := 10 * time.Minute
	sv := &saver{}
	p := New(clk, func() time.Duration { return ttl }, sv)
	if _, ok := p.Pinned("s1"); ok {
		t.Fatal("pinned before use")
	}
	_ = p.Served("s1", "c1", "openai")
	if c, ok := p.Pinned("s1"); !ok || c != "c1" {
		t.Fatalf("pin %q %v", c, ok)
	}
	// Repeated use within half the TTL writes nothing.
	clk.Advance(time.Minute)
	_ = p.Served("s1", "c1", "openai")
	if len(sv.saved) != 1 {
		t.Fatalf("writes %d, want 1", len(sv.saved))
	}
	// A move re-pins and writes.
	_ = p.Served("s1", "c2", "openai")
	if c, _ := p.Pinned("s1"); c != "c2" || len(sv.saved) != 2 {
		t.Fatalf("after move: %q, writes %d", c, len(sv.saved))
	}
	// Expiry boundary: TTL − 1 ms pinned, TTL gone.
	clk.Advance(ttl - time.Millisecond)
	if _, ok := p.Pinned("s1"); !ok {
		t.Fatal("expired early")
	}
	clk.Advance(time.Millisecond)
	if _, ok := p.Pinned("s1"); ok {
		t.Fatal("still pinned at TTL")
	}
	// TTL 0 disables affinity.
	ttl = 0
	_ = p.Served("s2", "c1", "openai")
	if _, ok := p.Pinned("s2"); ok {
		t.Fatal("pinned with TTL 0")
	}
}

func TestLoadRestoresPins(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(clk, func() time.Duration { return time.Hour }, nil)
	p.Load([]Pin{{SessionKey: "s", ConnectionID: "c9", ExpiresAt: clk.Now().Add(time.Minute)}})
	if c, ok := p.Pinned("s"); !ok || c != "c9" || p.Count() != 1 {
		t.Fatalf("%q %v", c, ok)
	}
	if Key(string(make([]byte, 1000))) == "" || len(Key(string(make([]byte, 1000)))) != maxKeyLen {
		t.Fatal("key not bounded")
	}
}

// TestOccupancyCountsLivePins: a connection's occupancy follows its pins as
// they are made, moved, refreshed, expired, loaded and adopted.
func TestOccupancyCountsLivePins(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(clk, func() time.Duration { return time.Minute }, nil)
	occ := func(want map[string]int) {
		t.Helper()
		for conn, n := range want {
			if got := p.Occupancy(conn); got != n {
				t.Fatalf("occupancy of %s = %d, want %d", conn, got, n)
			}
		}
	}
	_ = p.Served("s1", "a", "claude")
	_ = p.Served("s2", "a", "claude")
	_ = p.Served("s3", "b", "claude")
	occ(map[string]int{"a": 2, "b": 1})
	_ = p.Served("s1", "a", "claude") // refreshed: unchanged
	occ(map[string]int{"a": 2, "b": 1})
	_ = p.Served("s2", "b", "claude") // moved
	occ(map[string]int{"a": 1, "b": 2})
	clk.Advance(time.Minute)
	if _, ok := p.Pinned("s1"); ok { // expired at exactly its TTL: gone
		t.Fatal("s1 still pinned at its expiry")
	}
	occ(map[string]int{"a": 0, "b": 2})
	_ = p.Count() // the sweep drops s2 and s3 too
	occ(map[string]int{"b": 0})
	exp := clk.Now().Add(time.Minute)
	p.Load([]Pin{{SessionKey: "s4", ConnectionID: "c", ExpiresAt: exp}})
	p.Adopt([]Pin{{SessionKey: "s4", ConnectionID: "d", ExpiresAt: exp.Add(time.Second)}, {SessionKey: "s5", ConnectionID: "d", ExpiresAt: exp}})
	occ(map[string]int{"c": 0, "d": 2})
}
