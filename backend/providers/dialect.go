package providers

import (
	"context"
	"errors"
	"net/http"
)

// ErrNoExecutor is a call to a format's Dialects whose target's dialect has
// no executor and which has no Default. The gateway passes such a target
// over with the stable code FORMAT_NOT_SUPPORTED (no evidence against the
// upstream: no breaker count, cooldown or lock).
var ErrNoExecutor = errors.New("providers: no executor for the target's dialect")

// Dialects sends a call to the executor of its target's dialect (a
// provider module's) and to Default (nil: none) otherwise: the executor of a wire format whose
// providers differ in URLs, auth or framing but not in what the gateway
// translates to.
type Dialects struct {
	Default Executor
	By      map[Dialect]Executor
}

// Do implements Executor.
func (d Dialects) Do(ctx context.Context, t *Target, c Call) (*http.Response, error) {
	if t.Provider.Dialect != "" {
		if e, ok := d.By[t.Provider.Dialect]; ok {
			return e.Do(ctx, t, c)
		}
	}
	if d.Default == nil {
		return nil, ErrNoExecutor
	}
	return d.Default.Do(ctx, t, c)
}
