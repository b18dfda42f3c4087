// Package rules is the two data-driven stages that run on an upstream error
// before the Verdict is final (guide §7):
//
//  1. Restatement corrects a lying status: a provider that reports a temporary
//     quota exhaustion as 403 or 400 (agentrouter's "额度不足") is restated to
//     429, and the client is told a Retry-After, so agents retry instead of
//     aborting. Exclude markers veto a restatement (agentrouter's "无权访问模型"
//     is permanent and is never restated).
//  2. Provider error rules turn the (corrected) error into a Verdict with a
//     reason and a blame scope (model, connection or provider) and an optional
//     cooldown.
//
// Both stages are plain data: the built-in tables below and the operator's
// rules from settings.providerErrorRules. A rule's text markers see the full
// error text only for providers whose catalogue entry asks for it (or that
// have an operator rule); other providers' rules see the structured error
// (code and type). A rule's scope is honoured only for providers whose
// catalogue entry says so, or when the operator declared the rule: declaring
// it is the operator's explicit opt-in.
package rules

import (
	"fmt"
	"slices"
	"strings"
)

// Restatement corrects an upstream status before classification.
type Restatement struct {
	ID           string `json:"id"`
	Provider     string `json:"provider"`
	FromStatuses []int  `json:"fromStatuses"`
	ToStatus     int    `json:"toStatus"`
	// TextMarkers: at least one must appear in the error text (case-insensitive).
	TextMarkers []string `json:"textMarkers"`
	// ExcludeMarkers veto the restatement when any appears.
	ExcludeMarkers []string `json:"excludeMarkers,omitempty"`
	// DefaultRetryAfterMs is the Retry-After the client is told when the
	// upstream gave none; it is not the connection's cooldown.
	DefaultRetryAfterMs int64 `json:"defaultRetryAfterMs,omitempty"`
}

// Match is what a provider error rule looks for. Every non-empty criterion
// must hold; at least one must be given.
type Match struct {
	// Statuses the (restated) HTTP status must be one of.
	Statuses []int `json:"statuses,omitempty"`
	// Codes the provider's error code (error.code, code, error.type, type)
	// must equal one of (case-insensitive).
	Codes []string `json:"codes,omitempty"`
	// TextMarkers: at least one must appear in the matched text.
	TextMarkers []string `json:"textMarkers,omitempty"`
	// ExcludeMarkers veto the rule when any appears.
	ExcludeMarkers []string `json:"excludeMarkers,omitempty"`
}

// Rule classifies a provider error.
type Rule struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Match    Match  `json:"match"`
	// Reason is one of Reasons: it decides the verdict's kind.
	Reason string `json:"reason"`
	// Scope is "model", "connection" or "provider".
	Scope string `json:"scope"`
	// CooldownMs is the rule's own cooldown (model lock or connection
	// cooldown); 0 lets the ordinary ladder decide (model scope: the
	// upstream's retry hint when it gives one, else 5 min).
	CooldownMs int64 `json:"cooldownMs,omitempty"`
	// Description says what the rule is for (shown on the Rules page).
	Description string `json:"description,omitempty"`
}

// AnyProvider as a built-in rule's provider matches every provider; such
// rules see the full error text (they only ever fail over, never cool).
const AnyProvider = "*"

// Scopes a rule may declare.
const (
	ScopeModel      = "model"
	ScopeConnection = "connection"
	ScopeProvider   = "provider"
)

// Reasons a rule may give, each naming the verdict kind it produces. The
// concurrency reason is spelled as the guide's fallback reason
// (concurrency_limited, §2); ReasonConcurrencyLimitOld, the spelling of
// earlier versions, is still accepted so saved rule lists keep loading.
var Reasons = []string{
	"quota_exhausted", "rate_limit_exceeded", ReasonConcurrencyLimited, "auth_error",
	"model_access_denied", "server_error", "not_found", "bad_request", "tool_count_limit",
}

// The concurrency-limit reason, in the guide's spelling and the earlier one.
const (
	ReasonConcurrencyLimited  = "concurrency_limited"
	ReasonConcurrencyLimitOld = "concurrency_limit"
)

// knownReason reports whether r is a reason a rule may give.
func knownReason(r string) bool { return slices.Contains(Reasons, r) || r == ReasonConcurrencyLimitOld }

// Limits that keep an operator's rule list small enough to run per error.
const (
	MaxOperatorRules  = 200
	maxMarkers        = 32
	maxMarkerLen      = 200
	maxIDLen          = 80
	maxRuleCooldownMs = 7 * 24 * 3600 * 1000
)

// defaultModelLockMs is the model lock of a scope "model" rule without its own cooldown.
const defaultModelLockMs = 5 * 60 * 1000

// FieldError names the invalid field of an operator rule list.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Validate checks an operator rule list: ids unique and non-empty, a known
// provider id shape, a known reason and scope, at least one match criterion,
// statuses in 100..599, bounded markers and cooldown.
func Validate(list []Rule) error {
	if len(list) > MaxOperatorRules {
		return &FieldError{"providerErrorRules", fmt.Sprintf("at most %d rules", MaxOperatorRules)}
	}
	seen := map[string]bool{}
	for i, r := range list {
		f := func(name string) string { return fmt.Sprintf("providerErrorRules[%d].%s", i, name) }
		id := strings.TrimSpace(r.ID)
		switch {
		case id == "" || len(id) > maxIDLen:
			return &FieldError{f("id"), fmt.Sprintf("is required (1-%d characters)", maxIDLen)}
		case seen[strings.ToLower(id)]:
			return &FieldError{f("id"), fmt.Sprintf("%q is used twice", id)}
		case strings.TrimSpace(r.Provider) == "" || len(r.Provider) > maxIDLen:
			return &FieldError{f("provider"), "is required (a provider id such as agentrouter)"}
		case !knownReason(r.Reason):
			return &FieldError{f("reason"), "must be one of " + strings.Join(Reasons, ", ")}
		case r.Scope != ScopeModel && r.Scope != ScopeConnection && r.Scope != ScopeProvider:
			return &FieldError{f("scope"), "must be model, connection or provider"}
		case r.CooldownMs < 0 || r.CooldownMs > maxRuleCooldownMs:
			return &FieldError{f("cooldownMs"), "must be between 0 and 604800000 (7 days)"}
		case len(r.Match.Statuses) == 0 && len(r.Match.Codes) == 0 && len(r.Match.TextMarkers) == 0:
			return &FieldError{f("match"), "needs at least one of statuses, codes or textMarkers"}
		}
		seen[strings.ToLower(id)] = true
		for _, s := range r.Match.Statuses {
			if s < 100 || s > 599 {
				return &FieldError{f("match.statuses"), "must be HTTP statuses (100-599)"}
			}
		}
		for name, ms := range map[string][]string{"match.codes": r.Match.Codes, "match.textMarkers": r.Match.TextMarkers,
			"match.excludeMarkers": r.Match.ExcludeMarkers} {
			if len(ms) > maxMarkers {
				return &FieldError{f(name), fmt.Sprintf("at most %d entries", maxMarkers)}
			}
			for _, m := range ms {
				if strings.TrimSpace(m) == "" || len(m) > maxMarkerLen {
					return &FieldError{f(name), fmt.Sprintf("entries must be 1-%d characters", maxMarkerLen)}
				}
			}
		}
	}
	return nil
}

// anyMarker reports whether text (lower case) contains any marker.
func anyMarker(text string, markers []string) bool {
	for _, m := range markers {
		if m != "" && strings.Contains(text, strings.ToLower(m)) {
			return true
		}
	}
	return false
}
