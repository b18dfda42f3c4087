package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchPinStore is a migrated PostgreSQL store holding live pins, spread
// evenly over the accounts a, b and c (a team's sessions).
func benchPinStore(b *testing.B, live int) *Store {
	b.Helper()
	s, err := OpenPostgres(pg.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if err := s.DB().Exec(`INSERT INTO session_account_affinity (session_key, connection_id, provider, expires_at, updated_at)
		SELECT 'old-' || i, (ARRAY['a','b','c'])[1 + i % 3], 'p', ?, 1 FROM generate_series(1, ?) AS i`,
		time.Now().Add(time.Hour).UnixMilli(), live).Error; err != nil {
		b.Fatal(err)
	}
	if err := s.DB().Exec(`ANALYZE session_account_affinity`).Error; err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPinClaimNewSession is a new session's first turn on a team
// server: its pin claimed over the spread of three accounts
// (ClaimSpreadPin, one statement), against the single-connection claim it
// replaces (ClaimPin, issue 34), with 300 and 30,000 live pins in the
// table. Each iteration claims a new session whose pin expires 1 ms later,
// so the live pins stay as many (sessions come and go) while the expired
// ones pile up as they do between restarts. It prints each statement's p50
// and p99. A session's later turns claim nothing.
func BenchmarkPinClaimNewSession(b *testing.B) {
	ctx := context.Background()
	among := []PinChoice{{"a", "p"}, {"b", "p"}, {"c", "p"}}
	for _, live := range []int{300, 30_000} {
		for _, kind := range []string{"ClaimPin", "ClaimSpreadPin"} {
			b.Run(fmt.Sprintf("%s/live=%d", kind, live), func(b *testing.B) {
				s := benchPinStore(b, live)
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					now := time.Now()
					p := AffinityPin{SessionKey: fmt.Sprintf("new-%d", i), ConnectionID: among[i%3].ConnectionID, Provider: "p",
						ExpiresAt: now.UnixMilli() + 1, UpdatedAt: now.UnixMilli()}
					var err error
					if kind == "ClaimPin" {
						_, err = s.ClaimPin(ctx, p, "", now.UnixMilli())
					} else {
						_, err = s.ClaimSpreadPin(ctx, p, "p", among, now.UnixMilli())
					}
					lat = append(lat, time.Since(now))
					if err != nil {
						b.Fatal(err)
					}
				}
				reportLatencies(b, lat)
			})
		}
	}
}

// reportLatencies prints and records the latencies' p50 and p99.
func reportLatencies(b *testing.B, lat []time.Duration) {
	b.Helper()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("%s: %d statements, p50 %v, p99 %v", b.Name(), len(lat), p50, p99)
}

// BenchmarkPinClaimInterleaved claims new sessions with both statements in
// turn (ClaimPin, then ClaimSpreadPin), 300 live pins (each claimed pin
// expires 1 ms later, as above): on a loaded machine the two meet the same
// load, so their p50s compare fairly. It prints both.
func BenchmarkPinClaimInterleaved(b *testing.B) {
	ctx := context.Background()
	among := []PinChoice{{"a", "p"}, {"b", "p"}, {"c", "p"}}
	s := benchPinStore(b, 300)
	single, spread := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		now := time.Now()
		p := AffinityPin{SessionKey: fmt.Sprintf("one-%d", i), ConnectionID: among[i%3].ConnectionID, Provider: "p",
			ExpiresAt: now.UnixMilli() + 1, UpdatedAt: now.UnixMilli()}
		if _, err := s.ClaimPin(ctx, p, "", now.UnixMilli()); err != nil {
			b.Fatal(err)
		}
		single = append(single, time.Since(now))
		now = time.Now()
		p.SessionKey = fmt.Sprintf("spread-%d", i)
		if _, err := s.ClaimSpreadPin(ctx, p, "p", among, now.UnixMilli()); err != nil {
			b.Fatal(err)
		}
		spread = append(spread, time.Since(now))
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		lat  []time.Duration
	}{{"claimpin", single}, {"spread", spread}} {
		slices.Sort(m.lat)
		p50, p99 := m.lat[len(m.lat)/2], m.lat[len(m.lat)*99/100]
		b.ReportMetric(float64(p50.Microseconds())/1000, m.name+"-p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, m.name+"-p99-ms")
		b.Logf("%s: %d statements, p50 %v, p99 %v", m.name, len(m.lat), p50, p99)
	}
}
