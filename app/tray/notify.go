package tray

import (
	"strings"
	"time"

	"omniroute/backend/health"
)

// Note is one desktop notification.
type Note struct {
	Summary string
	Body    string
	// Urgent: a connection went out of service (critical urgency); otherwise
	// normal (all serving again).
	Urgent bool
}

// Notifier shows a desktop notification (freedesktop notifications over
// D-Bus on Linux; a fake in tests).
type Notifier interface {
	Notify(Note) error
}

// Rate limits of the notifications.
const (
	// perConnectionGap: at most one notification per connection this often
	// (a flapping connection does not nag).
	perConnectionGap = 10 * time.Minute
	// allServingGap: "all serving again" at most this often.
	allServingGap = 5 * time.Minute
	// burstWindow and burstMax: at most burstMax notifications in any
	// burstWindow, whatever fails (one outage of many connections is a
	// few notifications, not a flood).
	burstWindow = time.Minute
	burstMax    = 3
)

// Watcher turns successive health reports into desktop notifications when a
// connection goes out of service, a key is rejected or a quota is exhausted,
// and when everything serves again; rate-limited, and silent while muted.
// The first report is the baseline (nothing is announced at start).
type Watcher struct {
	send Notifier
	now  func() time.Time

	started    bool
	serving    map[string]bool // connection id → serving at the last report
	allServing bool
	lastConn   map[string]time.Time
	lastAll    time.Time
	recent     []time.Time
}

// NewWatcher returns a watcher sending through n, on the clock now.
func NewWatcher(n Notifier, now func() time.Time) *Watcher {
	return &Watcher{send: n, now: now, serving: map[string]bool{}, lastConn: map[string]time.Time{}}
}

// Observe compares r with the previous report and notifies what changed.
// Muted (the user turned notifications off) it only follows the state.
func (w *Watcher) Observe(r health.Report, muted bool) {
	now := w.now()
	all := r.Summary.Total > 0 && r.Summary.Serving == r.Summary.Total
	next := make(map[string]bool, len(r.Connections))
	var notes []struct {
		key  string
		note Note
	}
	for _, c := range r.Connections {
		next[c.ID] = c.Serving
		was, known := w.serving[c.ID]
		if !w.started || c.Serving || (known && !was) {
			continue
		}
		if n, ok := outage(c); ok {
			notes = append(notes, struct {
				key  string
				note Note
			}{"conn:" + c.ID, n})
		}
	}
	if w.started && all && !w.allServing {
		notes = append(notes, struct {
			key  string
			note Note
		}{"all", Note{Summary: "OmniRoute: all connections serving again", Body: StatusLine(FromReport(r, false))}})
	}
	w.started, w.serving, w.allServing = true, next, all
	if muted {
		return
	}
	for _, n := range notes {
		if !w.allow(n.key, now) {
			continue
		}
		_ = w.send.Notify(n.note)
	}
}

// allow applies the rate limits and records a notification sent now.
func (w *Watcher) allow(key string, now time.Time) bool {
	if key == "all" {
		if !w.lastAll.IsZero() && now.Sub(w.lastAll) < allServingGap {
			return false
		}
	} else if t, ok := w.lastConn[key]; ok && now.Sub(t) < perConnectionGap {
		return false
	}
	kept := w.recent[:0]
	for _, t := range w.recent {
		if now.Sub(t) < burstWindow {
			kept = append(kept, t)
		}
	}
	w.recent = kept
	if len(w.recent) >= burstMax {
		return false
	}
	w.recent = append(w.recent, now)
	if key == "all" {
		w.lastAll = now
	} else {
		w.lastConn[key] = now
	}
	return true
}

// outage is the notification for a connection that stopped serving, and
// whether its state is one to announce (switching a connection off, or
// another key's lease, is the user's own doing).
func outage(c health.ConnHealth) (Note, bool) {
	name := c.Name
	body := c.Reason
	if !c.Until.IsZero() {
		body += " · back at " + c.Until.Local().Format("15:04")
	}
	switch c.State {
	case health.KeyRejected:
		return Note{Summary: "OmniRoute: " + name + ": key rejected", Body: body + ". Enter a new key (Connections).", Urgent: true}, true
	case health.Cooling, health.ModelsLocked:
		if strings.Contains(strings.ToLower(c.Reason), "quota") {
			return Note{Summary: "OmniRoute: " + name + ": quota exhausted", Body: body, Urgent: true}, true
		}
		return Note{Summary: "OmniRoute: " + name + " out of service", Body: body, Urgent: true}, true
	case health.Terminal, health.Unreachable, health.BreakerOpen:
		return Note{Summary: "OmniRoute: " + name + " out of service", Body: body, Urgent: true}, true
	}
	return Note{}, false
}
