package codeassist

import (
	"context"
	"encoding/json"
	"strings"

	"omniroute/backend/providers"
)

// Module is what the gateway knows of the Gemini CLI's Code Assist backend
// beyond its catalogue row: its executor (which also reads the account's
// quota), a connection's optional project, and that its check sends a
// one-token completion as the CLI itself does.
func Module() providers.Module {
	return providers.Module{
		ID: "gemini-cli", Dialect: providers.DialectCodeAssist, Formats: []providers.Format{providers.FormatGemini},
		NewExecutor:         func(d providers.ExecDeps) providers.Executor { return New(d.Client, d.UserAgent) },
		CheckedByCompletion: true,
		Data: &providers.DataSchema{Fields: []providers.Field{
			{Name: "projectId", Type: "string", Doc: "Google Cloud project to use instead of the one loadCodeAssist names"},
		}},
		Connect: connect,
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
