// Package openai is the executor for OpenAI-compatible upstreams.
package openai

import (
	"bytes"
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
	cred := providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret}
	if h := t.Provider.ImageHeader; h[0] != "" && bytes.Contains(c.Body, []byte(imageURL)) {
		// An upstream that refuses image input unless the request says it carries some.
		req, err := e.reqs.JSON(ctx, t, c, path, e.userAgent, cred, h[0], h[1])
		if err != nil {
			return nil, err
		}
		return e.client.Do(req)
	}
	req, err := e.reqs.JSON(ctx, t, c, path, e.userAgent, cred)
	if err != nil {
		return nil, err
	}
	return e.client.Do(req)
}

// imageURL marks a Chat Completions body with image input.
const imageURL = `"image_url"`
