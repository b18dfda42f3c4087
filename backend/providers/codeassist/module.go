package codeassist

import (
	"context"
	"encoding/json"
	"strings"

	"omniroute/backend/providers"
	"omniroute/backend/providers/geminiapi"
)

// ID is the catalogue id of the provider this folder serves.
const ID = "gemini-cli"

// Dialect is Google's Code Assist API (the Gemini CLI's backend): the
// Gemini wire inside the {model, project, request} / {response} envelope,
// with an OAuth bearer token and a project found by loadCodeAssist.
const Dialect providers.Dialect = "codeassist"

// cliClientSecret is the Gemini CLI's installed-app OAuth client secret,
// public in the CLI's own source (Google's installed-app flow needs one at
// the token endpoint; it identifies the app, not the user).
const cliClientSecret = "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"

// Module is what the gateway knows of the Gemini CLI's Code Assist backend
// beyond its catalogue row: its executor (which also reads the account's
// quota), a connection's optional project, and that its check sends a
// one-token completion as the CLI itself does.
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, Formats: []providers.Format{providers.FormatGemini},
		Rules: builtinRules(),
		Rows: []providers.Provider{
			// Gemini CLI logins speak Google's Code Assist API (cloudcode-pa
			// v1internal:generateContent), the backend the CLI itself calls: the
			// Gemini request inside {model, project, request}, the project from
			// loadCodeAssist/onboardUser (providerSpecificData.projectId overrides).
			// The client id and secret are the CLI's public installed-app pair.
			{ID: ID, VendorHome: true, Name: "Gemini CLI (Google OAuth, Code Assist)", Category: providers.CategoryOAuth, Format: providers.FormatGemini, Dialect: Dialect,
				Doc: providers.Doc{Auth: "Google OAuth `Authorization: Bearer` (Gemini CLI login)",
					Wire: "Gemini generateContent in Code Assist's envelope (`v1internal:generateContent`, project from `loadCodeAssist` / `onboardUser`)"},
				BaseURL: "https://cloudcode-pa.googleapis.com", APIOf: geminiapi.ID,
				DefaultModels: []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}, NoModelList: true, Tools: true, Vision: true, Reasoning: true,
				HonorsRuleScope: true,
				OAuth: &providers.OAuth{TokenURL: "https://oauth2.googleapis.com/token", ClientID: "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com",
					ClientSecret: cliClientSecret, Form: true, ImportSource: Source,
					Models: []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}}},
		},
		NewExecutor:         func(d providers.ExecDeps) providers.Executor { return New(d.Client, d.UserAgent) },
		CheckedByCompletion: true,
		Data: &providers.DataSchema{Fields: []providers.Field{
			{Name: "projectId", Type: "string", Doc: "Google Cloud project to use instead of the one loadCodeAssist names",
				Label: "Google Cloud project", Summary: "project",
				Placeholder: "empty: the account's own (GOOGLE_CLOUD_PROJECT of the Gemini CLI)"},
		}},
		Connect: connect,
		Import:  credentialImport(),
	}
}

// connect reads a connection's projectId and region (no defaults).
func connect(in providers.ConnInput) (providers.ConnData, error) {
	var d struct {
		ProjectID string `json:"projectId"`
		Region    string `json:"region"`
	}
	_ = json.Unmarshal([]byte(in.Data), &d)
	return providers.ConnData{Parts: providers.Target{Google: providers.Google{Project: strings.TrimSpace(d.ProjectID), Region: strings.TrimSpace(d.Region)}}}, nil
}

// QuotaBuckets implements providers.QuotaReader with Quota's buckets.
func (e *Executor) QuotaBuckets(ctx context.Context, t *providers.Target) ([]providers.QuotaBucket, int, error) {
	bs, status, err := e.Quota(ctx, t)
	out := make([]providers.QuotaBucket, len(bs))
	for i, b := range bs {
		out[i] = providers.QuotaBucket{Model: b.Model, Remaining: b.Remaining, ResetsAt: b.ResetsAt}
	}
	return out, status, err
}
