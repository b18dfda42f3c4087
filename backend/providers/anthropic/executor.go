// Package anthropic is the executor for Anthropic Messages upstreams (API keys
// and OAuth bearer tokens).
package anthropic

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"omniroute/backend/providers"
)

// Version is the anthropic-version header sent upstream.
const Version = "2023-06-01"

// Executor posts Anthropic Messages requests over a shared pooled client.
type Executor struct {
	client    providers.Doer
	userAgent string
	reqs      providers.Requests
}

// New returns an executor using client.
func New(client providers.Doer, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent}
}

// Do posts the call to <base>/messages with an API key or an OAuth bearer token.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	cred := providers.Credential{Name: "X-Api-Key", Secret: t.Secret}
	if t.AuthType == "oauth" {
		cred = providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret}
	}
	req, err := e.reqs.JSON(ctx, t, c, "/messages", e.userAgent, cred)
	if err != nil {
		return nil, err
	}
	h := req.Header
	version := c.Anthropic.Version
	if version == "" {
		version = Version
	}
	h.Set("anthropic-version", version)
	// The connection's own betas first (OAuth, the provider's extra headers),
	// then the client's.
	betas := slices.Concat(h.Values("anthropic-beta"), c.Anthropic.Betas)
	if t.Secret != "" && t.AuthType == "oauth" {
		betas = append([]string{OAuthBeta}, betas...)
	}
	if b := MergeBetas(betas); b != "" {
		h.Set("anthropic-beta", b)
	}
	return e.client.Do(req)
}

// OAuthBeta is the anthropic-beta an OAuth (subscription) token needs.
const OAuthBeta = "oauth-2025-04-20"

// MergeBetas joins anthropic-beta values into one header value: each value
// may itself be a comma-separated list; blanks and repeats are dropped and
// the first occurrence keeps its place.
func MergeBetas(values []string) string {
	seen := make(map[string]bool, len(values))
	var out []string
	for _, v := range values {
		for _, b := range strings.Split(v, ",") {
			b = strings.TrimSpace(b)
			if b != "" && !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	return strings.Join(out, ",")
}
