// Package gemini is the executor for Google's Gemini API on its native wire
// (generativelanguage v1beta): POST <base>/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse for a stream, with the API key in
// x-goog-api-key. The body is a Gemini GenerateContentRequest (see
// backend/translate/gemini); the model is in the URL, never in the body.
package gemini

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"omniroute/backend/providers"
)

// Executor posts generateContent requests over a shared pooled client.
type Executor struct {
	client    providers.Doer
	userAgent string
	reqs      providers.Requests
}

// New returns an executor using client.
func New(client providers.Doer, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent}
}

// errModel is returned for a model name that cannot be a URL path segment.
var errModel = errors.New("gemini: the model name cannot be used in a Gemini URL")

// BaseURL is the connection's base URL for the native wire: a base ending in
// Google's OpenAI-compatible "/openai" (what gemini connections used before
// the native wire) loses that suffix, so a stored base keeps working.
func BaseURL(base string) string {
	base = strings.TrimRight(base, "/")
	return strings.TrimSuffix(base, "/openai")
}

// Path is the request path of model's call: ":streamGenerateContent?alt=sse"
// when stream, else ":generateContent". A "models/" prefix on the name is
// accepted; a name that is not one plain path segment is an error.
func Path(model string, stream bool) (string, error) {
	model = strings.TrimPrefix(model, "models/")
	if model == "" || strings.ContainsAny(model, "/?#%:") || url.PathEscape(model) != model {
		return "", errModel
	}
	if stream {
		return "/models/" + model + ":streamGenerateContent?alt=sse", nil
	}
	return "/models/" + model + ":generateContent", nil
}

// EmbedPath is the request path of model's batchEmbedContents call, under
// the same rules as Path.
func EmbedPath(model string) (string, error) {
	p, err := Path(model, false)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(p, ":generateContent") + providers.GeminiBatchEmbed, nil
}

// Do posts the call to <base>/models/{model}:generateContent (or the SSE
// stream, or :batchEmbedContents for an embeddings call) with the key in
// x-goog-api-key, or an OAuth bearer token.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	path, err := Path(t.Model, c.Stream)
	if c.Path == providers.GeminiBatchEmbed {
		path, err = EmbedPath(t.Model)
	}
	if err != nil {
		return nil, err
	}
	cred := providers.Credential{Name: "X-Goog-Api-Key", Secret: t.Secret}
	if t.AuthType == "oauth" {
		cred = providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret}
	}
	tt := *t
	tt.BaseURL = BaseURL(t.BaseURL)
	req, err := e.reqs.Raw(ctx, &tt, c, path, e.userAgent, cred)
	if err != nil {
		return nil, err
	}
	return e.client.Do(req)
}

// ModelsRequest builds GET <base>/models (pageSize 1000, pageToken when
// paging) with the credential Do sends, for model discovery.
func ModelsRequest(ctx context.Context, t providers.Target, userAgent, pageToken string) (*http.Request, error) {
	u := BaseURL(t.BaseURL) + "/models?pageSize=1000"
	if pageToken != "" {
		u += "&pageToken=" + url.QueryEscape(pageToken)
	}
	req, err := providers.NewListRequest(ctx, &t, u, userAgent)
	if err != nil {
		return nil, err
	}
	h := req.Header
	if t.Secret != "" {
		if t.AuthType == "oauth" {
			h.Set("Authorization", "Bearer "+t.Secret)
		} else {
			h.Set("X-Goog-Api-Key", t.Secret)
		}
	}
	return req, nil
}
