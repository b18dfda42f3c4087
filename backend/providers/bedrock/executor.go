package bedrock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"omniroute/backend/providers"
)

// maxErrorBody bounds an error answer read to restate it.
const maxErrorBody = 1 << 20

// Executor sends OpenAI Chat Completions calls to Bedrock's Converse
// (JSON) and ConverseStream (event stream) APIs, signed with SigV4, and
// answers in the OpenAI wire: a chat.completion, an SSE stream of chunks,
// or an error body {"error":{"code":<AWS error type>,"message":…}} with
// the upstream's status and headers.
type Executor struct {
	client    providers.Doer
	userAgent string
	now       func() time.Time
}

// New returns an executor over client; now is the signing clock.
func New(client providers.Doer, userAgent string, now func() time.Time) *Executor {
	return &Executor{client: client, userAgent: userAgent, now: now}
}

// Endpoint is a region's Bedrock runtime endpoint.
func Endpoint(region string) string { return "https://bedrock-runtime." + region + ".amazonaws.com" }

// Do implements providers.Executor.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	// What Converse cannot take is answered here, as an upstream would:
	// an executor error would read as a transport failure of the connection.
	if c.Path != "" {
		return synthetic(http.StatusNotFound, "not_found", "Bedrock Converse serves no "+c.Path+" endpoint"), nil
	}
	if t.AWS.Region == "" || t.AWS.AccessKeyID == "" || t.AWS.SecretAccessKey == "" {
		return synthetic(http.StatusUnauthorized, "MissingCredentials", "the bedrock connection has no region or AWS credentials"), nil
	}
	// Converse, unless an Anthropic model is asked for what only its
	// Messages body carries (thinking, a prefill): then InvokeModel.
	invoke := NeedsInvoke(t.Model, c.Body)
	var body []byte
	var err error
	if invoke {
		body, err = ToInvoke(c.Body)
	} else {
		body, err = ToConverse(c.Body)
	}
	if err != nil {
		return synthetic(http.StatusBadRequest, "invalid_request_error", err.Error()), nil
	}
	base := strings.TrimRight(t.BaseURL, "/")
	if base == "" {
		base = Endpoint(t.AWS.Region)
	}
	op := "converse"
	accept := "application/json"
	switch {
	case invoke && c.Stream:
		op, accept = "invoke-with-response-stream", "application/vnd.amazon.eventstream"
	case invoke:
		op = "invoke"
	case c.Stream:
		op, accept = "converse-stream", "application/vnd.amazon.eventstream"
	}
	// A model id's ':' (…-v1:0) is escaped, as the AWS SDKs send it.
	u, err := url.Parse(base + "/model/" + strings.ReplaceAll(url.PathEscape(t.Model), ":", "%3A") + "/" + op)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", e.userAgent)
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	creds := aws.Credentials{AccessKeyID: t.AWS.AccessKeyID, SecretAccessKey: t.AWS.SecretAccessKey, SessionToken: t.AWS.SessionToken}
	// A signer per call: the SDK's caches the derived key by access key id
	// alone, so a corrected secret under the same id would keep signing
	// with the old one until the day changes.
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hash, "bedrock", t.AWS.Region, e.now()); err != nil {
		return nil, fmt.Errorf("bedrock: signing: %w", err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	id := "chatcmpl-" + resp.Header.Get("X-Amzn-Requestid")
	created := e.now().Unix()
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return restateError(resp), nil
	case c.Stream && invoke:
		resp.Body = NewInvokeReader(resp.Body, t.Model)
		resp.Header.Set("Content-Type", "text/event-stream")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		return resp, nil
	case c.Stream:
		resp.Body = NewSSEReader(resp.Body, id, t.Model, created)
		resp.Header.Set("Content-Type", "text/event-stream")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		return resp, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var out []byte
	if invoke {
		out, err = FromInvoke(raw)
	} else {
		out, err = FromConverse(raw, id, t.Model, created)
	}
	if err != nil {
		return nil, err
	}
	return replaceBody(resp, out), nil
}

// restateError gives an AWS error answer the OpenAI error shape, its code
// the AWS error type (x-amzn-ErrorType or the body's __type), so the
// classifier and the rules table read ThrottlingException,
// ServiceQuotaExceededException, ModelNotReadyException, AccessDeniedException….
func restateError(resp *http.Response) *http.Response {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	var b struct {
		Message  string `json:"message"`
		MessageU string `json:"Message"`
		Type     string `json:"__type"`
	}
	_ = json.Unmarshal(raw, &b)
	code := exceptionName(resp.Header.Get("X-Amzn-Errortype"))
	if code == "" {
		code = exceptionName(b.Type)
	}
	msg := b.Message
	if msg == "" {
		msg = b.MessageU
	}
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "type": code, "message": msg}})
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
