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
	req, err := providers.NewListRequest(ctx, &t, u, userAgent)
	if err != nil {
		return nil, err
	}
	h := req.Header
	if t.Secret != "" {
		h.Set("Authorization", "Bearer "+t.Secret)
	}
	return req, nil
}
