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
	req, err := providers.NewListRequest(ctx, &t, u, userAgent)
	if err != nil {
		return nil, err
	}
	h := req.Header
	if h.Get("anthropic-version") == "" { // the provider's extra headers may name another
		h.Set("anthropic-version", Version)
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
