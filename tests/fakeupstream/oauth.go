package fakeupstream

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
)

// TokenServer is a fake OAuth token endpoint (POST /token) for the
// refresh_token grant, as the Claude, Codex and Google endpoints take it
// (JSON or form body). It accepts only the client id it was made with and
// the refresh token it issued last (rotating it on each refresh, as Codex
// does), answers {"access_token":"at-N","refresh_token":"rt-N",
// "expires_in":ExpiresIn}, counts every call, and can be told to fail.
type TokenServer struct {
	srv      *httptest.Server
	clientID string

	mu        sync.Mutex
	refresh   string
	calls     int
	issued    int
	failCode  int
	ExpiresIn int
	release   chan struct{} // when set, each exchange waits for it (to pile up concurrent callers)
}

// NewTokenServer starts a token server on loopback that accepts clientID
// and the refresh token initial.
func NewTokenServer(clientID, initial string) *TokenServer {
	t := &TokenServer{clientID: clientID, refresh: initial, ExpiresIn: 3600}
	t.srv = httptest.NewServer(http.HandlerFunc(t.serve))
	return t
}

// URL is the token endpoint's URL.
func (t *TokenServer) URL() string { return t.srv.URL + "/token" }

// Close stops the server.
func (t *TokenServer) Close() { t.srv.Close() }

// Calls is how many requests reached the endpoint.
func (t *TokenServer) Calls() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls
}

// SetRefreshToken makes rt the one valid refresh token (a new login).
func (t *TokenServer) SetRefreshToken(rt string) {
	t.mu.Lock()
	t.refresh = rt
	t.mu.Unlock()
}

// Fail makes every exchange answer status with {"error":"invalid_grant"}; 0 heals it.
func (t *TokenServer) Fail(status int) {
	t.mu.Lock()
	t.failCode = status
	t.mu.Unlock()
}

// Hold makes exchanges wait until the returned release is called.
func (t *TokenServer) Hold() (release func()) {
	ch := make(chan struct{})
	t.mu.Lock()
	t.release = ch
	t.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (t *TokenServer) serve(w http.ResponseWriter, r *http.Request) {
	t.mu.Lock()
	t.calls++
	hold := t.release
	t.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != "/token" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"not_found"}`)
		return
	}
	fields := map[string]string{}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		v, _ := url.ParseQuery(string(raw))
		for k := range v {
			fields[k] = v.Get(k)
		}
	} else if err := json.Unmarshal(raw, &fields); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_request"}`)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.failCode != 0:
		w.WriteHeader(t.failCode)
		_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":"refresh token revoked"}`)
		return
	case fields["grant_type"] != "refresh_token" || fields["client_id"] != t.clientID:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
		return
	case fields["refresh_token"] != t.refresh:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
		return
	}
	t.issued++
	t.refresh = fmt.Sprintf("rt-%d", t.issued)
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("at-%d", t.issued), "refresh_token": t.refresh,
		"expires_in": t.ExpiresIn, "token_type": "Bearer"})
}
