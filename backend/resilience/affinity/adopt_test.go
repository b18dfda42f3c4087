package affinity

import (
	"testing"
	"time"

	"omniroute/backend/clock"
)

// TestAdopt: a stored pin is taken when this instance has none, one on
// another connection (whatever its expiry: the database decides a session's
// pin), or the same connection with an earlier expiry; never when it expired
// (exactly at its expiry it is gone) or names our connection no later.
func TestAdopt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		local   *Pin
		remote  Pin
		taken   int
		wantOn  string
		present bool
	}{
		{"new session", nil, Pin{SessionKey: "s", ConnectionID: "b", ExpiresAt: t0.Add(time.Minute)}, 1, "b", true},
		{"newer than ours", &Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute)},
			Pin{SessionKey: "s", ConnectionID: "b", ExpiresAt: t0.Add(time.Minute + time.Millisecond)}, 1, "b", true},
		{"as new as ours", &Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute)},
			Pin{SessionKey: "s", ConnectionID: "b", ExpiresAt: t0.Add(time.Minute)}, 1, "b", true},
		{"older than ours, another connection", &Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute)},
			Pin{SessionKey: "s", ConnectionID: "b", ExpiresAt: t0.Add(time.Second)}, 1, "b", true},
		{"ours, as new", &Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute)},
			Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute)}, 0, "a", true},
		{"ours, older", &Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute)},
			Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Second)}, 0, "a", true},
		{"ours, newer", &Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute)},
			Pin{SessionKey: "s", ConnectionID: "a", ExpiresAt: t0.Add(time.Minute + time.Millisecond)}, 1, "a", true},
		{"expired 1 ms ago", nil, Pin{SessionKey: "s", ConnectionID: "b", ExpiresAt: t0.Add(-time.Millisecond)}, 0, "", false},
		{"expiring now", nil, Pin{SessionKey: "s", ConnectionID: "b", ExpiresAt: t0}, 0, "", false},
		{"expiring in 1 ms", nil, Pin{SessionKey: "s", ConnectionID: "b", ExpiresAt: t0.Add(time.Millisecond)}, 1, "b", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(clock.NewFake(t0), func() time.Duration { return time.Hour }, nil)
			if tt.local != nil {
				p.Load([]Pin{*tt.local})
			}
			if n := p.Adopt([]Pin{tt.remote}); n != tt.taken {
				t.Fatalf("adopted %d, want %d", n, tt.taken)
			}
			got, ok := p.Pinned("s")
			if ok != tt.present || got != tt.wantOn {
				t.Fatalf("pinned %q %v, want %q %v", got, ok, tt.wantOn, tt.present)
			}
		})
	}
}
