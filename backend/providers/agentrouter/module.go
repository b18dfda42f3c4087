// Package agentrouter is the provider folder of AgentRouter (catalogue id
// `agentrouter`): its catalogue row, its status restatements and its built-
// in error rules.
package agentrouter

import (
	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
)

// ID is AgentRouter's catalogue id.
const ID = "agentrouter"

// Module is what the gateway knows of AgentRouter: its catalogue row, its
// status restatements and its built-in error rules.
func Module() providers.Module {
	return providers.Module{ID: ID, Rows: []providers.Provider{row()}, Restatements: restatements(), Rules: builtinRules()}
}

// row is the catalogue row.
func row() providers.Provider {
	return providers.Provider{
		ID: ID, Name: "AgentRouter", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI,
		BaseURL: "https://agentrouter.org/v1", RuleFullText: true, HonorsRuleScope: true, Tools: true, Reasoning: true,
	}
}

// restatements are the status corrections of AgentRouter's errors.
func restatements() []rules.Restatement {
	return []rules.Restatement{
		{
			ID: "agentrouter-quota-as-403", Provider: ID,
			FromStatuses: []int{400, 403}, ToStatus: 429,
			TextMarkers:         []string{"用户额度不足", "额度不足"},
			ExcludeMarkers:      []string{"无权访问模型"},
			DefaultRetryAfterMs: 60_000,
		},
	}
}

// builtinRules are the error rules of AgentRouter's own codes and wording.
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "agentrouter-model-access-denied", Provider: ID,
			Match:  rules.Match{Statuses: []int{400, 401, 403}, TextMarkers: []string{"无权访问模型"}},
			Reason: "model_access_denied", Scope: rules.ScopeModel, CooldownMs: 6 * 3600 * 1000,
			Description: "no access to this model on this account: only the model leaves routing, for 6 h",
		},
		{
			ID: "agentrouter-user-quota-exhausted", Provider: ID,
			Match:  rules.Match{Statuses: []int{429}, TextMarkers: []string{"用户额度不足", "额度不足"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "account quota used up (restated from 403): the connection cools on the ladder, never terminal",
		},
	}
}
