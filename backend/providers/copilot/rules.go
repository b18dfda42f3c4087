package copilot

import "omniroute/backend/resilience/rules"

// builtinRules are GitHub Copilot's error rules (issue 30): its chat API's
// rate-limit, quota and entitlement answers.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "copilot-quota", Provider: ID,
			Match:  rules.Match{Codes: []string{"quota_exceeded"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "GitHub Copilot quota_exceeded (402/429): the seat's monthly premium requests are used up; the connection cools on the ladder, never terminal (the allowance resets)",
		},
		{
			ID: "copilot-account-rate-limit", Provider: ID,
			Match:  rules.Match{Statuses: []int{429}, TextMarkers: []string{"restricts the number of copilot model requests", "user_global_rate_limited", "weekly rate limit"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeConnection,
			Description: "GitHub Copilot's account-wide rate limit (every model of the seat, for hours): the connection cools, honouring the wait the message names",
		},
		{
			ID: "copilot-model-not-supported", Provider: ID,
			Match:  rules.Match{Codes: []string{"model_not_supported"}},
			Reason: "model_access_denied", Scope: rules.ScopeModel, CooldownMs: 3600 * 1000,
			Description: "GitHub Copilot model_not_supported: the model is not enabled for this seat (plan or organisation policy); only the model leaves routing, for 1 h",
		},
		{
			ID: "copilot-feature-not-entitled", Provider: ID,
			Match:  rules.Match{Statuses: []int{403}, TextMarkers: []string{"not authorized to use this copilot feature", "requires an enterprise or organization policy"}},
			Reason: "model_access_denied", Scope: rules.ScopeModel, CooldownMs: 6 * 3600 * 1000,
			Description: "GitHub Copilot refuses a feature the seat is not entitled to (a policy not enabled): only the model leaves routing, for 6 h",
		},
	}
}
