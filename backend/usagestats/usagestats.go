// Package usagestats derives the usage page's statistics from what the store
// keeps: latency percentiles from per-bucket histograms, and the breaker /
// cooldown timeline from recorded state changes.
package usagestats

import (
	"sort"
	"time"

	"omniroute/backend/store"
)

// Latency holds per-bucket latency percentiles estimated from a histogram
// (each value is the upper bound of the bin the percentile falls in; 0: no requests).
type Latency struct {
	P50     []int64          `json:"p50"`
	P90     []int64          `json:"p90"`
	P99     []int64          `json:"p99"`
	Overall map[string]int64 `json:"overall"`
}

// Percentiles estimates p50/p90/p99 per bucket and overall from the
// per-bucket histograms (upper bound of the bin holding the percentile).
func Percentiles(per [][]int64) Latency {
	n := len(per)
	all := make([]int64, len(store.LatencyBinsMs)+1)
	out := Latency{P50: make([]int64, n), P90: make([]int64, n), P99: make([]int64, n)}
	for i, h := range per {
		out.P50[i], out.P90[i], out.P99[i] = Percentile(h, 0.5), Percentile(h, 0.9), Percentile(h, 0.99)
		for j, c := range h {
			all[j] += c
		}
	}
	out.Overall = map[string]int64{"p50": Percentile(all, 0.5), "p90": Percentile(all, 0.9), "p99": Percentile(all, 0.99)}
	return out
}

// Percentile is the upper bound of the latency bin (store.LatencyBinsMs)
// holding the p-th request of histogram h; past the last bin, twice its
// bound; 0 for no requests.
func Percentile(h []int64, p float64) int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := int64(float64(n)*p + 0.999999)
	var seen int64
	for i, c := range h {
		seen += c
		if seen >= rank {
			if i < len(store.LatencyBinsMs) {
				return store.LatencyBinsMs[i]
			}
			return store.LatencyBinsMs[len(store.LatencyBinsMs)-1] * 2
		}
	}
	return 0
}

// TimelineSegment is one stretch of a non-normal state.
type TimelineSegment struct {
	Kind         string    `json:"kind"` // breaker | cooldown
	State        string    `json:"state"`
	ConnectionID string    `json:"connectionId,omitempty"`
	Connection   string    `json:"connection,omitempty"`
	From         time.Time `json:"from"`
	To           time.Time `json:"to"`
	Detail       string    `json:"detail,omitempty"`
}

// TimelineRow is one provider's segments.
type TimelineRow struct {
	Provider string            `json:"provider"`
	Name     string            `json:"name"`
	Segments []TimelineSegment `json:"segments"`
}

// Timeline turns state changes into segments of non-normal states: a
// breaker segment lasts until the next change of that breaker; a cooldown until
// its deadline or the next change of that connection, whichever is first. Clipped
// to [from, now].
func Timeline(events []store.StateEvent, from, now time.Time) []TimelineRow {
	type open struct {
		ev    store.StateEvent
		start time.Time
	}
	byProvider := map[string]*TimelineRow{}
	var order []string
	row := func(p string) *TimelineRow {
		if r, ok := byProvider[p]; ok {
			return r
		}
		r := &TimelineRow{Provider: p, Segments: []TimelineSegment{}}
		byProvider[p] = r
		order = append(order, p)
		return r
	}
	current := map[string]open{}
	closeSeg := func(key string, end time.Time) {
		o, ok := current[key]
		if !ok {
			return
		}
		delete(current, key)
		if (o.ev.Kind == "cooldown" || o.ev.Kind == "model_lock") && o.ev.Until > 0 && time.UnixMilli(o.ev.Until).Before(end) {
			end = time.UnixMilli(o.ev.Until)
		}
		if end.After(now) {
			end = now
		}
		start := o.start
		if start.Before(from) {
			start = from
		}
		if !end.After(start) {
			return
		}
		r := row(o.ev.Provider)
		r.Segments = append(r.Segments, TimelineSegment{Kind: o.ev.Kind, State: o.ev.State, ConnectionID: o.ev.ConnectionID,
			From: start.UTC(), To: end.UTC(), Detail: o.ev.Detail})
	}
	for _, ev := range events {
		key := ev.Kind + "|" + ev.Provider + "|" + ev.ConnectionID
		at := time.UnixMilli(ev.At)
		closeSeg(key, at)
		row(ev.Provider)
		if (ev.Kind == "breaker" && ev.State != "CLOSED") || (ev.Kind == "cooldown" && ev.State != "healthy") || ev.Kind == "model_lock" {
			current[key] = open{ev: ev, start: at}
		}
	}
	keys := make([]string, 0, len(current))
	for k := range current {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		closeSeg(k, now)
	}
	out := make([]TimelineRow, 0, len(order))
	for _, p := range order {
		out = append(out, *byProvider[p])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out
}
