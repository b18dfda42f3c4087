package fakeupstream

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The fake Code Assist API (cloudcode-pa v1internal, the Gemini CLI's
// backend) and Vertex AI, written from Google's public descriptions of them:
//
//   - POST /v1internal:loadCodeAssist {"metadata":{…}} answers
//     {"currentTier":{"id":…},"cloudaicompanionProject":"<project>"} for an
//     onboarded account; one that is not (SetCodeAssistOnboarding) gets only
//     allowedTiers (free-tier the default) and no project;
//   - POST /v1internal:onboardUser {"tierId":…,"metadata":{…}} answers the
//     long-running operation {"name":…,"done":true,"response":
//     {"cloudaicompanionProject":{"id":"<project>"}}} (done false the first
//     PendingPolls times);
//   - POST /v1internal:generateContent and
//     :streamGenerateContent?alt=sse take {"model","project","request"}
//     (the request a Gemini GenerateContentRequest; the project the one
//     loadCodeAssist named, else 403 PERMISSION_DENIED; a model in the
//     request or a missing envelope field is a 400) and answer as the fake
//     Gemini API does for the bearer token as key, each answer (each SSE
//     event's data) wrapped as {"response": …, "traceId": …}; errors are
//     Google's bodies, unwrapped;
//   - POST /v1internal:retrieveUserQuota answers {"buckets":[…]} per model.
//
// Vertex AI: POST /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:generateContent
// (and :streamGenerateContent?alt=sse) answer as the Gemini API for the
// bearer token; …/publishers/anthropic/models/{m}:rawPredict and
// :streamRawPredict take a Messages body WITHOUT "model" and with
// "anthropic_version":"vertex-2023-10-16" (else 400) and answer as the
// Anthropic API. A request without a bearer token is 401 UNAUTHENTICATED.
// Project and region of the URL are recorded (LastGoogle).

// CodeAssistProject is the project the fake Code Assist gives every account.
const CodeAssistProject = "fake-companion-project-42"

// CodeAssistQuotaBody is Code Assist's 429 of a used-up daily model quota:
// ErrorInfo QUOTA_EXHAUSTED with the reset in its metadata and a RetryInfo.
const CodeAssistQuotaBody = `{"error":{"code":429,"message":"You have exhausted your capacity on this model. Your quota will reset after 2h36m24s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"QUOTA_EXHAUSTED","domain":"cloudcode-pa.googleapis.com","metadata":{"uiMessage":"true","model":"gemini-2.5-pro","quotaResetDelay":"2h36m24.5s","quotaResetTimeStamp":"2026-01-01T02:36:24Z"}},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"9384.5s"}]}}`

// CodeAssistCapacityBody is Code Assist's 429 when Google has no capacity for a model.
const CodeAssistCapacityBody = `{"error":{"code":429,"message":"No capacity available for model gemini-2.5-pro on the server","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"MODEL_CAPACITY_EXHAUSTED","domain":"cloudcode-pa.googleapis.com","metadata":{"model":"gemini-2.5-pro"}}]}}`

// googleState is what the fake remembers of its Code Assist and Vertex calls.
type googleState struct {
	mu         sync.Mutex
	onboarding bool // accounts start without a project
	onboarded  map[string]bool
	pending    int // onboardUser answers done:false this many times first
	loads      int
	onboards   int
	last       map[string]GoogleCall
}

// GoogleCall is one Code Assist or Vertex call as the fake received it.
type GoogleCall struct {
	Path   string
	Header http.Header
	Body   []byte
}

// SetCodeAssistOnboarding makes accounts start without a Code Assist
// project (loadCodeAssist names none until onboardUser ran for the token),
// with onboardUser's operation pending the first pending times.
func (u *Upstream) SetCodeAssistOnboarding(on bool, pending int) {
	g := u.googleState()
	g.mu.Lock()
	g.onboarding, g.pending = on, pending
	g.mu.Unlock()
}

// CodeAssistLookups counts loadCodeAssist and onboardUser calls.
func (u *Upstream) CodeAssistLookups() (loads, onboards int) {
	g := u.googleState()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.loads, g.onboards
}

// LastGoogle is the last Code Assist or Vertex call made with token.
func (u *Upstream) LastGoogle(token string) (GoogleCall, bool) {
	g := u.googleState()
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.last[token]
	return c, ok
}

func (u *Upstream) googleState() *googleState {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.google == nil {
		u.google = &googleState{onboarded: map[string]bool{}, last: map[string]GoogleCall{}}
	}
	return u.google
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

func (g *googleState) record(token string, r *http.Request, body []byte) {
	g.mu.Lock()
	g.last[token] = GoogleCall{Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
	g.mu.Unlock()
}

// codeAssistCall serves POST /v1internal:{method}.
func (u *Upstream) codeAssistCall(w http.ResponseWriter, r *http.Request) {
	call := r.PathValue("call")
	method, ok := strings.CutPrefix(call, "v1internal:")
	if !ok {
		notFound(w, r)
		return
	}
	token := bearerToken(r)
	body, err := readBody(w, r)
	if err != nil || !gjson.ValidBytes(body) {
		u.writeError(w, http.StatusBadRequest, GeminiInvalidArgumentBody)
		return
	}
	if token == "" {
		u.writeError(w, http.StatusUnauthorized, googleError(401, "UNAUTHENTICATED", "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential."))
		return
	}
	g := u.googleState()
	g.record(token, r, body)
	switch method {
	case "loadCodeAssist":
		g.mu.Lock()
		g.loads++
		has := !g.onboarding || g.onboarded[token]
		g.mu.Unlock()
		if f := u.takeFault(token); f != nil && f.Mode == ModeStatus {
			u.writeStatusFault(w, FormatGemini, f)
			return
		}
		if !gjson.GetBytes(body, "metadata").IsObject() {
			u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "metadata is required"))
			return
		}
		out := map[string]any{"allowedTiers": []any{map[string]any{"id": "free-tier", "name": "Gemini Code Assist for individuals", "isDefault": true},
			map[string]any{"id": "standard-tier", "name": "Gemini Code Assist", "userDefinedCloudaicompanionProject": true}}}
		if has {
			out["currentTier"] = map[string]any{"id": "free-tier", "name": "Gemini Code Assist for individuals"}
			out["cloudaicompanionProject"] = CodeAssistProject
		}
		u.writeJSONAnswer(w, out)
	case "onboardUser":
		g.mu.Lock()
		g.onboards++
		done := g.pending <= 0
		if !done {
			g.pending--
		} else {
			g.onboarded[token] = true
		}
		g.mu.Unlock()
		if tier := gjson.GetBytes(body, "tierId").String(); tier == "" {
			u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "tierId is required"))
			return
		}
		op := map[string]any{"name": "operations/onboard-fake", "done": done}
		if done {
			op["response"] = map[string]any{"@type": "type.googleapis.com/google.internal.cloud.code.v1internal.OnboardUserResponse",
				"cloudaicompanionProject": map[string]any{"id": CodeAssistProject, "name": "Fake companion project"}}
		}
		u.writeJSONAnswer(w, op)
	case "retrieveUserQuota":
		u.writeJSONAnswer(w, map[string]any{"buckets": []any{
			map[string]any{"modelId": "gemini-2.5-pro", "tokenType": "REQUESTS", "remainingFraction": 0.75, "resetTime": "2026-01-02T00:00:00Z"},
			map[string]any{"modelId": "gemini-2.5-flash", "tokenType": "REQUESTS", "remainingFraction": 0.5, "resetTime": "2026-01-02T00:00:00Z"}}})
	case "generateContent", "streamGenerateContent", "countTokens":
		u.codeAssistGenerate(w, r, method, token, body)
	default:
		u.writeError(w, http.StatusNotFound, googleError(404, "NOT_FOUND", "Method not found."))
	}
}

// codeAssistGenerate checks the envelope and answers through the Gemini fake.
func (u *Upstream) codeAssistGenerate(w http.ResponseWriter, r *http.Request, method, token string, body []byte) {
	root := gjson.ParseBytes(body)
	model, project, inner := root.Get("model"), root.Get("project"), root.Get("request")
	switch {
	case model.Type != gjson.String || model.Str == "" || strings.Contains(model.Str, "/"):
		u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "Invalid JSON payload: model must name a model (no models/ prefix)"))
		return
	case !inner.IsObject():
		u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "Invalid JSON payload: request is required"))
		return
	case inner.Get("model").Exists():
		u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", `Invalid JSON payload received. Unknown name "model" at 'request': Cannot find field.`))
		return
	case method != "countTokens" && project.String() != CodeAssistProject:
		u.writeError(w, http.StatusForbidden, googleError(403, "PERMISSION_DENIED", "Permission denied on resource project "+project.String()+"."))
		return
	}
	q := url.Values{}
	if r.URL.Query().Get("alt") == "sse" {
		q.Set("alt", "sse")
	}
	u.delegateGemini(w, r, model.Str, method, token, []byte(inner.Raw), q, true)
}

// delegateGemini answers as the fake Gemini API would for key, with wrap
// putting each answer inside {"response": …}.
func (u *Upstream) delegateGemini(w http.ResponseWriter, r *http.Request, model, method, key string, body []byte, q url.Values, wrap bool) {
	r2 := r.Clone(r.Context())
	r2.URL = &url.URL{Path: "/v1beta/models/" + model + ":" + method, RawQuery: q.Encode()}
	r2.Header = r.Header.Clone()
	r2.Header.Del("Authorization")
	r2.Header.Set("X-Goog-Api-Key", key)
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	r2.SetPathValue("call", model+":"+method)
	if !wrap {
		u.geminiCall(w, r2)
		return
	}
	rw := &wrapWriter{w: w}
	u.geminiCall(rw, r2)
	rw.finish()
}

// takeFault takes the next fault installed for key (nil: none).
func (u *Upstream) takeFault(key string) *Fault {
	u.mu.Lock()
	defer u.mu.Unlock()
	if list := u.faults[key]; len(list) > 0 {
		var f *Fault
		f, u.faults[key] = takeFault(list, "", false)
		return f
	}
	return nil
}

func (u *Upstream) writeJSONAnswer(w http.ResponseWriter, v any) {
	w.Header()["Content-Type"] = u.ctJSON
	_ = json.NewEncoder(w).Encode(v)
}

// wrapWriter wraps a Gemini answer as Code Assist sends it: a 2xx JSON body
// as {"response": body, "traceId": …}; each event of an SSE stream as
// "data: {"response": data, "traceId": …}". Error bodies pass unchanged.
type wrapWriter struct {
	w      http.ResponseWriter
	status int
	sse    bool
	buf    []byte
}

func (x *wrapWriter) Header() http.Header { return x.w.Header() }

func (x *wrapWriter) WriteHeader(status int) {
	if x.status != 0 {
		return
	}
	x.status = status
	x.sse = strings.HasPrefix(x.w.Header().Get("Content-Type"), "text/event-stream")
	if !x.sse || status != http.StatusOK {
		x.w.Header().Del("Content-Length")
	}
	if x.sse || status != http.StatusOK {
		x.w.WriteHeader(status)
	}
}

func (x *wrapWriter) Write(b []byte) (int, error) {
	if x.status == 0 {
		x.WriteHeader(http.StatusOK)
	}
	if x.status != http.StatusOK {
		return x.w.Write(b)
	}
	x.buf = append(x.buf, b...)
	if x.sse {
		return len(b), x.flushEvents()
	}
	return len(b), nil
}

func wrapped(data []byte) []byte {
	out, _ := sjson.SetRawBytes([]byte(`{"traceId":"fake-trace"}`), "response", bytes.TrimSpace(data))
	return out
}

// flushEvents writes every complete event buffered so far.
func (x *wrapWriter) flushEvents() error {
	for {
		i := bytes.Index(x.buf, []byte("\n\n"))
		j := bytes.Index(x.buf, []byte("\r\n\r\n"))
		end, n := i, 2
		if j >= 0 && (i < 0 || j < i) {
			end, n = j, 4
		}
		if end < 0 {
			return nil
		}
		ev := x.buf[:end]
		x.buf = x.buf[end+n:]
		var data []byte
		sc := bufio.NewScanner(bytes.NewReader(ev))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(strings.TrimRight(sc.Text(), "\r"), "data:"); ok {
				data = append(data, strings.TrimPrefix(d, " ")...)
			}
		}
		if len(data) == 0 {
			continue
		}
		if _, err := x.w.Write(append(append([]byte("data: "), wrapped(data)...), "\r\n\r\n"...)); err != nil {
			return err
		}
		if fl, ok := x.w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

func (x *wrapWriter) Flush() {
	if fl, ok := x.w.(http.Flusher); ok && x.sse {
		fl.Flush()
	}
}

// Hijack passes a fault's connection cut through.
func (x *wrapWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if hj, ok := x.w.(http.Hijacker); ok {
		return hj.Hijack()
	}
	return nil, nil, http.ErrNotSupported
}

// finish writes a buffered JSON answer, wrapped.
func (x *wrapWriter) finish() {
	if x.status == http.StatusOK && !x.sse {
		out := wrapped(x.buf)
		x.w.Header().Set("Content-Length", fmt.Sprint(len(out)))
		x.w.WriteHeader(http.StatusOK)
		_, _ = x.w.Write(out)
	}
}

// vertexCall serves POST /v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{call}.
func (u *Upstream) vertexCall(w http.ResponseWriter, r *http.Request) {
	token := bearerToken(r)
	body, err := readBody(w, r)
	if err != nil {
		u.writeError(w, http.StatusBadRequest, GeminiInvalidArgumentBody)
		return
	}
	if token == "" {
		u.writeError(w, http.StatusUnauthorized, googleError(401, "UNAUTHENTICATED", "Request is missing required authentication credential."))
		return
	}
	u.googleState().record(token, r, body)
	call := r.PathValue("call")
	i := strings.LastIndexByte(call, ':')
	if i <= 0 {
		u.writeError(w, http.StatusNotFound, googleError(404, "NOT_FOUND", "Requested entity was not found."))
		return
	}
	model, method := call[:i], call[i+1:]
	switch pub := r.PathValue("publisher"); {
	case pub == "google" && (method == "generateContent" || method == "streamGenerateContent" || method == "countTokens"):
		q := url.Values{}
		if r.URL.Query().Get("alt") == "sse" {
			q.Set("alt", "sse")
		}
		u.delegateGemini(w, r, model, method, token, body, q, false)
	case pub == "anthropic" && (method == "rawPredict" || method == "streamRawPredict"):
		root := gjson.ParseBytes(body)
		if !gjson.ValidBytes(body) || root.Get("model").Exists() || root.Get("anthropic_version").String() != "vertex-2023-10-16" {
			u.writeError(w, http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"anthropic_version: must be vertex-2023-10-16, and model is not allowed in the body"}}`)
			return
		}
		if (method == "streamRawPredict") != root.Get("stream").Bool() {
			u.writeError(w, http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"streamRawPredict takes stream: true, rawPredict does not"}}`)
			return
		}
		inner, _ := sjson.DeleteBytes(body, "anthropic_version")
		inner, _ = sjson.SetBytes(inner, "model", model)
		r2 := r.Clone(r.Context())
		r2.URL = &url.URL{Path: "/v1/messages"}
		r2.Body = io.NopCloser(bytes.NewReader(inner))
		r2.ContentLength = int64(len(inner))
		u.completion(FormatAnthropic)(w, r2)
	default:
		u.writeError(w, http.StatusNotFound, googleError(404, "NOT_FOUND", "Publisher model "+r.PathValue("publisher")+"/"+model+" method "+method+" was not found."))
	}
}

// ServiceAccountKey is a generated Google service-account key file.
type ServiceAccountKey struct {
	JSON  string
	Email string
	Key   *rsa.PrivateKey
}

// NewServiceAccountKey generates an RSA key and the key file JSON a Google
// Cloud console download holds (type service_account, PKCS#8 PEM), naming
// project and tokenURI.
func NewServiceAccountKey(project, tokenURI string) (ServiceAccountKey, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return ServiceAccountKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return ServiceAccountKey{}, err
	}
	email := "omniroute-test@" + project + ".iam.gserviceaccount.com"
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": project, "private_key_id": "fake-key-id-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "100000000000000000001", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
		"token_uri": tokenURI, "universe_domain": "googleapis.com"})
	return ServiceAccountKey{JSON: string(b), Email: email, Key: k}, nil
}

// JWTTokenServer is a fake Google token endpoint for service accounts: the
// JWT bearer grant (grant_type urn:ietf:params:oauth:grant-type:jwt-bearer,
// assertion). It verifies the assertion's RS256 signature with the public
// key of the one service account it knows, and its claims (iss the account,
// aud this endpoint's URL, the cloud-platform scope, exp after iat by at
// most an hour), then issues "ya29.vertex-N" tokens valid ExpiresIn seconds.
type JWTTokenServer struct {
	srv   *httptest.Server
	email string
	pub   *rsa.PublicKey

	mu        sync.Mutex
	calls     int
	issued    int
	refused   int
	ExpiresIn int
	release   chan struct{}
}

// NewJWTTokenServer starts a token endpoint that trusts the key of sa.
func NewJWTTokenServer(email string, pub *rsa.PublicKey) *JWTTokenServer {
	t := &JWTTokenServer{email: email, pub: pub, ExpiresIn: 3599}
	t.srv = httptest.NewServer(http.HandlerFunc(t.serve))
	return t
}

// URL is the token endpoint's URL.
func (t *JWTTokenServer) URL() string { return t.srv.URL + "/token" }

// Close stops the server.
func (t *JWTTokenServer) Close() { t.srv.Close() }

// Calls counts requests; Refused those refused.
func (t *JWTTokenServer) Calls() (calls, refused int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls, t.refused
}

// Trust replaces the trusted key (a rotated or deleted key).
func (t *JWTTokenServer) Trust(pub *rsa.PublicKey) {
	t.mu.Lock()
	t.pub = pub
	t.mu.Unlock()
}

// Hold makes exchanges wait until the returned release is called.
func (t *JWTTokenServer) Hold() (release func()) {
	ch := make(chan struct{})
	t.mu.Lock()
	t.release = ch
	t.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (t *JWTTokenServer) serve(w http.ResponseWriter, r *http.Request) {
	t.mu.Lock()
	t.calls++
	hold, pub := t.release, t.pub
	t.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	form, _ := url.ParseQuery(string(raw))
	refuse := func(code, desc string) {
		t.mu.Lock()
		t.refused++
		t.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/token" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		refuse("invalid_request", "POST a form to /token")
		return
	}
	if form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		refuse("unsupported_grant_type", "Invalid grant_type: "+form.Get("grant_type"))
		return
	}
	if msg := t.verify(form.Get("assertion"), pub); msg != "" {
		refuse("invalid_grant", msg)
		return
	}
	t.mu.Lock()
	t.issued++
	n := t.issued
	t.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("ya29.vertex-%d", n), "expires_in": t.ExpiresIn, "token_type": "Bearer"})
}

// verify checks an assertion; it returns what is wrong ("" : nothing).
func (t *JWTTokenServer) verify(jwt string, pub *rsa.PublicKey) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "Invalid JWT: not three parts"
	}
	enc := base64.RawURLEncoding
	hdr, err1 := enc.DecodeString(parts[0])
	claims, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return "Invalid JWT: bad base64url"
	}
	if gjson.GetBytes(hdr, "alg").String() != "RS256" {
		return "Invalid JWT: alg must be RS256"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil {
		return "Invalid JWT Signature."
	}
	c := gjson.ParseBytes(claims)
	iat, exp := c.Get("iat").Int(), c.Get("exp").Int()
	switch {
	case c.Get("iss").String() != t.email:
		return "Invalid JWT: iss is not the service account"
	case c.Get("aud").String() != t.URL():
		return "Invalid JWT: aud must be the token URL"
	case !strings.Contains(" "+c.Get("scope").String()+" ", " https://www.googleapis.com/auth/cloud-platform "):
		return "Invalid JWT: scope"
	case iat <= 0 || exp <= iat || exp-iat > 3600:
		return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
	}
	return ""
}
