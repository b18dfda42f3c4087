// Package anthropic is the executor for Anthropic Messages upstreams (API keys
// and OAuth bearer tokens).
package anthropic

import (
	"context"
	"net/http"

	"omniroute/backend/providers"
)

// Version is the anthropic-version header sent upstream.
const Version = "2023-06-01"

// Executor posts Anthropic Messages requests over a shared pooled client.
type Executor struct {
	client    *http.Client
	userAgent string
}

// New returns an executor using client.
func New(client *http.Client, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent}
}

// Do posts the call to <base>/messages with an API key or an OAuth bearer token.
func (e *Executor) Do(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	req, err := providers.NewJSONRequest(ctx, t, c, "/messages", e.userAgent)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("anthropic-version", Version)
	if t.Secret != "" {
		if t.AuthType == "oauth" {
			h.Set("Authorization", "Bearer "+t.Secret)
			h.Set("anthropic-beta", "oauth-2025-04-20")
		} else {
			h.Set("x-api-key", t.Secret)
		}
	}
	return e.client.Do(req)
}
