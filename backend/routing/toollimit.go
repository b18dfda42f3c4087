package routing

import "sync"

// toolLimits remembers, per connection and model, the most tools an upstream
// accepted in one request, learnt from its "too many tools" refusals
// (dynamic tool-count-limit detection). Memory only: a restart relearns.
type toolLimits struct {
	mu sync.Mutex
	m  map[string]int
}

// RecordToolLimit notes that this connection/model takes at most limit tools;
// a lower limit learnt later wins, a higher one never raises it.
func (e *Engine) RecordToolLimit(connectionID, model string, limit int) {
	if limit < 0 {
		limit = 0
	}
	k := connectionID + "|" + model
	e.tools.mu.Lock()
	defer e.tools.mu.Unlock()
	if e.tools.m == nil {
		e.tools.m = map[string]int{}
	}
	if old, ok := e.tools.m[k]; !ok || limit < old {
		e.tools.m[k] = limit
	}
}

// ToolLimit returns the remembered tool limit of a connection/model.
func (e *Engine) ToolLimit(connectionID, model string) (int, bool) {
	e.tools.mu.Lock()
	defer e.tools.mu.Unlock()
	var buf [128]byte
	k := append(append(append(buf[:0], connectionID...), '|'), model...)
	n, ok := e.tools.m[string(k)] // no allocation for a map index, unlike a concatenation
	return n, ok
}
