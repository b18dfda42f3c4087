package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// NewJSONRequest builds an upstream POST from scratch: the body's "model" is
// rewritten to the target's model (in place of a full decode), and only the
// headers every wire format shares are set, then the provider's and the
// call's extra headers, then own (the executor's headers, pairs of canonical
// name and value, e.g. its credential, which replace any of the same name);
// no client header is copied. The shared headers and own take one allocation
// for all their values. (Requests.JSON builds the same request without
// parsing the URL each time.)
func NewJSONRequest(ctx context.Context, t *Target, c Call, path, userAgent string, own ...string) (*http.Request, error) {
	var r Requests
	return r.JSON(ctx, t, c, path, userAgent, Credential{}, own...)
}

// Requests builds an executor's upstream requests, keeping each endpoint's
// parsed URL (base URL and path) so a request copies it instead of joining
// and parsing the URL again. The zero value is ready; it is safe for
// concurrent use.
type Requests struct {
	mu   sync.RWMutex
	urls map[endpoint]*url.URL
}

type endpoint struct{ base, path string }

// maxEndpoints bounds the URL cache (base URLs change only when connections
// are edited); past it the cache starts over.
const maxEndpoints = 1024

// url returns base+path parsed, as http.NewRequest makes it: the cached
// value, which the caller copies and never modifies.
func (r *Requests) url(base, path string) (*url.URL, error) {
	k := endpoint{base, path}
	r.mu.RLock()
	u, ok := r.urls[k]
	r.mu.RUnlock()
	if !ok {
		var err error
		if u, err = url.Parse(strings.TrimRight(base, "/") + path); err != nil {
			return nil, err
		}
		u.Host = removeEmptyPort(u.Host)
		r.mu.Lock()
		if r.urls == nil || len(r.urls) >= maxEndpoints {
			r.urls = map[endpoint]*url.URL{}
		}
		r.urls[k] = u
		r.mu.Unlock()
	}
	return u, nil
}

// removeEmptyPort strips an empty port ("host:") as http.NewRequest does.
func removeEmptyPort(host string) string {
	if strings.LastIndex(host, ":") > strings.LastIndex(host, "]") {
		return strings.TrimSuffix(host, ":")
	}
	return host
}

// Credential is the header carrying an executor's secret, Name: Prefix+Secret
// (Authorization: Bearer <token>); the zero Credential sends none.
type Credential struct{ Name, Prefix, Secret string }

// JSON is NewJSONRequest with the endpoint's URL parsed once and the
// executor's credential header cred (set last, replacing any of its name).
// The request's URL, header values, credential header and body reader share
// one allocation.
func (r *Requests) JSON(ctx context.Context, t *Target, c Call, path, userAgent string, cred Credential, own ...string) (*http.Request, error) {
	body, err := modelSplice(c.Body, t.Model)
	if err != nil {
		return nil, err
	}
	return r.build(ctx, t, &c, body, path, userAgent, cred, own)
}

// Raw is JSON for a wire whose body names no model (Gemini puts it in the
// URL path): the body is sent exactly as given, no "model" is added.
func (r *Requests) Raw(ctx context.Context, t *Target, c Call, path, userAgent string, cred Credential, own ...string) (*http.Request, error) {
	return r.build(ctx, t, &c, splice{c.Body}, path, userAgent, cred, own)
}

// build is JSON once the body is spliced. Out of line, so the JSON scan of
// modelSplice runs on a small frame (a streaming request's stack stays small).
//
//go:noinline
func (r *Requests) build(ctx context.Context, t *Target, c *Call, body splice, path, userAgent string, cred Credential, own []string) (*http.Request, error) {
	u, err := r.url(t.BaseURL, path)
	if err != nil {
		return nil, err
	}
	pc := c.Storage.take()
	pc.url = *u // each request owns its URL, as with http.NewRequest
	u = &pc.url
	h := make(http.Header, 4+len(own)/2+len(t.Provider.ExtraHeaders)+len(c.Header))
	accept := "application/json"
	if c.Stream {
		accept = "text/event-stream"
	}
	vals := pc.vals[:]
	if n := 4 + len(own)/2; n > len(vals) {
		vals = make([]string, n)
	}
	vals[0], vals[1], vals[2] = "application/json", accept, userAgent
	h["Content-Type"] = vals[0:1:1]
	h["Accept"] = vals[1:2:2]
	h["User-Agent"] = vals[2:3:3]
	for k, v := range t.Provider.ExtraHeaders {
		h.Set(k, v)
	}
	// The call's own extra headers (e.g. the usage wall's anthropic-usage-limit).
	for k, vs := range c.Header {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	// The executor's own last: they replace any of the same name above.
	for i := 0; i+1 < len(own); i += 2 {
		j := 4 + i/2
		vals[j] = own[i+1]
		h[own[i]] = vals[j : j+1 : j+1]
	}
	if cred.Name != "" && cred.Secret != "" {
		vals[3] = pc.credential(cred.Prefix, cred.Secret)
		h[cred.Name] = vals[3:4:4]
	}
	req := &http.Request{Method: http.MethodPost, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: u.Host, ContentLength: int64(body.len())}
	if body.len() == 0 {
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	} else {
		rb := &pc.body
		rb.reset(body)
		req.Body, req.GetBody = rb, rb.again
	}
	return req.WithContext(ctx), nil
}

// CallStorage is room for one upstream request's storage in the caller's
// own memory (the gateway keeps one in each attempt), which saves the
// request an allocation. The first request built with it takes it; any
// later request of the same call gets its own.
type CallStorage struct {
	s    callStorage
	used bool
}

// take returns the storage if it is unused, else a new one.
func (cs *CallStorage) take() *callStorage {
	if cs == nil || cs.used {
		return new(callStorage)
	}
	cs.used = true
	return &cs.s
}

// callStorage is one upstream request's own storage, allocated once: its
// URL, its header values, the bytes of its credential header and its body
// reader. Nothing in it is modified after the request is built.
type callStorage struct {
	body requestBody
	url  url.URL
	vals [6]string
	cred [256]byte
}

// credential is prefix+secret, in the storage when it fits.
func (pc *callStorage) credential(prefix, secret string) string {
	if len(prefix)+len(secret) > len(pc.cred) {
		return prefix + secret
	}
	b := append(append(pc.cred[:0], prefix...), secret...)
	return unsafe.String(unsafe.SliceData(b), len(b)) // pc.cred is written once, here
}

// splice is a request body in three parts read one after the other: the
// client's bytes before the value of "model", the target's model name, the
// client's bytes after it. The body sent is thus the client's with the name
// replaced, without a copy of it (docs/BENCHMARKS.md, issue 19).
type splice [3][]byte

func (b splice) len() int { return len(b[0]) + len(b[1]) + len(b[2]) }

// requestBody is an upstream request body: its own io.ReadCloser (no
// io.NopCloser around a bytes.Reader) reading a splice, that gives the
// transport a fresh copy when it must send the request again on another
// connection (GetBody). Nothing it reads is modified.
type requestBody struct {
	b    splice
	part int // the part being read
	off  int // in it
}

func (rb *requestBody) reset(b splice) {
	*rb = requestBody{b: b}
}

// Read implements io.Reader.
func (rb *requestBody) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && rb.part < len(rb.b) {
		c := copy(p[n:], rb.b[rb.part][rb.off:])
		n, rb.off = n+c, rb.off+c
		if rb.off == len(rb.b[rb.part]) {
			rb.part, rb.off = rb.part+1, 0
		}
	}
	if n == 0 && rb.part == len(rb.b) && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Close implements io.Closer.
func (*requestBody) Close() error { return nil }

func (rb *requestBody) again() (io.ReadCloser, error) {
	fresh := new(requestBody)
	fresh.reset(rb.b)
	return fresh, nil
}

// withModel returns body with its top-level "model" set to model, in one
// slice (modelSplice without the splice).
func withModel(body []byte, model string) ([]byte, error) {
	b, err := modelSplice(body, model)
	if err != nil || b[1] == nil {
		return b[0], err
	}
	return bytes.Join(b[:], nil), nil
}

// modelSplice returns body with its top-level "model" set to model. The common
// case, a string model and a plain name, splices the new value in place of the
// old one without a copy, leaving every other byte as the client sent it;
// other cases go through sjson. The body is never modified (it may be
// retried), nor the model's bytes.
func modelSplice(body []byte, model string) (splice, error) {
	// Read through a view of body (no copy of the value): nothing here keeps
	// a string from it, and body is never modified.
	old := gjson.Get(unsafe.String(unsafe.SliceData(body), len(body)), "model")
	if old.Type == gjson.String && old.Str == model {
		return splice{body}, nil
	}
	if old.Type != gjson.String || old.Index <= 0 || !plainJSONString(model) || model == "" {
		out, err := sjson.SetBytes(body, "model", model)
		return splice{out}, err
	}
	// The old value's quotes stay: the name goes between them.
	return splice{body[:old.Index+1], unsafe.Slice(unsafe.StringData(model), len(model)), body[old.Index+len(old.Raw)-1:]}, nil
}

// plainJSONString reports whether s needs no escaping inside a JSON string.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// NewListRequest builds a GET of a provider's list (models, deployments) at
// rawURL: JSON accepted, the gateway's User-Agent and the provider's extra
// headers; the caller adds the credential.
func NewListRequest(ctx context.Context, t *Target, rawURL, userAgent string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Accept", "application/json")
	h.Set("User-Agent", userAgent)
	for k, v := range t.Provider.ExtraHeaders {
		h.Set(k, v)
	}
	return req, nil
}
