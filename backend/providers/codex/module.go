package codex

import (
	"omniroute/backend/providers"
	"omniroute/backend/providers/openaiapi"
)

// ID is the catalogue id of the ChatGPT Codex subscription; Source is the
// `omniroute import` source reading the Codex CLI's login (named after the CLI).
const (
	ID     = "codex"
	Source = "codex"
)

// Dialect is the ChatGPT Codex backend: the Responses API with the Codex
// CLI's contract (always streamed, nothing stored), which Executor enforces.
const Dialect providers.Dialect = "codex"

// Module is what the gateway knows of the Codex subscription: its row (the
// OAuth refresh of the Codex CLI's login) and the executor.
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, Formats: []providers.Format{providers.FormatResponses},
		Rows:        []providers.Provider{row()},
		NewExecutor: func(d providers.ExecDeps) providers.Executor { return New(d.Client, d.UserAgent) },
		Import:      credentialImport(),
	}
}

// row is the catalogue row: a ChatGPT login imported from the Codex CLI,
// priced as the OpenAI API it stands in for.
func row() providers.Provider {
	return providers.Provider{ID: ID, VendorHome: true, Name: "OpenAI Codex (ChatGPT OAuth)", Category: providers.CategoryOAuth, Format: providers.FormatResponses, Dialect: Dialect,
		BaseURL: "https://chatgpt.com/backend-api/codex", Aliases: []string{"cx"}, APIOf: openaiapi.ID,
		DefaultModels: []string{"gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5.1-codex-mini", "gpt-5.2-codex", "gpt-5.2", "gpt-5.1", "gpt-5"},
		Tools:         true, Vision: true, Reasoning: true,
		// One quota for every gpt-5*: a 429 on gpt-5.1-codex locks gpt-5 and
		// gpt-5-codex-mini of the connection too.
		QuotaFamily: providers.PrefixFamily("gpt-5"),
		OAuth: &providers.OAuth{TokenURL: "https://auth.openai.com/oauth/token", ClientID: "app_EMoamEEZ73f0CkXaXp7hrann", Scope: "openid profile email", ImportSource: Source,
			Models: []string{"gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5.1-codex-mini", "gpt-5", "gpt-5.1"}}}
}
