// Package ollama is the executor of Ollama's native API (an `ollama`
// connection): it takes the gateway's OpenAI Chat Completions calls, sends
// them to the server's POST /api/chat (embeddings to POST /api/embed), and
// answers in the OpenAI wire — a chat.completion, an SSE stream of chunks
// translated line by line from Ollama's NDJSON, or an OpenAI-shaped error —
// so every client format reaches a local model through the same
// translations as any OpenAI-compatible upstream. The connection next to it,
// `ollama-local`, uses the server's OpenAI-compatible /v1 instead.
package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	tollama "omniroute/backend/translate/ollama"
)

// maxBody bounds a non-streamed answer (and an error answer) read.
const maxBody = 64 << 20

// TagsPath lists the server's local models (GET).
const TagsPath = "/api/tags"

// Executor sends calls to an Ollama server's native API.
type Executor struct {
	client    providers.Doer
	userAgent string
	now       func() time.Time
}

// New returns an executor over client; now stamps the chat answers' created.
func New(client providers.Doer, userAgent string, now func() time.Time) *Executor {
	return &Executor{client: client, userAgent: userAgent, now: now}
}

// Do implements providers.Executor.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	// What /api/chat cannot take is answered here, as an upstream would: an
	// executor error would read as a transport failure of the connection.
	var path string
	var body []byte
	var err error
	switch c.Path {
	case "":
		path = "/api/chat"
		body, err = tollama.RequestFromChat(c.Body)
	case "/embeddings":
		path = "/api/embed"
		body, err = tollama.EmbedRequestFromOpenAI(c.Body)
	default:
		return synthetic(http.StatusNotFound, "not_found", "Ollama's native API serves no "+c.Path+" endpoint; use an ollama-local (OpenAI-compatible) connection"), nil
	}
	if err != nil {
		return synthetic(http.StatusBadRequest, "invalid_request_error", err.Error()), nil
	}
	if body, err = setModel(body, t.Model); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, Root(t.BaseURL)+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.Stream {
		req.Header.Set("Accept", "application/x-ndjson")
	}
	req.Header.Set("User-Agent", e.userAgent)
	if t.Secret != "" {
		// A server behind an authenticating proxy (Ollama itself takes none).
		req.Header.Set("Authorization", "Bearer "+t.Secret)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	id := "chatcmpl-ollama-" + strconv.FormatInt(e.now().UnixNano(), 36)
	created := e.now().Unix()
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return restateError(resp), nil
	case c.Stream && c.Path == "":
		resp.Body = tollama.NewSSEReader(resp.Body, id, t.Model, created)
		resp.Header.Set("Content-Type", "text/event-stream")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		return resp, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var out []byte
	if c.Path == "/embeddings" {
		out, err = tollama.EmbedResponseToOpenAI(raw)
	} else {
		out, err = tollama.ResponseToChat(raw, id, t.Model, created)
	}
	if err != nil {
		return nil, err
	}
	return replaceBody(resp, out), nil
}

// Root is the server's root URL: a base URL stored for Ollama's
// OpenAI-compatible surface (…/v1, as the "ollama" alias used to create)
// still works, its "/v1" dropped.
func Root(base string) string {
	return strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
}

// setModel names the target's model in an /api/chat or /api/embed body.
func setModel(body []byte, model string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(model)
	m["model"] = b
	return json.Marshal(m)
}

// restateError gives an Ollama error answer ({"error": "…"}) the OpenAI
// error shape, so the classifier and clients read it like any other.
func restateError(resp *http.Response) *http.Response {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	msg := gjson.GetBytes(raw, "error").String()
	if gjson.GetBytes(raw, "error").IsObject() {
		msg = gjson.GetBytes(raw, "error.message").String()
	}
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	code := "ollama_error"
	switch {
	case resp.StatusCode == http.StatusNotFound:
		code = "model_not_found"
	case resp.StatusCode >= 500:
		code = "server_error"
	}
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": code, "code": code}})
	return replaceBody(resp, out)
}

// synthetic is an OpenAI-shaped error answer made by the executor itself.
func synthetic(status int, code, msg string) *http.Response {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "type": code, "message": msg}})
	resp := &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}}
	return replaceBody(resp, b)
}

func replaceBody(resp *http.Response, body []byte) *http.Response {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Set("Content-Type", "application/json")
	return resp
}

// ModelsRequest is GET {base}/api/tags, the server's local models.
func ModelsRequest(ctx context.Context, t providers.Target, userAgent string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, Root(t.BaseURL)+TagsPath, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if t.Secret != "" {
		req.Header.Set("Authorization", "Bearer "+t.Secret)
	}
	return req, nil
}

// ParseTags reads /api/tags ({"models":[{"name":"llama3.2:latest", "model": …}]}).
func ParseTags(body []byte) ([]string, bool) {
	models := gjson.GetBytes(body, "models")
	if !models.IsArray() {
		return nil, false
	}
	var out []string
	for _, m := range models.Array() {
		n := m.Get("name").String()
		if n == "" {
			n = m.Get("model").String()
		}
		if n != "" {
			out = append(out, n)
		}
	}
	return out, true
}
