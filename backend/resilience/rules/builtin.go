package rules

// BuiltinRestatements are the shipped status corrections. Keep markers
// provider-specific: generic English phrases would collide with the
// classifier's own credit and quota wording.
func BuiltinRestatements() []Restatement {
	return []Restatement{
		{
			ID: "agentrouter-quota-as-403", Provider: "agentrouter",
			FromStatuses: []int{400, 403}, ToStatus: 429,
			TextMarkers:         []string{"用户额度不足", "额度不足"},
			ExcludeMarkers:      []string{"无权访问模型"},
			DefaultRetryAfterMs: 60_000,
		},
	}
}

// Builtin is the shipped provider error rules with the provider modules'
// own (their Module.Rules, which the wiring place hands to New) placed
// before the rules of every provider, so those still come last.
func Builtin(modules ...Rule) []Rule {
	var own, every []Rule
	for _, r := range BuiltinRules() {
		if r.Provider == AnyProvider {
			every = append(every, r)
		} else {
			own = append(own, r)
		}
	}
	return append(append(own, modules...), every...)
}

// BuiltinRules are the shipped error rules of the providers without a
// module of their own, and the rules of every provider.
func BuiltinRules() []Rule {
	return []Rule{
		{
			ID: "agentrouter-model-access-denied", Provider: "agentrouter",
			Match:  Match{Statuses: []int{400, 401, 403}, TextMarkers: []string{"无权访问模型"}},
			Reason: "model_access_denied", Scope: ScopeModel, CooldownMs: 6 * 3600 * 1000,
			Description: "no access to this model on this account: only the model leaves routing, for 6 h",
		},
		{
			ID: "agentrouter-user-quota-exhausted", Provider: "agentrouter",
			Match:  Match{Statuses: []int{429}, TextMarkers: []string{"用户额度不足", "额度不足"}},
			Reason: "quota_exhausted", Scope: ScopeConnection,
			Description: "account quota used up (restated from 403): the connection cools on the ladder, never terminal",
		},
		{
			ID: "opencode-subscription-quota", Provider: "opencode",
			Match:  Match{Statuses: []int{429}, TextMarkers: []string{"monthly usage limit", "usage limit reached", "free usage"}},
			Reason: "quota_exhausted", Scope: ScopeConnection, CooldownMs: 3600 * 1000,
			Description: "free tier is bucketed per egress IP: a quota 429 cools the IP's connections for 1 h",
		},
		{
			ID: "opencode-rate-limit", Provider: "opencode",
			Match:  Match{Statuses: []int{429}},
			Reason: "rate_limit_exceeded", Scope: ScopeConnection,
			Description: "free tier is bucketed per egress IP: a plain 429 is the same signal as a quota",
		},
		{
			ID: "minimax-rate-limit", Provider: "minimax",
			Match:  Match{Codes: []string{"1002", "1039"}},
			Reason: "rate_limit_exceeded", Scope: ScopeConnection,
			Description: "MiniMax business codes 1002/1039 are rate limits whatever the HTTP status",
		},
		{
			ID: "glm-quota-package", Provider: "glm",
			Match:  Match{Codes: []string{"1113", "1308", "1310"}},
			Reason: "quota_exhausted", Scope: ScopeConnection,
			Description: "GLM 1113/1308/1310: the resource package or usage window is used up",
		},
		{
			ID: "glm-model-not-found", Provider: "glm",
			Match:  Match{Codes: []string{"1211"}},
			Reason: "not_found", Scope: ScopeModel, CooldownMs: 3600 * 1000,
			Description: "GLM 1211: the model does not exist for this account; only the model leaves routing, for 1 h",
		},
		{
			ID: "glm-model-no-access", Provider: "glm",
			Match:  Match{Codes: []string{"1220"}},
			Reason: "model_access_denied", Scope: ScopeModel, CooldownMs: 3600 * 1000,
			Description: "GLM 1220: no permission for this model; only the model leaves routing, for 1 h",
		},
		{
			ID: "xai-credits", Provider: "xai",
			Match:  Match{Statuses: []int{403, 429}, TextMarkers: []string{"any credits", "used all available credits", "spending limit"}},
			Reason: "quota_exhausted", Scope: ScopeConnection,
			Description: "xAI team without credits or at its monthly spending limit (403/429 with a gRPC status text as code): the connection cools on the ladder, never terminal",
		},
		{
			ID: "cerebras-per-minute", Provider: "cerebras",
			Match:  Match{Statuses: []int{429}, Codes: []string{"token_quota_exceeded", "request_quota_exceeded"}, TextMarkers: []string{"per minute", "per hour"}},
			Reason: "rate_limit_exceeded", Scope: ScopeModel,
			Description: "Cerebras names its per-minute and per-hour limits token_quota_exceeded: a rate limit, not a used-up quota",
		},
		{
			ID: "cerebras-per-day", Provider: "cerebras",
			Match:  Match{Statuses: []int{429}, Codes: []string{"token_quota_exceeded", "request_quota_exceeded"}, TextMarkers: []string{"per day"}},
			Reason: "quota_exhausted", Scope: ScopeConnection,
			Description: "Cerebras daily token or request quota: the connection cools on the ladder",
		},
		{
			ID: "moonshot-engine-overloaded", Provider: "moonshot",
			Match:  Match{Codes: []string{"engine_overloaded_error"}},
			Reason: "server_error", Scope: ScopeProvider,
			Description: "Moonshot's 429 engine_overloaded_error is its capacity, not the account's limit: evidence for the provider breaker, the key is not cooled",
		},
		{
			ID: "fireworks-account-suspended", Provider: "fireworks",
			Match:  Match{Statuses: []int{412}},
			Reason: "quota_exhausted", Scope: ScopeConnection,
			Description: "Fireworks answers 412 when the account is suspended (monthly spending limit, unpaid invoice): fail over and cool the connection instead of passing the 412 on",
		},
		{
			ID: "dashscope-arrearage", Provider: "dashscope",
			Match:  Match{Codes: []string{"Arrearage"}},
			Reason: "quota_exhausted", Scope: ScopeConnection,
			Description: "DashScope 400 Arrearage: the Alibaba Cloud account is overdue; the connection cools until it is paid",
		},
		{
			ID: "dashscope-throttling", Provider: "dashscope",
			Match:  Match{Codes: []string{"Throttling", "Throttling.RateQuota", "Throttling.User", "Throttling.AllocationQuota", "Throttling.BurstRate"}},
			Reason: "rate_limit_exceeded", Scope: ScopeModel, CooldownMs: 60 * 1000,
			Description: "DashScope Throttling.* codes are per-model rate limits (RPM/TPM), not a used-up quota: the model leaves routing for a minute",
		},
		{
			ID: "dashscope-free-tier-exhausted", Provider: "dashscope",
			Match:  Match{Codes: []string{"AllocationQuota.FreeTierOnly"}},
			Reason: "quota_exhausted", Scope: ScopeModel, CooldownMs: 24 * 3600 * 1000,
			Description: "DashScope free-tier-only mode and this model's free quota used up: only the model leaves routing, for 24 h",
		},
		{
			ID: "perplexity-invalid-model", Provider: "perplexity",
			Match:  Match{Statuses: []int{400}, Codes: []string{"invalid_model"}},
			Reason: "not_found", Scope: ScopeModel,
			Description: "Perplexity answers an unknown model with 400 invalid_model: a missing model, so the request fails over",
		},
		{
			ID: "tool-count-limit", Provider: AnyProvider,
			Match: Match{Statuses: []int{400, 413, 422}, TextMarkers: []string{
				"too many tools", "maximum number of tools", "tools: list should have at most",
				"'tools': array too long", "tools array too long", "number of tools", "工具数量"}},
			Reason: "tool_count_limit", Scope: ScopeModel,
			Description: "the target takes fewer tools than the request carries: it fails over, and its limit is remembered per connection and model so later requests with as many tools go elsewhere",
		},
	}
}
