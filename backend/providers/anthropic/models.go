package anthropic

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"omniroute/backend/providers"
)

// ModelsRequest builds GET <base>/models with the same credentials Do sends
// (x-api-key, or the OAuth bearer token with its beta), for model discovery.
// afterID pages Anthropic's list ("" for the first page).
func ModelsRequest(ctx context.Context, t providers.Target, userAgent, afterID string) (*http.Request, error) {
	u := strings.TrimRight(t.BaseURL, "/") + "/models?limit=1000"
	if afterID != "" {
		u += "&after_id=" + url.QueryEscape(afterID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Accept", "application/json")
	h.Set("User-Agent", userAgent)
	h.Set("anthropic-version", Version)
	for k, v := range t.Provider.ExtraHeaders {
		h.Set(k, v)
	}
	if t.Secret != "" {
		if t.AuthType == "oauth" {
			h.Set("Authorization", "Bearer "+t.Secret)
			h.Set("anthropic-beta", "oauth-2025-04-20")
		} else {
			h.Set("x-api-key", t.Secret)
		}
	}
	return req, nil
}
