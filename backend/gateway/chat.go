package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// errFirstByteTimeout cancels an attempt whose upstream sent nothing in time.
var errFirstByteTimeout = errors.New("no response from upstream before the first-byte deadline")

// maxErrorBody bounds how much of an upstream error body is read for classification.
const maxErrorBody = 16 << 10

// maxResponseBody bounds a buffered (non-streaming) upstream response.
const maxResponseBody = 64 << 20

// request is one client request being served.
type request struct {
	id       string
	start    time.Time
	body     []byte
	model    string
	stream   bool
	client   Client
	path     string
	format   string
	attempts []AttemptRecord
	log      store.RequestLog
}

// ChatCompletions serves POST /v1/chat/completions.
func (g *Gateway) ChatCompletions(w http.ResponseWriter, r *http.Request) {
	g.serve(w, r, "/chat/completions", "openai")
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, path, format string) {
	set := g.general()
	req := &request{id: secrets.RandomID(), start: g.clk.Now(), client: ClientFrom(r.Context()), path: path, format: format}
	err := g.decode(r, req, set.MaxBodyBytes)
	if err == nil {
		err = g.run(w, r, req)
	}
	if err != nil {
		e := errs.As(err)
		req.log.Status = httpx.Status(e.Class)
		req.log.ErrorCode = e.Code
		httpx.WriteError(w, e)
	}
	g.finishLog(req)
}

func (g *Gateway) decode(r *http.Request, req *request, limit int64) error {
	body, err := httpx.ReadBody(r, limit)
	if err != nil {
		return err
	}
	if len(body) == 0 || !gjson.ValidBytes(body) {
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be a JSON object")
	}
	m := root.Get("model")
	if m.Type != gjson.String || m.Str == "" {
		return errs.New(errs.Invalid, "MODEL_REQUIRED", "field \"model\" must be a non-empty string").WithParam("model")
	}
	if msgs := root.Get("messages"); !msgs.IsArray() {
		return errs.New(errs.Invalid, "MESSAGES_REQUIRED", "field \"messages\" must be an array").WithParam("messages")
	}
	if s := root.Get("stream"); s.Exists() && s.Type != gjson.True && s.Type != gjson.False && s.Type != gjson.Null {
		return errs.New(errs.Invalid, "INVALID_FIELD", "field \"stream\" must be a boolean").WithParam("stream")
	}
	req.body, req.model, req.stream = body, m.Str, root.Get("stream").Bool()
	return nil
}

// run is the attempt loop.
func (g *Gateway) run(w http.ResponseWriter, r *http.Request, req *request) error {
	cands, err := g.engine.Registry().Resolve(req.model, req.client.Access)
	if err != nil {
		return err
	}
	set := g.general()
	var excluded []routing.Exclusion
	var last *failure
	for _, cand := range cands {
		if len(req.attempts) >= set.MaxAttempts {
			break
		}
		ticket, x := g.engine.Admit(cand)
		if x != nil {
			excluded = append(excluded, *x)
			continue
		}
		f, done := g.attempt(w, r, req, cand, ticket)
		if done {
			return nil
		}
		if f.clientGone {
			return nil
		}
		last = f
		if !f.v.Failover {
			return f.clientError()
		}
	}
	return terminalError(req, last, excluded)
}

// failure is a failed attempt the loop may fail over from.
type failure struct {
	v          verdict.Verdict
	clientGone bool
}

func (f *failure) clientError() error {
	e := errs.New(errs.Upstream, f.v.Code, "%s", f.v.Message)
	switch f.v.Kind {
	case verdict.KindBadRequest, verdict.KindContextLength, verdict.KindContentPolicy:
		e.Class = errs.Invalid
	case verdict.KindNotFound:
		e.Class = errs.NotFound
	}
	return e
}

// attempt runs one upstream attempt. done is true when a response (success, or an
// error after bytes were committed) has been written to the client.
func (g *Gateway) attempt(w http.ResponseWriter, r *http.Request, req *request, cand routing.Candidate, ticket *routing.Ticket) (f *failure, done bool) {
	set := g.general()
	t0 := g.clk.Now()
	rec := AttemptRecord{ConnectionID: cand.Conn.ID, Provider: cand.Conn.BreakerKey, Model: cand.Model}
	finish := func(v verdict.Verdict) {
		ticket.Finish(v)
		rec.Verdict, rec.Code, rec.LatencyMs = string(v.Kind), v.Code, msSince(t0, g.clk.Now())
		req.attempts = append(req.attempts, rec)
	}
	defer func() {
		if p := recover(); p != nil {
			ticket.Abandon()
			panic(p)
		}
	}()

	exec, ok := g.executors.For(cand.Conn.Provider.Format)
	if !ok {
		v := verdict.Verdict{Kind: verdict.KindBadRequest, Failover: true, Code: "FORMAT_NOT_SUPPORTED",
			Message: "this gateway cannot yet speak " + string(cand.Conn.Provider.Format) + " to " + cand.Conn.Provider.ID}
		ticket.Abandon()
		rec.Verdict, rec.Code = string(v.Kind), v.Code
		req.attempts = append(req.attempts, rec)
		return &failure{v: v}, false
	}

	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	firstByte := time.AfterFunc(time.Duration(set.FirstByteTimeoutMs)*time.Millisecond, func() { cancel(errFirstByteTimeout) })
	defer firstByte.Stop()

	resp, err := exec.Do(ctx, cand.Conn.Target(cand.Model), providers.Call{Body: req.body, Stream: req.stream, Path: req.path})
	if err != nil {
		v := g.classifyErr(ctx, r, err, cand)
		finish(v)
		return &failure{v: v, clientGone: v.Kind == verdict.KindClientCanceled}, false
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		v := verdict.Classify(verdict.Outcome{Status: resp.StatusCode, Header: resp.Header, Body: body, Provider: cand.Conn.Provider.ID, Now: g.clk.Now()})
		finish(v)
		return &failure{v: v}, false
	}
	if req.stream {
		return g.relayStream(w, r, req, cand, ctx, cancel, firstByte, resp, finish)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		v := g.classifyErr(ctx, r, err, cand)
		finish(v)
		return &failure{v: v, clientGone: v.Kind == verdict.KindClientCanceled}, false
	}
	firstByte.Stop()
	h := w.Header()
	h.Set("Content-Type", contentTypeOr(resp.Header.Get("Content-Type"), "application/json"))
	setServedHeaders(h, cand, len(req.attempts)+1)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: resp.StatusCode})
	g.served(req, cand, resp.StatusCode, body)
	return nil, true
}

// classifyErr turns a transport error into a verdict, naming the real cause.
func (g *Gateway) classifyErr(ctx context.Context, r *http.Request, err error, cand routing.Candidate) verdict.Verdict {
	if r.Context().Err() != nil {
		err = context.Canceled
	} else if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		switch {
		case errors.Is(cause, errFirstByteTimeout):
			err = context.DeadlineExceeded
		case errors.Is(cause, verdict.ErrStall):
			err = verdict.ErrStall
		}
	}
	return verdict.Classify(verdict.Outcome{Err: err, Provider: cand.Conn.Provider.ID, Now: g.clk.Now()})
}

func (g *Gateway) served(req *request, cand routing.Candidate, status int, body []byte) {
	req.log.Status = status
	req.log.ConnectionID = cand.Conn.ID
	req.log.Provider = cand.Conn.BreakerKey
	if len(body) > 0 {
		u := gjson.GetBytes(body, "usage")
		req.log.PromptTokens = int(u.Get("prompt_tokens").Int())
		req.log.CompletionTokens = int(u.Get("completion_tokens").Int())
	}
}

func contentTypeOr(ct, def string) string {
	if ct == "" {
		return def
	}
	return ct
}

func itoa(n int) string { return strconv.Itoa(n) }
