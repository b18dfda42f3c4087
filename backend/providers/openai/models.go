package openai

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"omniroute/backend/providers"
)

// ModelsRequest builds GET <base>/models with the bearer credential Do sends,
// for model discovery. For Azure OpenAI it lists the resource's deployments:
// GET <base>/openai/deployments?api-version=… with the api-key (or Entra
// bearer), answered as {data:[{id, model}]} where that API version serves it.
func ModelsRequest(ctx context.Context, t providers.Target, userAgent string) (*http.Request, error) {
	u := strings.TrimRight(t.BaseURL, "/") + "/models"
	azure := t.Provider.Dialect == providers.DialectAzure
	if azure {
		u = strings.TrimRight(t.BaseURL, "/") + "/openai/deployments?api-version=" + url.QueryEscape(t.Azure.Version())
	}
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
	switch {
	case t.Secret == "":
	case azure && t.AuthType != "oauth":
		h.Set("Api-Key", t.Secret)
	default:
		h.Set("Authorization", "Bearer "+t.Secret)
	}
	return req, nil
}
