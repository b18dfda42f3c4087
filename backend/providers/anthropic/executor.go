// Package anthropic is the executor for Anthropic Messages upstreams (API keys
// and OAuth bearer tokens).
package anthropic

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

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

// Do rewrites the body's model when it differs and posts it to <base>/messages.
func (e *Executor) Do(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	body := c.Body
	if gjson.GetBytes(body, "model").String() != t.Model {
		var err error
		if body, err = sjson.SetBytes(body, "model", t.Model); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+"/messages", bytes.NewReader(body))
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
	h.Set("anthropic-version", Version)
	if t.Secret != "" {
		if t.AuthType == "oauth" {
			h.Set("Authorization", "Bearer "+t.Secret)
			h.Set("anthropic-beta", "oauth-2025-04-20")
		} else {
			h.Set("x-api-key", t.Secret)
		}
	}
	for k, v := range t.Provider.ExtraHeaders {
		h.Set(k, v)
	}
	return e.client.Do(req)
}
