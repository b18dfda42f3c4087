package connprobe

import (
	"context"
	"encoding/json"
	"time"

	"omniroute/backend/store"
)

// saveCheckTimeout bounds the check a create or an edit runs (discovery and
// the one-token completion together), so saving never hangs on an upstream.
const saveCheckTimeout = 10 * time.Second

// Plan is what a save of a connection asks of its upstream.
type Plan struct {
	// Check runs the credential check (Run); Keep stores the model list it
	// reads (false: the user listed the models by hand and asked for no
	// discovery, the list stays the user's).
	Check, Keep bool
	// Discover, without a check, refreshes the model list alone.
	Discover bool
}

// OnCreate is a create's plan. The credentials, the address and the base
// URL are checked when they are entered (listed models or not: a rejected
// key, a URL answering 404 or a closed port is never added as a green
// connection) unless verify is false; a connection created without a
// model list asks its upstream what it serves (discover nil), so its models
// route and show in /v1/models right away.
func OnCreate(verify, discover *bool, listed bool) Plan {
	asks := (discover == nil && !listed) || (discover != nil && *discover)
	if verify == nil || *verify {
		return Plan{Check: true, Keep: asks || verify != nil}
	}
	return Plan{Discover: asks}
}

// OnEdit is an edit's plan: checked when verify says so, else when the edit
// changed what the check judges (the base URL, the key or token, or the
// hand-listed models); the list read is kept unless models are listed by
// hand and verify was not asked.
func OnEdit(verify *bool, before, after store.Connection) Plan {
	changed := before.BaseURL != after.BaseURL || before.APIKeyEnc != after.APIKeyEnc ||
		before.AccessTokenEnc != after.AccessTokenEnc || before.Models != after.Models
	if (verify == nil && changed) || (verify != nil && *verify) {
		var listed []string
		_ = json.Unmarshal([]byte(after.Models), &listed)
		return Plan{Check: true, Keep: verify != nil || len(listed) == 0}
	}
	return Plan{}
}

// RunOnSave is Run within saveCheckTimeout for a create or an edit (ok
// false: the connection could not be checked, e.g. it is gone).
func (p *Prober) RunOnSave(ctx context.Context, id string, keep bool) (ch Check, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, saveCheckTimeout)
	defer cancel()
	ch, _, err := p.Run(ctx, id, keep)
	return ch, err == nil
}
