package instances

import (
	"testing"
	"time"

	"omniroute/backend/clock"
)

type memKV map[string]map[string]string

func (m memKV) SetValue(ns, k, v string) error {
	if m[ns] == nil {
		m[ns] = map[string]string{}
	}
	m[ns][k] = v
	return nil
}
func (m memKV) Values(ns string) (map[string]string, error) { return m[ns], nil }
func (m memKV) DeleteValue(ns, k string) error              { delete(m[ns], k); return nil }

// TestLiveness: another instance's row is live until exactly Timeout after
// its last beat; a clean stop removes it; this instance is always listed.
func TestLiveness(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kv := memKV{}
	clk := clock.NewFake(t0)
	a := New(kv, clk, true, "a:20128", "1.0", "http://a:20128")
	b := New(kv, clk, true, "b:20128", "1.0", "http://b:20128")
	if err := b.Beat(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		after time.Duration
		live  bool
	}{
		{"just beaten", 0, true},
		{"1 ms before the timeout", Timeout - time.Millisecond, true},
		{"at the timeout", Timeout, false},
		{"1 ms after", Timeout + time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk.Set(t0.Add(tt.after))
			list, err := a.List()
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 {
				t.Fatalf("list %+v, want a and b", list)
			}
			var gotB *Info
			for i := range list {
				if list[i].Name == "b:20128" {
					gotB = &list[i]
				}
				if list[i].Name == "a:20128" && (!list[i].Self || !list[i].Live) {
					t.Fatalf("self %+v, want live and self", list[i])
				}
			}
			if gotB == nil || gotB.Live != tt.live || gotB.Self || !gotB.LastSeen.Equal(t0) || gotB.Address != "http://b:20128" {
				t.Fatalf("b %+v, want live=%v", gotB, tt.live)
			}
		})
	}
	if err := b.Leave(); err != nil {
		t.Fatal(err)
	}
	if list, _ := a.List(); len(list) != 1 || !list[0].Self {
		t.Fatalf("after b left: %+v", list)
	}
}

// TestNotShared: an instance on a database of its own writes nothing and
// lists itself alone.
func TestNotShared(t *testing.T) {
	kv := memKV{}
	r := New(kv, clock.NewFake(time.Unix(0, 0)), false, "solo", "1.0", "http://127.0.0.1:20128")
	if err := r.Beat(); err != nil {
		t.Fatal(err)
	}
	if len(kv) != 0 {
		t.Fatalf("a heartbeat was written: %v", kv)
	}
	list, err := r.List()
	if err != nil || len(list) != 1 || list[0].Name != "solo" || !list[0].Self {
		t.Fatalf("list %+v %v", list, err)
	}
}
