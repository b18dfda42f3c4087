package leases

import (
	"slices"
	"strings"
	"time"
)

// Lifecycle actions of POST /api/v1/session-leases.
const (
	ActionAcquire = "acquire"
	ActionRenew   = "renew"
	ActionStatus  = "status"
	ActionRelease = "release"
)

// MaxModelLen bounds the model name of an acquire.
const MaxModelLen = 512

// Input is a lifecycle body as decoded (nil: the field is absent).
type Input struct {
	Action     *string `json:"action"`
	Model      *string `json:"model"`
	Generation *int64  `json:"generation"`
	Reason     *string `json:"reason"`
	TTLMs      *int64  `json:"ttlMs"`
}

// Request is a validated lifecycle action.
type Request struct {
	Action     string
	Model      string // "" for an acquire without a model
	Generation int64
	Reason     string
	TTL        time.Duration // 0: the default lifetime
}

// actionFields are the optional fields each action accepts.
func actionFields(action string) ([]string, bool) {
	switch action {
	case ActionAcquire:
		return []string{"model", "ttlMs"}, true
	case ActionRenew:
		return []string{"generation", "ttlMs"}, true
	case ActionStatus:
		return []string{"generation"}, true
	case ActionRelease:
		return []string{"generation", "reason"}, true
	}
	return nil, false
}

// ParseRequest validates a decoded lifecycle body: a known action, only the
// fields it takes, a positive generation for all but acquire, a model of 1
// to MaxModelLen characters when an acquire names one, a positive ttlMs
// (clamped by TTLFromMs) and a known release reason. Errors are
// LEASE_ACTION_INVALID, or LEASE_MODEL_INVALID for the model.
func ParseRequest(in Input) (Request, error) {
	bad := ErrActionInvalid.WithMessage
	if in.Action == nil {
		return Request{}, bad(`field "action" is required: acquire, renew, status or release`)
	}
	out := Request{Action: *in.Action}
	allowed, ok := actionFields(out.Action)
	if !ok {
		action := out.Action
		if len(action) > 40 {
			action = action[:40]
		}
		return Request{}, bad("unknown action %q: use acquire, renew, status or release", action)
	}
	present := map[string]bool{"model": in.Model != nil, "generation": in.Generation != nil, "reason": in.Reason != nil,
		"ttlMs": in.TTLMs != nil}
	for _, f := range []string{"model", "generation", "reason", "ttlMs"} {
		if present[f] && !slices.Contains(allowed, f) {
			return Request{}, bad("field %q does not belong to action %q", f, out.Action)
		}
	}
	if out.Action == ActionAcquire {
		// No model is allowed: the lease holds a connection, not a model
		// (guide §2); the key then needs exactly one (EligibleWithoutModel).
		if in.Model != nil {
			out.Model = strings.TrimSpace(*in.Model)
			if out.Model == "" || len(out.Model) > MaxModelLen {
				return Request{}, ErrModelInvalid.WithMessage("the model must be 1 to %d characters", MaxModelLen)
			}
		}
	} else {
		if in.Generation == nil || *in.Generation < 1 {
			return Request{}, bad("action %q needs \"generation\": a positive integer", out.Action)
		}
		out.Generation = *in.Generation
	}
	if in.TTLMs != nil {
		if *in.TTLMs < 1 {
			return Request{}, bad(`"ttlMs" must be a positive integer (clamped to 1000–1800000)`)
		}
		out.TTL = TTLFromMs(*in.TTLMs)
	}
	if in.Reason != nil {
		switch *in.Reason {
		case ReasonOwnerExit, ReasonClientCancelled:
			out.Reason = *in.Reason
		default:
			return Request{}, bad(`"reason" must be OWNER_EXIT or CLIENT_CANCELLED`)
		}
	}
	return out, nil
}

// Admit checks that a client key may use leases at all: it carries the
// Scope (else LEASE_SCOPE_REQUIRED), allows at least one connection (else
// LEASE_KEY_CONFIGURATION_INVALID), and the owner token is valid (else
// LEASE_CONTEXT_INVALID), in that order.
func Admit(scopes, allowedConnections []string, owner string) error {
	if !slices.Contains(scopes, Scope) {
		return ErrScopeRequired
	}
	if len(allowedConnections) == 0 {
		return ErrKeyConfigurationInvalid
	}
	if !ValidOwner(owner) {
		return ErrContextInvalid
	}
	return nil
}

// Eligible lists, in routing order, the connections of cands (those that
// serve the acquire's model) the key allows and that are not excluded right
// now (cooldown, breaker, lockout), each once. excluded is asked only of an
// allowed connection not listed yet.
func Eligible[C any](allowed []string, cands []C, id func(C) string, excluded func(C) bool) []string {
	var out []string
	for _, c := range cands {
		cid := id(c)
		if !slices.Contains(allowed, cid) || slices.Contains(out, cid) {
			continue
		}
		if excluded(c) {
			continue
		}
		out = append(out, cid)
	}
	return out
}

// EligibleWithoutModel is Eligible for an acquire without a model (guide
// §2: a lease holds a connection, not a model), which names no model to
// choose among connections by, so the key must allow exactly one: that
// connection when available says it exists, is active and is not excluded
// right now; none otherwise (Acquire then answers
// LEASE_NO_ELIGIBLE_CONNECTION). A key allowing several connections is
// LEASE_ACTION_INVALID: "model" is needed.
func EligibleWithoutModel(allowed []string, available func(id string) bool) ([]string, error) {
	distinct := make([]string, 0, len(allowed))
	for _, id := range allowed {
		if !slices.Contains(distinct, id) {
			distinct = append(distinct, id)
		}
	}
	if len(distinct) != 1 {
		return nil, ErrActionInvalid.WithMessage(
			`action "acquire" needs "model" when the key allows more than one connection (it allows %d)`, len(distinct))
	}
	if !available(distinct[0]) {
		return nil, nil
	}
	return distinct[0:1], nil
}
