package codeassist

import "omniroute/backend/resilience/rules"

// builtinRules are Code Assist's error rules (its 429s name the quota,
// capacity or rate limit in an ErrorInfo reason).
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "gemini-cli-quota-exhausted", Provider: "gemini-cli",
			Match:  rules.Match{Statuses: []int{429}, Codes: []string{"QUOTA_EXHAUSTED"}},
			Reason: "quota_exhausted", Scope: rules.ScopeModel,
			Description: "Code Assist's daily quota of one model is used up (ErrorInfo QUOTA_EXHAUSTED): only that model leaves the login, until the reset Google names (RetryInfo or \"reset after\")",
		},
		{
			ID: "gemini-cli-model-capacity", Provider: "gemini-cli",
			Match:  rules.Match{Statuses: []int{429, 503}, Codes: []string{"MODEL_CAPACITY_EXHAUSTED"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeModel, CooldownMs: 60 * 1000,
			Description: "Code Assist has no capacity for this model right now (MODEL_CAPACITY_EXHAUSTED): Google's load, not the account's quota; the model leaves the login for a minute",
		},
		{
			ID: "gemini-cli-rate-limit", Provider: "gemini-cli",
			Match:  rules.Match{Statuses: []int{429}, Codes: []string{"RATE_LIMIT_EXCEEDED"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeModel,
			Description: "Code Assist's per-minute limit of one model (RATE_LIMIT_EXCEEDED): the model leaves the login for the RetryInfo delay (else 5 min)",
		},
	}
}
