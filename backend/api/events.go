package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// HealthEvent is the payload of "health" events (the desktop window relays it too).
func (a *API) HealthEvent() map[string]any { return a.healthEvent() }

// healthEvent is the payload of "health" events.
func (a *API) healthEvent() map[string]any {
	h := a.ComputeHealth()
	return map[string]any{"status": h.Status, "circuitBreakers": h.CircuitBreakers,
		"connectionHealth": map[string]any{"coolingDown": h.CoolingDown, "terminal": h.Terminal, "total": h.Total,
			"soonestRetryAfterMs": h.SoonestRetryMs}}
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
		ev := a.healthEvent()
		b, _ := json.Marshal(ev)
		// The countdown alone changing is not news: compare without it.
		sig, _ := json.Marshal(map[string]any{"status": ev["status"], "circuitBreakers": ev["circuitBreakers"],
			"coolingDown": ev["connectionHealth"].(map[string]any)["coolingDown"]})
		if !force && string(sig) == lastHealth {
			return true
		}
		lastHealth = string(sig)
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
