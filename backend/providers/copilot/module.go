// Package copilot is GitHub Copilot: its catalogue row (OpenAI Chat
// Completions at the endpoint its token exchange names, with the editor
// headers its chat API requires), GitHub's device sign-in, the exchange of
// the stored GitHub token for the short-lived Copilot token, and its
// built-in error rules.
package copilot

import "omniroute/backend/providers"

// ID is the catalogue id; Source is the login source its connections are
// found by (OAuth.ImportSource).
const (
	ID     = "github-copilot"
	Source = "github-copilot"
)

// The editor identity GitHub Copilot's APIs expect (its chat API refuses a
// request without Editor-Version and Copilot-Integration-Id).
const (
	EditorVersion = "vscode/1.99.3"
	PluginVersion = "copilot-chat/0.26.7"
	UserAgent     = "GitHubCopilotChat/0.26.7"
	APIVersion    = "2025-04-01"
)

// Dialect is GitHub Copilot's chat API: OpenAI Chat Completions at the
// endpoint the Copilot token exchange names (endpoints.api), with a
// short-lived Copilot token as the bearer and the editor headers Copilot
// requires (Provider.ExtraHeaders). Its executor is the OpenAI executor,
// the answers' reasoning_text and reasoning_opaque read into the gateway's
// Chat pivot (reasoning.go).
const Dialect providers.Dialect = "copilot"

// Module is what the gateway knows of GitHub Copilot: its row, GitHub's
// device sign-in (`omniroute login copilot`, the dashboard's login panel),
// the token exchange that stands for a refresh, and its error rules.
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, NewExecutor: NewExecutor, Formats: []providers.Format{providers.FormatOpenAI},
		Rows:  []providers.Provider{row()},
		Rules: builtinRules(),
		Words: codeWords(),
		Login: &providers.LoginFlow{Command: "copilot", Site: "GitHub",
			Hint:  "Uses your GitHub Copilot seat. GitHub shows a page where you enter a one-time code; OmniRoute keeps the login (encrypted) and renews Copilot’s short-lived token itself.",
			Start: StartDevice, Poll: PollDevice, Finish: Finish},
		Refresh: Refresh,
	}
}

// row is the catalogue row. A device login stores the GitHub token; the
// Copilot token exchange gives the short-lived chat token and its endpoint
// (individual, business or enterprise), which becomes the connection's base
// URL. The client id is the public one of GitHub's Copilot editor
// integrations; the editor headers are the ones Copilot's chat API refuses
// requests without.
func row() providers.Provider {
	return providers.Provider{ID: ID, Name: "GitHub Copilot", Category: providers.CategoryOAuth, Format: providers.FormatOpenAI, Dialect: Dialect,
		Aliases: []string{"copilot", "gh-copilot"},
		Doc: providers.Doc{Auth: "GitHub device login; short-lived Copilot token (`Authorization: Bearer`) + editor headers",
			Wire: "OpenAI Chat Completions at the Copilot token's endpoint; reasoning read from and given back as `reasoning_text` and `reasoning_opaque`"},
		ImageHeader:   [2]string{"Copilot-Vision-Request", "true"}, // it refuses image input unless the request says it carries some
		BaseURL:       "https://api.githubcopilot.com",
		DefaultModels: []string{"gpt-4.1", "gpt-4o", "gpt-5-mini", "gpt-5", "claude-sonnet-4", "claude-sonnet-4.5", "gemini-2.5-pro", "o4-mini"},
		ExtraHeaders: map[string]string{"Editor-Version": EditorVersion, "Editor-Plugin-Version": PluginVersion,
			"Copilot-Integration-Id": "vscode-chat", "User-Agent": UserAgent, "Openai-Intent": "conversation-panel",
			"X-Github-Api-Version": APIVersion},
		HonorsRuleScope: true, RuleFullText: true, Tools: true, Vision: true, Reasoning: true, SignedReplay: Replay,
		OAuth: &providers.OAuth{ImportSource: Source, TokenURL: "https://api.github.com/copilot_internal/v2/token", ClientID: "Iv1.b507a08c87ecfe98", Scope: "read:user",
			DeviceCodeURL: "https://github.com/login/device/code", AccessTokenURL: "https://github.com/login/oauth/access_token",
			UserURL: "https://api.github.com/user"}}
}

// codeWords are the sentences of the codes only the Copilot sign-in emits.
func codeWords() map[string]string {
	return map[string]string{
		"COPILOT_NOT_ENTITLED":      "The GitHub account signed in, but it has no GitHub Copilot access.",
		"COPILOT_TOKEN_FAILED":      "GitHub did not hand out a Copilot token for this account.",
		"GITHUB_BAD_ANSWER":         "GitHub's login service gave an answer that could not be read.",
		"GITHUB_DEVICE_CODE_FAILED": "GitHub refused to start the login.",
		"GITHUB_UNREACHABLE":        "GitHub's login service could not be reached.",
		"GITHUB_URL_INVALID":        "The GitHub login address is not valid.",
	}
}
