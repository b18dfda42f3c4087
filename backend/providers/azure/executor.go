package azure

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"omniroute/backend/providers"
)

// Dialect is Azure OpenAI: {base}/openai/deployments/{deployment}/…?api-version=,
// the key in an api-key header (or an Entra ID bearer token).
const Dialect providers.Dialect = "azure"

// APIVersion is the api-version sent when a connection names none: the
// latest GA version of the Azure OpenAI inference API.
const APIVersion = "2024-10-21"

// Conn is what an Azure OpenAI connection's providerSpecificData says
// ({"apiVersion": "2024-10-21", "deployments": {"gpt-4o": "prod-4o"}}), as
// its targets carry it (providers.Target.Extra).
type Conn struct {
	// APIVersion is the api-version query parameter ("" : APIVersion).
	APIVersion string
	// Deployments maps the model names the connection serves to deployment
	// names; a model without an entry is used as the deployment name.
	Deployments map[string]string
	// Responses: the connection's deployments are called through the
	// Responses API ({base}/openai/v1/responses, the deployment as "model";
	// providerSpecificData.api = "responses") instead of chat completions.
	Responses bool
}

// Version is the api-version to send.
func (a Conn) Version() string {
	if a.APIVersion == "" {
		return APIVersion
	}
	return a.APIVersion
}

// Deployment is the deployment that serves model.
func (a Conn) Deployment(model string) string {
	if d, ok := a.Deployments[model]; ok && d != "" {
		return d
	}
	return model
}

// connOf is t's connection data (zero when its target carries none).
func connOf(t *providers.Target) Conn {
	c, _ := t.Extra.(Conn)
	return c
}

// ResponsesPath is the Responses endpoint of Azure's v1 API.
const ResponsesPath = "/openai/v1/responses"

// Executor sends a target's calls to its Azure OpenAI resource: OpenAI
// Chat Completions (and embeddings, completions: the call's Path) on the
// model's deployment, POST {base}/openai/deployments/<deployment><path>?api-version=…;
// a connection set to the Responses API gets POST {base}/openai/v1/responses
// with the deployment as the body's "model". The key goes in api-key (an
// Entra ID token, authType oauth, as a bearer); bodies and answers (JSON or
// SSE events) pass as they are.
type Executor struct {
	client    providers.Doer
	userAgent string
	reqs      providers.Requests
}

// New returns an Azure OpenAI executor over client.
func New(client providers.Doer, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent}
}

// Do implements providers.Executor.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	cred := credential(t)
	conn := connOf(t)
	if conn.Responses && c.Path == "" {
		dep := *t
		dep.Model = conn.Deployment(t.Model)
		req, err := e.reqs.JSON(ctx, &dep, c, ResponsesPath, e.userAgent, cred)
		if err != nil {
			return nil, err
		}
		return e.client.Do(req)
	}
	path := "/chat/completions"
	if c.Path != "" {
		path = c.Path
	}
	req, err := e.reqs.JSON(ctx, t, c, DeploymentPath(t, path), e.userAgent, cred)
	if err != nil {
		return nil, err
	}
	return e.client.Do(req)
}

// credential is the api-key header, or an Entra ID token (authType oauth) as a bearer.
func credential(t *providers.Target) providers.Credential {
	if t.AuthType == "oauth" {
		return providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret}
	}
	return providers.Credential{Name: "Api-Key", Secret: t.Secret}
}

// DeploymentPath is the deployment URL path (with its api-version query) of
// an Azure OpenAI endpoint: /openai/deployments/<deployment of t.Model><endpoint>?api-version=….
func DeploymentPath(t *providers.Target, endpoint string) string {
	conn := connOf(t)
	return "/openai/deployments/" + url.PathEscape(conn.Deployment(t.Model)) + endpoint +
		"?api-version=" + url.QueryEscape(conn.Version())
}

// deploymentsRequest is GET {base}/openai/deployments?api-version=… with
// the api-key (or Entra bearer), answered as {data:[{id, model}]} where that
// API version serves it (newer ones dropped the route: the connection's
// deployments map stands in, Module.OwnModels).
func deploymentsRequest(ctx context.Context, t providers.Target, userAgent string) (*http.Request, error) {
	u := strings.TrimRight(t.BaseURL, "/") + "/openai/deployments?api-version=" + url.QueryEscape(connOf(&t).Version())
	req, err := providers.NewListRequest(ctx, &t, u, userAgent)
	if err != nil {
		return nil, err
	}
	h := req.Header
	if t.Secret != "" {
		c := credential(&t)
		h.Set(c.Name, c.Prefix+c.Secret)
	}
	return req, nil
}
