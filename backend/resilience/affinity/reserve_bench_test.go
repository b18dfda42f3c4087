package affinity

import (
	"fmt"
	"testing"
	"time"

	"omniroute/backend/clock"
)

// BenchmarkClaimOneInstance: what the claim at a session's first attempt
// costs one instance (no database), with 300 live pins over three accounts:
// a new session reserved on the least occupied account (its pin dropped
// after, so the pins stay as many), and a pinned session's turn (unchanged:
// no lock, nothing reserved).
func BenchmarkClaimOneInstance(b *testing.B) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(clk, func() time.Duration { return time.Hour }, nil)
	spread := Spread{Pool: "oauth-pool", Accounts: []Account{{"a", "oauth-pool"}, {"b", "oauth-pool"}, {"c", "oauth-pool"}}}
	for i := range 300 {
		_ = p.Served(fmt.Sprintf("live-%d", i), spread.Accounts[i%3].ConnectionID, "oauth-pool")
	}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("new-%d", i)
	}
	b.Run("new session reserved", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			key := keys[i%len(keys)]
			p.Claim(key, "a", "oauth-pool", "", spread)
			p.mu.Lock()
			p.deleteLocked(key)
			p.mu.Unlock()
		}
	})
	b.Run("pinned session", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.Claim("live-0", "a", "oauth-pool", "a", Spread{})
		}
	})
}
