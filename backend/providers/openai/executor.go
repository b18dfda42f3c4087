// Package openai is the executor for OpenAI-compatible upstreams.
package openai

import (
	"context"
	"net/http"

	"omniroute/backend/providers"
)

// Executor sends OpenAI Chat Completions requests over a shared pooled client.
type Executor struct {
	client    *http.Client
	userAgent string
}

// New returns an executor using client (its Transport pools keep-alive
// connections per upstream host).
func New(client *http.Client, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent}
}

// Do posts the call to <base>/chat/completions with bearer auth.
func (e *Executor) Do(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	req, err := providers.NewJSONRequest(ctx, t, c, "/chat/completions", e.userAgent)
	if err != nil {
		return nil, err
	}
	if t.Secret != "" {
		req.Header.Set("Authorization", "Bearer "+t.Secret)
	}
	return e.client.Do(req)
}
