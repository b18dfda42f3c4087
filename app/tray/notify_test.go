package tray

import (
	"strings"
	"testing"
	"time"

	"omniroute/backend/health"
)

type fakeNotifier struct{ got []Note }

func (f *fakeNotifier) Notify(n Note) error { f.got = append(f.got, n); return nil }

// rep builds a report of connections given as id → state (serving when the
// state serves).
func rep(states map[string]health.State, reasons map[string]string) health.Report {
	r := health.Report{}
	for id, s := range states {
		serving := s == health.Serving || s == health.Degraded
		r.Connections = append(r.Connections, health.ConnHealth{ID: id, Name: "Conn " + id, State: s, Serving: serving, Reason: reasons[id]})
		r.Summary.Total++
		if serving {
			r.Summary.Serving++
		}
	}
	return r
}

// TestWatcherNotifies: nothing at start; a connection going out of service,
// a rejected key and an exhausted quota are announced once; all serving
// again is announced; a flapping connection is announced at most once per
// 10 min; at most 3 notifications a minute; muted sends nothing but follows
// the state; switching off and another key's lease are not announced.
func TestWatcherNotifies(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	f := &fakeNotifier{}
	w := NewWatcher(f, func() time.Time { return now })
	S, Off := health.Serving, health.Disabled
	w.Observe(rep(map[string]health.State{"a": health.KeyRejected, "b": S}, nil), false)
	if len(f.got) != 0 {
		t.Fatalf("announced the baseline: %v", f.got)
	}
	step := func(d time.Duration, states map[string]health.State, reasons map[string]string, muted bool, want ...string) {
		t.Helper()
		now = now.Add(d)
		before := len(f.got)
		w.Observe(rep(states, reasons), muted)
		got := f.got[before:]
		if len(got) != len(want) {
			t.Fatalf("at %s: %d notes %v, want %v", now.Format("15:04:05"), len(got), got, want)
		}
		for i := range want {
			if !strings.Contains(got[i].Summary, want[i]) {
				t.Fatalf("note %q, want %q", got[i].Summary, want[i])
			}
		}
	}
	step(time.Minute, map[string]health.State{"a": S, "b": S}, nil, false, "all connections serving again")
	step(time.Minute, map[string]health.State{"a": health.KeyRejected, "b": S}, nil, false, "Conn a: key rejected")
	step(time.Minute, map[string]health.State{"a": health.KeyRejected, "b": health.Cooling},
		map[string]string{"b": "quota (UPSTREAM_QUOTA_EXHAUSTED)"}, false, "Conn b: quota exhausted")
	step(time.Minute, map[string]health.State{"a": S, "b": S}, nil, false)                  // all again, but within 5 min of the last one
	step(time.Minute, map[string]health.State{"a": health.Unreachable, "b": S}, nil, false) // a again within 10 min
	step(10*time.Minute, map[string]health.State{"a": S, "b": S}, nil, false, "all connections serving again")
	step(time.Minute, map[string]health.State{"a": health.BreakerOpen, "b": Off}, nil, false, "Conn a out of service") // b switched off: not announced
	step(time.Minute, map[string]health.State{"a": S, "b": S}, nil, true)                                              // muted
	step(time.Minute, map[string]health.State{"a": S, "b": health.Leased}, nil, false)                                 // another key's lease
	// A burst: 5 connections fail at once, 3 are announced.
	now = now.Add(20 * time.Minute)
	five := map[string]health.State{"c1": S, "c2": S, "c3": S, "c4": S, "c5": S}
	w.Observe(rep(five, nil), false)
	for id := range five {
		five[id] = health.Terminal
	}
	before := len(f.got)
	now = now.Add(burstWindow) // past the "all serving" note the line above sent
	w.Observe(rep(five, nil), false)
	if n := len(f.got) - before; n != 3 {
		t.Fatalf("burst: %d notes, want 3", n)
	}
	for _, n := range f.got[before:] {
		if !n.Urgent {
			t.Fatalf("an outage is urgent: %+v", n)
		}
	}
}
