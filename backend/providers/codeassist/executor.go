// Package codeassist is the executor for Google's Code Assist API
// (cloudcode-pa.googleapis.com), the backend the Gemini CLI calls with a
// Google login (gemini-cli connections):
//
//   - POST <base>/v1internal:generateContent, or
//     :streamGenerateContent?alt=sse for a stream, with the OAuth access
//     token as a bearer;
//   - the body is the Gemini GenerateContentRequest the gateway built (see
//     backend/translate/gemini) inside an envelope {model, project, request};
//   - the answer is a GenerateContentResponse inside {response: …} (each SSE
//     event's data too), which the executor unwraps, so the gateway reads the
//     plain Gemini wire;
//   - the project is the connection's providerSpecificData.projectId, else
//     what POST v1internal:loadCodeAssist names (cloudaicompanionProject),
//     else the one POST v1internal:onboardUser gives the account on its
//     default tier (a long-running operation, asked again until done), as the
//     CLI does on its first start. The project found is kept per connection.
//
// Errors are Google's own bodies ({"error":{code, status, details}}), passed
// on unchanged for the classifier (RetryInfo, QUOTA_EXHAUSTED, …).
package codeassist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/sync/singleflight"

	"omniroute/backend/providers"
	"omniroute/backend/translate/sse"
)

// API paths under the base URL.
const (
	pathGenerate = "/v1internal:generateContent"
	pathStream   = "/v1internal:streamGenerateContent?alt=sse"
	pathLoad     = "/v1internal:loadCodeAssist"
	pathOnboard  = "/v1internal:onboardUser"
	pathQuota    = "/v1internal:retrieveUserQuota"
)

// Limits of the project lookup.
const (
	// maxOnboardPolls bounds how often onboardUser is asked while its
	// operation is not done.
	maxOnboardPolls = 10
	// lookupTimeout bounds the whole lookup (it is shared by every request
	// waiting on it, so no one request's context ends it).
	lookupTimeout = 60 * time.Second
	// maxAnswer bounds a non-streamed answer read to unwrap it.
	maxAnswer = 64 << 20
	// maxSmall bounds the lookup calls' answers.
	maxSmall = 1 << 20
)

// metadata is the client metadata the CLI sends with loadCodeAssist and onboardUser.
const metadata = `{"ideType":"IDE_UNSPECIFIED","platform":"PLATFORM_UNSPECIFIED","pluginType":"GEMINI"}`

// Executor posts Code Assist requests; it keeps the project found per connection.
type Executor struct {
	client    providers.Doer
	userAgent string
	reqs      providers.Requests
	// PollWait is the wait between onboardUser polls.
	PollWait time.Duration
	// Sleep waits d or until ctx ends (tests replace it).
	Sleep func(ctx context.Context, d time.Duration) error

	group    singleflight.Group
	mu       sync.Mutex
	projects map[string]string // connection id → project
}

// New returns an executor using client.
func New(client providers.Doer, userAgent string) *Executor {
	return &Executor{client: client, userAgent: userAgent, PollWait: 2 * time.Second, Sleep: sleepCtx,
		projects: map[string]string{}}
}

// errModel is returned for a model name that cannot be sent.
var errModel = errors.New("codeassist: the model name cannot be used in a Code Assist request")

// Model is the bare model name of t.Model ("models/" dropped), checked.
func Model(model string) (string, error) {
	model = strings.TrimPrefix(model, "models/")
	if model == "" || strings.ContainsAny(model, "/?#%:\"\\") || url.PathEscape(model) != model {
		return "", errModel
	}
	return model, nil
}

// Envelope wraps a Gemini request body: {"model":…,"project":…,"request":body}.
func Envelope(model, project string, body []byte) []byte {
	m, _ := json.Marshal(model)
	p, _ := json.Marshal(project)
	out := make([]byte, 0, len(body)+len(m)+len(p)+40)
	out = append(out, `{"model":`...)
	out = append(out, m...)
	out = append(out, `,"project":`...)
	out = append(out, p...)
	out = append(out, `,"request":`...)
	out = append(out, body...)
	return append(out, '}')
}

// Unwrap returns the Gemini response inside a Code Assist answer
// ({"response":{…}}); an answer without one is returned as it is.
func Unwrap(raw []byte) []byte {
	if r := gjson.GetBytes(raw, "response"); r.IsObject() {
		return []byte(r.Raw)
	}
	return raw
}

// Do sends the call: the project first (once per connection), then the
// enveloped request; the answer comes back unwrapped.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	model, err := Model(t.Model)
	if err != nil {
		return nil, err
	}
	project, refusal, err := e.Project(ctx, t)
	if err != nil || refusal != nil {
		return refusal, err
	}
	path := pathGenerate
	if c.Stream {
		path = pathStream
	}
	up := providers.Call{Body: Envelope(model, project, c.Body), Stream: c.Stream, Header: c.Header,
		FirstByteDeadline: c.FirstByteDeadline, Storage: c.Storage}
	req, err := e.reqs.Raw(ctx, t, up, path, e.userAgent, bearer(t.Secret))
	if err != nil {
		return nil, err
	}
	resp, err := e.client.Do(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &unwrapStream{body: resp.Body}
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		return resp, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	return replaceBody(resp, Unwrap(raw)), nil
}

func bearer(tok string) providers.Credential {
	return providers.Credential{Name: "Authorization", Prefix: "Bearer ", Secret: tok}
}

// answer is an upstream refusal of a lookup call, kept to hand each waiting
// request its own copy.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// lookup is a project lookup's outcome: a project, or the refusal.
type lookup struct {
	project string
	refusal *answer
}

// Project is the Code Assist project of t's connection: the one set on the
// connection, else the one found before, else looked up (single-flight per
// connection). A lookup call the upstream refuses (401, 403, 429, …) comes
// back as that answer, for the gateway to classify like any other.
func (e *Executor) Project(ctx context.Context, t *providers.Target) (string, *http.Response, error) {
	if t.Google.Project != "" {
		return t.Google.Project, nil, nil
	}
	e.mu.Lock()
	p, ok := e.projects[t.ConnectionID]
	e.mu.Unlock()
	if ok {
		return p, nil, nil
	}
	tt := *t
	ch := e.group.DoChan(t.ConnectionID, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
		defer cancel()
		l, err := e.lookup(lctx, &tt)
		if err == nil && l.project != "" {
			e.mu.Lock()
			e.projects[tt.ConnectionID] = l.project
			e.mu.Unlock()
		}
		return l, err
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", nil, res.Err
		}
		l := res.Val.(lookup)
		if l.refusal != nil {
			a := l.refusal
			return "", &http.Response{Status: http.StatusText(a.status), StatusCode: a.status, Header: a.header.Clone(),
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, ContentLength: int64(len(a.body)),
				Body: io.NopCloser(bytes.NewReader(a.body))}, nil
		}
		return l.project, nil, nil
	case <-ctx.Done():
		return "", nil, context.Cause(ctx)
	}
}

// lookup asks loadCodeAssist, then onboardUser when the account has no
// project yet.
func (e *Executor) lookup(ctx context.Context, t *providers.Target) (lookup, error) {
	raw, refusal, err := e.post(ctx, t, pathLoad, []byte(`{"metadata":`+metadata+`}`))
	if err != nil || refusal != nil {
		return lookup{refusal: refusal}, err
	}
	root := gjson.ParseBytes(raw)
	if p := projectOf(root.Get("cloudaicompanionProject")); p != "" {
		return lookup{project: p}, nil
	}
	tier := root.Get("currentTier.id").String()
	if tier == "" {
		root.Get("allowedTiers").ForEach(func(_, v gjson.Result) bool {
			if v.Get("isDefault").Bool() {
				tier = v.Get("id").String()
				return false
			}
			return true
		})
	}
	if tier == "" {
		tier = "legacy-tier"
	}
	tb, _ := json.Marshal(tier)
	body := []byte(`{"tierId":` + string(tb) + `,"metadata":` + metadata + `}`)
	for i := range maxOnboardPolls {
		if i > 0 {
			if err := e.Sleep(ctx, e.PollWait); err != nil {
				return lookup{}, err
			}
		}
		raw, refusal, err := e.post(ctx, t, pathOnboard, body)
		if err != nil || refusal != nil {
			return lookup{refusal: refusal}, err
		}
		op := gjson.ParseBytes(raw)
		if !op.Get("done").Bool() {
			continue
		}
		if p := projectOf(op.Get("response.cloudaicompanionProject")); p != "" {
			return lookup{project: p}, nil
		}
		break
	}
	return lookup{refusal: noProject()}, nil
}

// projectOf reads a project as loadCodeAssist (a string) or onboardUser
// (an object with an id) names it.
func projectOf(r gjson.Result) string {
	if r.Type == gjson.String {
		return strings.TrimSpace(r.Str)
	}
	return strings.TrimSpace(r.Get("id").String())
}

// noProject is the refusal of an account Code Assist gives no project: a
// 403 in Google's shape, which says what to do.
func noProject() *answer {
	body := `{"error":{"code":403,"message":"Code Assist found no Google Cloud project for this account and could not onboard it; set providerSpecificData.projectId on the connection (the project the Gemini CLI uses, GOOGLE_CLOUD_PROJECT)","status":"PERMISSION_DENIED"}}`
	return &answer{status: http.StatusForbidden, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(body)}
}

// post sends one small JSON call and reads its answer: the body of a 2xx,
// else the refusal.
func (e *Executor) post(ctx context.Context, t *providers.Target, path string, body []byte) ([]byte, *answer, error) {
	req, err := e.reqs.Raw(ctx, t, providers.Call{Body: body}, path, e.userAgent, bearer(t.Secret))
	if err != nil {
		return nil, nil, err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxSmall))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &answer{status: resp.StatusCode, header: resp.Header.Clone(), body: raw}, nil
	}
	if !gjson.ValidBytes(raw) {
		return nil, nil, errors.New("codeassist: " + strings.TrimPrefix(path, "/v1internal:") + " answered something other than JSON")
	}
	return raw, nil, nil
}

// replaceBody is resp with body as its (whole) body.
func replaceBody(resp *http.Response, body []byte) *http.Response {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp
}

// unwrapStream reads a Code Assist SSE stream and yields the same events
// with each data's {"response": …} unwrapped ("data: <response>\n\n").
// Comments and other fields are dropped; an upstream read error (a cut
// stream) is passed on after the complete events before it.
type unwrapStream struct {
	body io.ReadCloser
	p    sse.Parser
	out  []byte
	off  int
	buf  [32 << 10]byte
	err  error
}

func (u *unwrapStream) Read(b []byte) (int, error) {
	for u.off == len(u.out) {
		if u.err != nil {
			return 0, u.err
		}
		u.out, u.off = u.out[:0], 0
		n, err := u.body.Read(u.buf[:])
		if n > 0 {
			if perr := u.p.Feed(u.buf[:n], u.emit); perr != nil {
				err = perr
			}
		}
		if err == io.EOF {
			u.p.Flush(u.emit)
		}
		u.err = err
	}
	n := copy(b, u.out[u.off:])
	u.off += n
	return n, nil
}

func (u *unwrapStream) emit(ev sse.Event) bool {
	if ev.Comment || len(bytes.TrimSpace(ev.Data)) == 0 {
		return true
	}
	u.out = append(u.out, "data: "...)
	u.out = append(u.out, Unwrap(ev.Data)...)
	u.out = append(u.out, "\n\n"...)
	return true
}

func (u *unwrapStream) Close() error { return u.body.Close() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// Bucket is one quota of a Code Assist account as retrieveUserQuota names
// it: a model's share left (0..1) of a window that resets at ResetsAt.
type Bucket struct {
	Model     string
	TokenType string
	Remaining float64
	ResetsAt  time.Time
}

// Quota asks POST v1internal:retrieveUserQuota {"project": …} for the
// account's buckets (the usage the Gemini CLI's /stats shows). A refusal
// comes back as its status.
func (e *Executor) Quota(ctx context.Context, t *providers.Target) ([]Bucket, int, error) {
	project, refusal, err := e.Project(ctx, t)
	if err != nil {
		return nil, 0, err
	}
	if refusal != nil {
		refusal.Body.Close()
		return nil, refusal.StatusCode, nil
	}
	pb, _ := json.Marshal(project)
	raw, ans, err := e.post(ctx, t, pathQuota, []byte(`{"project":`+string(pb)+`}`))
	if err != nil || ans != nil {
		if ans != nil {
			return nil, ans.status, nil
		}
		return nil, 0, err
	}
	var out []Bucket
	gjson.GetBytes(raw, "buckets").ForEach(func(_, b gjson.Result) bool {
		rf := b.Get("remainingFraction")
		if rf.Type != gjson.Number {
			return true
		}
		bk := Bucket{Model: b.Get("modelId").String(), TokenType: b.Get("tokenType").String(), Remaining: min(max(rf.Float(), 0), 1)}
		if at, err := time.Parse(time.RFC3339, b.Get("resetTime").String()); err == nil {
			bk.ResetsAt = at
		}
		out = append(out, bk)
		return true
	})
	return out, http.StatusOK, nil
}
