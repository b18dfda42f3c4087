// Package dashscope is the provider folder of Alibaba DashScope (Qwen)
// (catalogue id `dashscope`): its catalogue row and its built-in error
// rules.
package dashscope

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is Alibaba DashScope (Qwen)'s catalogue id.
const ID = "dashscope"

// Module is what the gateway knows of Alibaba DashScope (Qwen): its
// catalogue row and its built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Rules: builtinRules()}
}

// row is the catalogue row:
// Alibaba Model Studio's international (Singapore) endpoint.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "Alibaba DashScope (Qwen)", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", Aliases: []string{"qwen", "alibaba"},
		DefaultModels:   []string{"qwen3-max", "qwen-plus", "qwen-flash", "qwen-turbo", "qwen3-coder-plus", "qwen3-coder-flash", "qwen-vl-max"},
		HonorsRuleScope: true, Tools: true, Vision: true, Reasoning: true,
	}
}

// builtinRules are the error rules of Alibaba DashScope (Qwen)'s own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "dashscope-arrearage", Provider: ID,
			Match:  rules.Match{Codes: []string{"Arrearage"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "DashScope 400 Arrearage: the Alibaba Cloud account is overdue; the connection cools until it is paid",
		},
		{
			ID: "dashscope-throttling", Provider: ID,
			Match:  rules.Match{Codes: []string{"Throttling", "Throttling.RateQuota", "Throttling.User", "Throttling.AllocationQuota", "Throttling.BurstRate"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeModel, CooldownMs: 60 * 1000,
			Description: "DashScope Throttling.* codes are per-model rate limits (RPM/TPM), not a used-up quota: the model leaves routing for a minute",
		},
		{
			ID: "dashscope-free-tier-exhausted", Provider: ID,
			Match:  rules.Match{Codes: []string{"AllocationQuota.FreeTierOnly"}},
			Reason: "quota_exhausted", Scope: rules.ScopeModel, CooldownMs: 24 * 3600 * 1000,
			Description: "DashScope free-tier-only mode and this model's free quota used up: only the model leaves routing, for 24 h",
		},
	}
}
