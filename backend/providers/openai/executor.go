// Package openai is the executor for OpenAI-compatible upstreams, Azure
// OpenAI's deployment URLs included.
package openai

import (
	"bytes"
	"context"
	"net/http"
	"net/url"

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
// An Azure OpenAI target gets <base>/openai/deployments/<deployment><path>?api-version=…
// with its key in api-key (an Entra ID token, authType oauth, as a bearer).
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	path := "/chat/completions"
	if c.Path != "" {
		path = c.Path
	}
	cred := providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret}
	if t.Provider.Dialect == providers.DialectAzure {
		path = AzurePath(t, path)
		if t.AuthType != "oauth" {
			cred = providers.Credential{Name: "Api-Key", Secret: t.Secret}
		}
	}
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

// AzureResponses sends Responses API calls to an Azure OpenAI resource's
// v1 surface, POST {base}/openai/v1/responses, with the deployment as the
// body's "model" and the key in api-key (an Entra ID token as a bearer).
// Bodies and answers (JSON or SSE events) pass as they are.
type AzureResponses struct {
	client    providers.Doer
	userAgent string
	reqs      providers.Requests
}

// NewAzureResponses returns an Azure Responses executor over client.
func NewAzureResponses(client providers.Doer, userAgent string) *AzureResponses {
	return &AzureResponses{client: client, userAgent: userAgent}
}

// AzureResponsesPath is the Responses endpoint of Azure's v1 API.
const AzureResponsesPath = "/openai/v1/responses"

// Do implements providers.Executor.
func (e *AzureResponses) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	cred := providers.Credential{Name: "Api-Key", Secret: t.Secret}
	if t.AuthType == "oauth" {
		cred = providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret}
	}
	dep := *t
	dep.Model = t.Azure.Deployment(t.Model)
	req, err := e.reqs.JSON(ctx, &dep, c, AzureResponsesPath, e.userAgent, cred)
	if err != nil {
		return nil, err
	}
	return e.client.Do(req)
}

// imageURL marks a Chat Completions body with image input.
const imageURL = `"image_url"`

// AzurePath is the deployment URL path (with its api-version query) of an
// Azure OpenAI endpoint: /openai/deployments/<deployment of t.Model><endpoint>?api-version=….
func AzurePath(t *providers.Target, endpoint string) string {
	return "/openai/deployments/" + url.PathEscape(t.Azure.Deployment(t.Model)) + endpoint +
		"?api-version=" + url.QueryEscape(t.Azure.Version())
}
