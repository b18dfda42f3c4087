package usagestats

import (
	"testing"
	"time"

	"omniroute/backend/store"
)

func TestBuildTimeline(t *testing.T) {
	base := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return base.Add(d).UnixMilli() }
	from, now := base.Add(time.Minute), base.Add(time.Hour)
	events := []store.StateEvent{
		// Opened before the window: the segment starts at from.
		{At: ms(0), Provider: "lab", Kind: "breaker", State: "OPEN"},
		{At: ms(2 * time.Minute), Provider: "lab", Kind: "breaker", State: "HALF_OPEN"},
		{At: ms(3 * time.Minute), Provider: "lab", Kind: "breaker", State: "CLOSED"},
		// A cooldown ends at its deadline even if the next event comes later.
		{At: ms(10 * time.Minute), Provider: "openai", ConnectionID: "w", Kind: "cooldown", State: "cooling_down", Until: ms(11 * time.Minute)},
		{At: ms(20 * time.Minute), Provider: "openai", ConnectionID: "w", Kind: "cooldown", State: "healthy"},
		// Still open: runs until now.
		{At: ms(50 * time.Minute), Provider: "lab", Kind: "breaker", State: "OPEN"},
	}
	rows := Timeline(events, from, now)
	if len(rows) != 2 || rows[0].Provider != "lab" || rows[1].Provider != "openai" {
		t.Fatalf("rows %+v", rows)
	}
	type seg struct {
		state    string
		from, to time.Duration
	}
	want := map[string][]seg{
		"lab":    {{"OPEN", time.Minute, 2 * time.Minute}, {"HALF_OPEN", 2 * time.Minute, 3 * time.Minute}, {"OPEN", 50 * time.Minute, time.Hour}},
		"openai": {{"cooling_down", 10 * time.Minute, 11 * time.Minute}},
	}
	for _, r := range rows {
		w := want[r.Provider]
		if len(r.Segments) != len(w) {
			t.Fatalf("%s: %+v", r.Provider, r.Segments)
		}
		for i, s := range r.Segments {
			if s.State != w[i].state || !s.From.Equal(base.Add(w[i].from)) || !s.To.Equal(base.Add(w[i].to)) {
				t.Errorf("%s[%d] = %s %v–%v, want %+v", r.Provider, i, s.State, s.From, s.To, w[i])
			}
		}
	}
}

func TestPercentileFromHistogram(t *testing.T) {
	h := make([]int64, len(store.LatencyBinsMs)+1)
	h[store.LatencyBin(40)] = 50  // < 50 ms
	h[store.LatencyBin(900)] = 45 // < 1 s
	h[store.LatencyBin(9000)] = 5 // < 10 s
	if got := Percentile(h, 0.5); got != 50 {
		t.Errorf("p50 %d", got)
	}
	if got := Percentile(h, 0.9); got != 1000 {
		t.Errorf("p90 %d", got)
	}
	if got := Percentile(h, 0.99); got != 10000 {
		t.Errorf("p99 %d", got)
	}
	if got := Percentile(make([]int64, len(h)), 0.5); got != 0 {
		t.Errorf("empty %d", got)
	}
}
