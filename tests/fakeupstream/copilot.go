package fakeupstream

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Copilot fakes GitHub Copilot as its public clients describe it:
//
//   - GitHub's device flow: POST /login/device/code (form: client_id,
//     scope) answers {device_code, user_code, verification_uri, expires_in,
//     interval}; POST /login/oauth/access_token (form: client_id,
//     device_code, grant_type=urn:ietf:params:oauth:grant-type:device_code)
//     answers HTTP 200 {"error":"authorization_pending"} until Approve,
//     {"error":"access_denied"} after Deny, then {access_token, token_type,
//     scope}. Both need Accept: application/json.
//   - GET /user with "Authorization: token <GitHub token>": {login, id}.
//   - The Copilot token exchange, GET /copilot_internal/v2/token with
//     "Authorization: token <GitHub token>": {token, expires_at (unix s),
//     refresh_in, endpoints:{api}}; 401 for another token, 403 when the
//     account has no seat (SetEntitled(false)). endpoints.api is this
//     server, whose POST /chat/completions and GET /models take
//     "Authorization: Bearer <Copilot token>" while that token is unexpired
//     (else 401 "unauthorized: token expired") and refuse a request without
//     the Editor-Version and Copilot-Integration-Id headers (400). The
//     answers are the Upstream's (keyed by the Copilot token: Content(token)).
//
// SetTokenTTL sets the lifetime of the tokens issued next (negative: issued
// already expired); Hold parks exchanges so concurrent callers pile up.
type Copilot struct {
	up       *Upstream
	srv      *httptest.Server
	clientID string

	mu         sync.Mutex
	deviceCode string
	userCode   string
	approved   bool
	denied     bool
	polls      int
	github     string
	entitled   bool
	ttl        time.Duration
	exchanges  int
	issued     int
	valid      map[string]time.Time
	hold       chan struct{}
	lastHeader http.Header
}

// CopilotUserCode is the code the fake's device flow shows.
const CopilotUserCode = "WDJB-MJHT"

// CopilotLogin and CopilotUserID name the fake's GitHub account.
const (
	CopilotLogin  = "octo-e2e"
	CopilotUserID = 4242
)

// NewCopilot starts the fake on loopback; up answers its chat and models
// (nil: a new Upstream). It accepts the device flow of clientID only and
// hands out the GitHub token githubToken.
func NewCopilot(up *Upstream, clientID, githubToken string) *Copilot {
	if up == nil {
		up = New()
	}
	c := &Copilot{up: up, clientID: clientID, github: githubToken, entitled: true, ttl: 30 * time.Minute,
		deviceCode: "dc-" + githubToken, userCode: CopilotUserCode, valid: map[string]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login/device/code", c.deviceCodeRoute)
	mux.HandleFunc("POST /login/oauth/access_token", c.accessTokenRoute)
	mux.HandleFunc("GET /user", c.userRoute)
	mux.HandleFunc("GET /copilot_internal/v2/token", c.tokenRoute)
	mux.HandleFunc("POST /chat/completions", c.chatRoute(up.completion(FormatOpenAI)))
	mux.HandleFunc("GET /models", c.chatRoute(up.listModels))
	mux.HandleFunc("/", notFound)
	// Unstarted first: the handlers read c.srv, which must be set before the
	// first request can arrive.
	c.srv = httptest.NewUnstartedServer(mux)
	c.srv.Start()
	return c
}

// URL is the fake's base URL (GitHub, the API and the Copilot endpoint at once).
func (c *Copilot) URL() string { return c.srv.URL }

// Env points a gateway's GitHub Copilot login and token exchange at the fake.
func (c *Copilot) Env() []string {
	return []string{
		"OMNIROUTE_GITHUB_COPILOT_OAUTH_DEVICE_CODE_URL=" + c.srv.URL + "/login/device/code",
		"OMNIROUTE_GITHUB_COPILOT_OAUTH_ACCESS_TOKEN_URL=" + c.srv.URL + "/login/oauth/access_token",
		"OMNIROUTE_GITHUB_COPILOT_OAUTH_USER_URL=" + c.srv.URL + "/user",
		"OMNIROUTE_GITHUB_COPILOT_OAUTH_TOKEN_URL=" + c.srv.URL + "/copilot_internal/v2/token",
		"OMNIROUTE_GITHUB_COPILOT_OAUTH_CLIENT_ID=" + c.clientID,
	}
}

// Close stops the server (the Upstream is the caller's).
func (c *Copilot) Close() {
	c.mu.Lock()
	if c.hold != nil {
		close(c.hold)
		c.hold = nil
	}
	c.mu.Unlock()
	c.srv.Close()
}

// Approve makes the next device poll hand over the GitHub token.
func (c *Copilot) Approve() { c.mu.Lock(); c.approved = true; c.mu.Unlock() }

// Deny makes the next device poll answer access_denied.
func (c *Copilot) Deny() { c.mu.Lock(); c.denied = true; c.mu.Unlock() }

// SetEntitled says whether the account has a Copilot seat.
func (c *Copilot) SetEntitled(ok bool) { c.mu.Lock(); c.entitled = ok; c.mu.Unlock() }

// SetTokenTTL sets the lifetime of the Copilot tokens issued next.
func (c *Copilot) SetTokenTTL(d time.Duration) { c.mu.Lock(); c.ttl = d; c.mu.Unlock() }

// Polls is how many device polls reached the fake.
func (c *Copilot) Polls() int { c.mu.Lock(); defer c.mu.Unlock(); return c.polls }

// Exchanges is how many Copilot token exchanges reached the fake.
func (c *Copilot) Exchanges() int { c.mu.Lock(); defer c.mu.Unlock(); return c.exchanges }

// CopilotTokenN is the n-th Copilot token issued (1-based).
func CopilotTokenN(n int) string { return fmt.Sprintf("cpt-%d;exp=fake;proxy-ep=fake", n) }

// Revoke makes every Copilot token issued so far invalid (the next chat is a 401).
func (c *Copilot) Revoke() { c.mu.Lock(); c.valid = map[string]time.Time{}; c.mu.Unlock() }

// LastChatHeader is the header of the last chat or models request.
func (c *Copilot) LastChatHeader() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastHeader.Clone()
}

// Hold parks every exchange until release is called.
func (c *Copilot) Hold() (release func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.hold = ch
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			if c.hold == ch {
				c.hold = nil
			}
			c.mu.Unlock()
			close(ch)
		})
	}
}

func githubForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	v, err := url.ParseQuery(string(raw))
	if err != nil || r.Header.Get("Accept") != "application/json" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"bad_request"}`)
		return nil, false
	}
	return v, true
}

func (c *Copilot) deviceCodeRoute(w http.ResponseWriter, r *http.Request) {
	v, ok := githubForm(w, r)
	if !ok {
		return
	}
	if v.Get("client_id") != c.clientID {
		writeJSONStatus(w, http.StatusUnauthorized, map[string]any{"error": "incorrect_client_credentials"})
		return
	}
	writeJSON(w, map[string]any{"device_code": c.deviceCode, "user_code": c.userCode,
		"verification_uri": c.srv.URL + "/login/device", "expires_in": 900, "interval": 1})
}

func (c *Copilot) accessTokenRoute(w http.ResponseWriter, r *http.Request) {
	v, ok := githubForm(w, r)
	if !ok {
		return
	}
	c.mu.Lock()
	c.polls++
	approved, denied := c.approved, c.denied
	c.mu.Unlock()
	switch {
	case v.Get("client_id") != c.clientID:
		writeJSON(w, map[string]any{"error": "incorrect_client_credentials"})
	case v.Get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code":
		writeJSON(w, map[string]any{"error": "unsupported_grant_type"})
	case v.Get("device_code") != c.deviceCode:
		writeJSON(w, map[string]any{"error": "incorrect_device_code"})
	case denied:
		writeJSON(w, map[string]any{"error": "access_denied", "error_description": "The authorization request was denied."})
	case !approved:
		writeJSON(w, map[string]any{"error": "authorization_pending", "error_description": "The authorization request is still pending."})
	default:
		writeJSON(w, map[string]any{"access_token": c.github, "token_type": "bearer", "scope": "read:user"})
	}
}

func (c *Copilot) githubAuthed(r *http.Request) bool {
	return r.Header.Get("Authorization") == "token "+c.github
}

func (c *Copilot) userRoute(w http.ResponseWriter, r *http.Request) {
	if !c.githubAuthed(r) {
		writeJSONStatus(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	writeJSON(w, map[string]any{"login": CopilotLogin, "id": CopilotUserID})
}

func (c *Copilot) tokenRoute(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.exchanges++
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if !c.githubAuthed(r) {
		writeJSONStatus(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.entitled {
		writeJSONStatus(w, http.StatusForbidden, map[string]any{"error_details": map[string]any{"message": "No access to GitHub Copilot found."}, "message": "Resource not accessible by integration"})
		return
	}
	c.issued++
	tok := CopilotTokenN(c.issued)
	exp := time.Now().Add(c.ttl)
	c.valid[tok] = exp
	writeJSON(w, map[string]any{"token": tok, "expires_at": exp.Unix(), "refresh_in": max(int(c.ttl/time.Second)-60, 0),
		"endpoints": map[string]any{"api": c.srv.URL, "proxy": c.srv.URL}})
}

// chatRoute checks what Copilot's chat API checks, then lets next answer.
func (c *Copilot) chatRoute(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		c.mu.Lock()
		c.lastHeader = r.Header.Clone()
		exp, ok := c.valid[tok]
		c.mu.Unlock()
		switch {
		case !ok || !time.Now().Before(exp):
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, "unauthorized: token expired")
		case r.Header.Get("Editor-Version") == "" || r.Header.Get("Copilot-Integration-Id") == "":
			writeJSONStatus(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "missing Editor-Version or Copilot-Integration-Id header for IDE auth", "code": "bad_request"}})
		default:
			next(w, r)
		}
	}
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeJSON(w, v)
}
