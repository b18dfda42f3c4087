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
