package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// HealthEvent is the payload of "health" events (the desktop window relays it
// too) and its signature: relay it again only when the signature changes.
func (a *API) HealthEvent() (map[string]any, string) {
	ev := a.healthEvent()
	sig, _ := ev["signature"].(string)
	delete(ev, "signature")
	return ev, sig
}

// healthEvent is the payload of "health" events.
// It carries the whole health model, so every page shows the same truth.
func (a *API) healthEvent() map[string]any {
	h := a.ComputeHealth()
	return map[string]any{"status": h.Status, "circuitBreakers": h.CircuitBreakers,
		"connectionHealth": map[string]any{"coolingDown": h.CoolingDown, "terminal": h.Terminal, "total": h.Total,
			"soonestRetryAfterMs": h.SoonestRetryMs},
		"generatedAt": h.Report.At.UTC().Format(time.RFC3339Nano), "summary": h.Report.Summary,
		"connections": h.Report.Connections, "providers": h.Report.Providers, "combos": h.Report.Combos,
		"signature": healthSignature(h)}
}

// healthSignature is what makes a health event news: the overall status, the
// breakers and every connection's, provider's and combo's state with its
// deadline (absolute, so a ticking countdown is not news; in whole seconds, as
// an open breaker's deadline is now + its remaining hold, read a moment apart).
func healthSignature(h Health) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%v|%d/%d|", h.Status, h.CircuitBreakers, h.Report.Summary.Serving, h.Report.Summary.Total)
	for _, c := range h.Report.Connections {
		fmt.Fprintf(&b, "c:%s=%s@%d#%d,", c.ID, c.State, c.Until.Unix(), len(c.Locks))
	}
	for _, p := range h.Report.Providers {
		fmt.Fprintf(&b, "p:%s=%s,", p.ID, p.State)
	}
	for _, c := range h.Report.Combos {
		fmt.Fprintf(&b, "k:%s=%s,", c.Name, c.State)
	}
	return b.String()
}

// events streams state changes as SSE: a "health" event at connect and whenever
// overall health changes (checked after every event and every few seconds, since
// cooldowns expire lazily), and every bus event as it happens.
func (a *API) events(w http.ResponseWriter, r *http.Request) {
	if a.Events == nil {
		httpx.WriteError(w, errs.New(errs.NotFound, "EVENTS_DISABLED", "events are not available"))
		return
	}
	rc := http.NewResponseController(w)
	sub := a.Events.Subscribe(256)
	defer sub.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	var lastHealth string
	sendHealth := func(force bool) bool {
		// The countdown alone changing is not news: compare the signature.
		ev, sig := a.HealthEvent()
		if !force && sig == lastHealth {
			return true
		}
		lastHealth = sig
		b, _ := json.Marshal(ev)
		_, err := fmt.Fprintf(w, "event: health\ndata: %s\n\n", b)
		return err == nil && rc.Flush() == nil
	}
	if !sendHealth(true) {
		return
	}
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	beat := time.NewTicker(15 * time.Second)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-sub.C:
			b, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, b); err != nil {
				return
			}
			if !sendHealth(false) || rc.Flush() != nil {
				return
			}
		case <-tick.C:
			if !sendHealth(false) {
				return
			}
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}
