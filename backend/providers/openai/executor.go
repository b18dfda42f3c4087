// Package openai is the executor for OpenAI-compatible upstreams.
package openai

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

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

// Do rewrites the body's model when it differs and posts it upstream.
func (e *Executor) Do(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	body := c.Body
	if gjson.GetBytes(body, "model").String() != t.Model {
		var err error
		body, err = sjson.SetBytes(body, "model", t.Model)
		if err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	if c.Stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	h.Set("User-Agent", e.userAgent)
	if t.Secret != "" {
		h.Set("Authorization", "Bearer "+t.Secret)
	}
	for k, v := range t.Provider.ExtraHeaders {
		h.Set(k, v)
	}
	return e.client.Do(req)
}
