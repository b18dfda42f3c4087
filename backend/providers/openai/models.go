package openai

import (
	"context"
	"net/http"
	"strings"

	"omniroute/backend/providers"
)

// ModelsRequest builds GET <base>/models with the bearer credential Do sends,
// for model discovery.
func ModelsRequest(ctx context.Context, t providers.Target, userAgent string) (*http.Request, error) {
	u := strings.TrimRight(t.BaseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Accept", "application/json")
	h.Set("User-Agent", userAgent)
	for k, v := range t.Provider.ExtraHeaders {
		h.Set(k, v)
	}
	if t.Secret != "" {
		h.Set("Authorization", "Bearer "+t.Secret)
	}
	return req, nil
}
