// Package codex is the executor for the ChatGPT Codex backend: the Responses
// API at <base>/responses (https://chatgpt.com/backend-api/codex/responses),
// called with a ChatGPT OAuth token and the account headers the Codex CLI sends.
//
// The backend's contract differs from the public Responses API: it always
// streams, stores nothing (store:false), wants an instructions string and
// refuses some sampling fields. The executor enforces that on every body, and
// for a client that did not ask to stream it reads the stream and answers with
// the final response object, so callers still see one JSON answer.
package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/providers"
	"omniroute/backend/translate/sse"
)

// Header values the Codex CLI sends, and that the backend expects.
const (
	// Beta is the OpenAI-Beta header of the Responses backend.
	Beta = "responses=experimental"
	// Originator names the client; the backend accepts the Codex CLI's.
	Originator = "codex_cli_rs"
)

// unsupported are body fields the Codex backend rejects ("Unsupported parameter").
var unsupported = []string{"max_output_tokens", "max_completion_tokens", "temperature", "top_p", "previous_response_id"}

// maxStream bounds a stream read to build a non-streaming answer.
const maxStream = 64 << 20

// Executor posts Responses requests to the Codex backend.
type Executor struct {
	client    providers.Doer
	userAgent string
	reqs      providers.Requests
}

// New returns an executor using client.
func New(client providers.Doer, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent}
}

// Body applies the backend's contract to a Responses body: store false,
// stream true, instructions present, input as a list, unsupported fields removed.
func Body(body []byte) ([]byte, error) {
	var err error
	for _, k := range unsupported {
		if gjson.GetBytes(body, k).Exists() {
			if body, err = sjson.DeleteBytes(body, k); err != nil {
				return nil, err
			}
		}
	}
	if body, err = sjson.SetBytes(body, "store", false); err != nil {
		return nil, err
	}
	if body, err = sjson.SetBytes(body, "stream", true); err != nil {
		return nil, err
	}
	if in := gjson.GetBytes(body, "input"); in.Type == gjson.String {
		// The backend takes only the list form: a string is one user message.
		msg, _ := json.Marshal([]any{map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": in.Str}}}})
		if body, err = sjson.SetRawBytes(body, "input", msg); err != nil {
			return nil, err
		}
	}
	if !gjson.GetBytes(body, "instructions").Exists() || gjson.GetBytes(body, "instructions").Type == gjson.Null {
		if body, err = sjson.SetBytes(body, "instructions", ""); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// Do posts the call to <base>/responses. A non-streaming call is answered with
// the stream's final response object as a JSON body.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	body, err := Body(c.Body)
	if err != nil {
		return nil, err
	}
	up := providers.Call{Body: body, Stream: true, Header: c.Header, FirstByteDeadline: c.FirstByteDeadline}
	req, err := e.reqs.JSON(ctx, t, up, "/responses", e.userAgent,
		providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: t.Secret})
	if err != nil {
		return nil, err
	}
	h := req.Header
	if t.Account.ID != "" {
		h.Set("chatgpt-account-id", t.Account.ID)
	}
	h.Set("OpenAI-Beta", Beta)
	h.Set("originator", Originator)
	resp, err := e.client.Do(req)
	if err != nil || c.Stream || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	return collect(resp)
}

// ErrIncomplete is a stream that ended without its final response event.
var ErrIncomplete = errors.New("the Codex stream ended without a final response")

// collect reads a Responses stream and returns its final response object as a
// JSON answer with the upstream's headers (rate-limit windows included). A
// response.failed event becomes a 502 with the upstream's error.
func collect(resp *http.Response) (*http.Response, error) {
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxStream))
	if err != nil {
		return nil, err
	}
	var final []byte
	status := http.StatusOK
	var p sse.Parser
	handle := func(ev sse.Event) bool {
		root := gjson.ParseBytes(ev.Data)
		switch root.Get("type").String() {
		case "response.completed", "response.incomplete", "response.done":
			final = []byte(root.Get("response").Raw)
			return false
		case "response.failed":
			status = http.StatusBadGateway
			e := root.Get("response.error")
			final = fmt.Appendf(nil, `{"error":{"message":%q,"type":"upstream_error","code":%q}}`, e.Get("message").String(), e.Get("code").String())
			return false
		}
		return true
	}
	if err := p.Feed(raw, handle); err != nil {
		return nil, err
	}
	if final == nil {
		p.Flush(handle)
	}
	if len(final) == 0 {
		return nil, ErrIncomplete
	}
	h := resp.Header.Clone()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	return &http.Response{Status: http.StatusText(status), StatusCode: status, Header: h, Proto: resp.Proto,
		ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor, ContentLength: int64(len(final)),
		Body: io.NopCloser(bytes.NewReader(final)), Request: resp.Request}, nil
}
