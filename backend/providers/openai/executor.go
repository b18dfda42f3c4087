// Package openai is the executor for OpenAI-compatible upstreams.
package openai

import (
	"context"
	"net/http"

	"omniroute/backend/providers"
)

// Executor sends OpenAI Chat Completions requests over a shared pooled client.
type Executor struct {
	client    providers.Doer
	userAgent string
	reqs      providers.Requests
}

// New returns an executor using client (an *http.Client, or a
// providers.Direct over one; its Transport pools keep-alive connections per
// upstream host).
func New(client providers.Doer, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent}
}

// Do posts the call to <base>/chat/completions (or the call's Path) with bearer auth.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	path := "/chat/completions"
	if c.Path != "" {
		path = c.Path
	}
	req, err := e.reqs.JSON(ctx, t, c, path, e.userAgent,
		providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret})
	if err != nil {
		return nil, err
	}
	return e.client.Do(req)
}
