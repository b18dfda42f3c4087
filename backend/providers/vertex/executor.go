// Package vertex is the executor for Google Vertex AI with a service
// account (vertex connections). The connection's sealed apiKey is the
// service account's JSON key; an access token is minted from it (a JWT
// signed RS256, exchanged at the token URI) and minted again before it
// expires, single-flight per connection (Tokens).
//
//   - Gemini models: POST <base>/projects/{p}/locations/{r}/publishers/google/models/{m}:generateContent,
//     or :streamGenerateContent?alt=sse; the body is the Gemini request.
//   - Claude models (claude-…, see IsAnthropic): POST
//     …/publishers/anthropic/models/{m}:rawPredict, or :streamRawPredict; the
//     body is the Anthropic Messages request without "model" and with
//     "anthropic_version": "vertex-2023-10-16".
//
// <base> is https://{region}-aiplatform.googleapis.com/v1 (BaseURL)
// unless the connection sets its own.
package vertex

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/sjson"

	"omniroute/backend/providers"
)

// AnthropicVersion is the anthropic_version Vertex AI's Claude models take in the body.
const AnthropicVersion = "vertex-2023-10-16"

// Executor sends Vertex AI calls with minted tokens.
type Executor struct {
	client    providers.Doer
	userAgent string
	tokens    *Tokens
	reqs      providers.Requests
}

// New returns an executor sending through client, minting with tokens.
func New(client providers.Doer, userAgent string, tokens *Tokens) *Executor {
	return &Executor{client: client, userAgent: userAgent, tokens: tokens}
}

var (
	errModel   = errors.New("vertex: the model name cannot be used in a Vertex AI URL")
	errProject = errors.New("vertex: the connection names no project (providerSpecificData.projectId, or the key's project_id)")
)

// segment checks one URL path segment (project, region, model).
func segment(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/?#%:") && url.PathEscape(strings.ReplaceAll(s, "@", "")) == strings.ReplaceAll(s, "@", "")
}

// Path is the request path of model's call under the base URL.
func Path(project, region, model string, stream bool) (string, error) {
	model = strings.TrimPrefix(model, "models/")
	if !segment(model) {
		return "", errModel
	}
	if !segment(project) || !segment(region) {
		return "", errProject
	}
	pre := "/projects/" + project + "/locations/" + region + "/publishers/"
	switch {
	case IsAnthropic(model) && stream:
		return pre + "anthropic/models/" + model + ":streamRawPredict", nil
	case IsAnthropic(model):
		return pre + "anthropic/models/" + model + ":rawPredict", nil
	case stream:
		return pre + "google/models/" + model + ":streamGenerateContent?alt=sse", nil
	}
	return pre + "google/models/" + model + ":generateContent", nil
}

// AnthropicBody is a Messages body as Vertex takes it: no model, the Vertex
// anthropic_version.
func AnthropicBody(body []byte) ([]byte, error) {
	out, err := sjson.DeleteBytes(body, "model")
	if err != nil {
		return nil, err
	}
	return sjson.SetBytes(out, "anthropic_version", AnthropicVersion)
}

// Do mints (or reuses) the connection's token and sends the call. A 401 from
// Vertex drops the token and the call is sent once more with a new one.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	project := t.Google.Project
	if project == "" {
		if sa, err := e.tokens.account(t.Secret); err == nil {
			project = sa.ProjectID
		}
	}
	region := t.Google.Region
	if region == "" {
		region = Region
	}
	path, err := Path(project, region, t.Model, c.Stream)
	if err != nil {
		return nil, err
	}
	body := c.Body
	var own []string
	if IsAnthropic(t.Model) {
		if body, err = AnthropicBody(body); err != nil {
			return nil, err
		}
		if len(c.Anthropic.Betas) > 0 {
			own = []string{"Anthropic-Beta", strings.Join(c.Anthropic.Betas, ",")}
		}
	}
	up := providers.Call{Body: body, Stream: c.Stream, Header: c.Header, FirstByteDeadline: c.FirstByteDeadline, Storage: c.Storage}
	for try := 0; ; try++ {
		tok, err := e.tokens.Token(ctx, t.ConnectionID, t.Secret)
		if err != nil {
			return mintRefusal(err)
		}
		req, err := e.reqs.Raw(ctx, t, up, path, e.userAgent,
			providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: tok}, own...)
		if err != nil {
			return nil, err
		}
		up.Storage = nil
		resp, err := e.client.Do(req)
		if err != nil || resp.StatusCode != http.StatusUnauthorized || try > 0 {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		e.tokens.Invalidate(t.ConnectionID, tok)
	}
}

// mintRefusal turns a key the token endpoint refuses, or one that cannot be
// read, into a 401 in Google's error shape, so the connection's credentials
// are blamed as for any refused key; other failures stay errors.
func mintRefusal(err error) (*http.Response, error) {
	var me *MintError
	var ke *KeyError
	msg := ""
	switch {
	case errors.As(err, &me):
		msg = "Vertex AI: " + me.Error()
	case errors.As(err, &ke):
		msg = "Vertex AI: " + ke.Error()
	default:
		return nil, err
	}
	b, _ := sjson.SetBytes([]byte(`{"error":{"code":401,"status":"UNAUTHENTICATED"}}`), "error.message", msg)
	return &http.Response{Status: "401 Unauthorized", StatusCode: http.StatusUnauthorized, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: int64(len(b)),
		Body: io.NopCloser(strings.NewReader(string(b)))}, nil
}
