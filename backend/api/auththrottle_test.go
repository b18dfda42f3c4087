package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"omniroute/backend/auththrottle"
)

// TestGuessersAreThrottledPerSource: wrong credentials from one address take
// its tokens; once none is left its wrong credentials are 429 with
// Retry-After. A remote address's credentials are then not checked at all
// (valid ones included) until a token is back; a loopback address's valid
// credentials keep working (every local client shares it). Missing
// credentials are no guess and take nothing. Another address is unaffected.
func TestGuessersAreThrottledPerSource(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, h := edgeAPI(t, memKV{}, false)
	a.auth = auththrottle.New(func() time.Time { return now })
	send := func(src, method, path, auth string) (int, string, string) {
		r := httptest.NewRequest(method, path, nil)
		r.Host = "127.0.0.1:20128"
		r.RemoteAddr = src + ":40000"
		if auth != "" {
			r.Header.Set("Authorization", "Bearer "+auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var env struct {
			Error struct {
				Code       string `json:"code"`
				RetryAfter int    `json:"retry_after"`
			} `json:"error"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &env)
		if w.Code == 429 && (env.Error.RetryAfter < 1 || w.Header().Get("Retry-After") != strconv.Itoa(env.Error.RetryAfter)) {
			t.Fatalf("%s %s: 429 without a matching Retry-After: header %q, body %s", method, path, w.Header().Get("Retry-After"), w.Body)
		}
		return w.Code, env.Error.Code, w.Header().Get("Retry-After")
	}
	for _, src := range []string{"192.0.2.7", "127.0.0.1"} {
		for i := range 50 { // missing credentials: no guess
			if code, _, _ := send(src, http.MethodGet, "/v1/models", ""); code != 401 {
				t.Fatalf("%s: missing key %d: %d", src, i, code)
			}
		}
		for i := range auththrottle.Burst {
			path, cred := "/v1/models", "sk-wrong"
			if i%2 == 1 {
				path, cred = "/api/feature-flags", "wrong-token"
			}
			if code, _, _ := send(src, http.MethodGet, path, cred); code != 401 {
				t.Fatalf("%s: guess %d: %d, want 401", src, i+1, code)
			}
		}
		for _, c := range []struct{ path, cred string }{{"/v1/models", "sk-wrong"}, {"/api/feature-flags", "wrong-token"}} {
			if code, ec, ra := send(src, http.MethodGet, c.path, c.cred); code != 429 || ec != "AUTH_RATE_LIMITED" || ra != "1" {
				t.Fatalf("%s: guess past the burst on %s: %d %s Retry-After %q", src, c.path, code, ec, ra)
			}
		}
		wantValid := 429
		if src == "127.0.0.1" {
			wantValid = 200
		}
		if code, _, _ := send(src, http.MethodGet, "/v1/models", "sk-good"); code != wantValid {
			t.Fatalf("%s: valid key while throttled: %d, want %d", src, code, wantValid)
		}
		if code, _, _ := send(src, http.MethodGet, "/api/feature-flags", "mgmt-token"); code != wantValid {
			t.Fatalf("%s: valid token while throttled: %d, want %d", src, code, wantValid)
		}
		if code, _, _ := send("198.51.100.1", http.MethodGet, "/v1/models", "sk-good"); code != 200 {
			t.Fatalf("another address while %s is throttled: %d", src, code)
		}
		now = now.Add(auththrottle.Refill - time.Millisecond)
		if code, _, _ := send(src, http.MethodGet, "/v1/models", "sk-wrong"); code != 429 {
			t.Fatalf("%s: a token is back only after %v: %d", src, auththrottle.Refill, code)
		}
		now = now.Add(time.Millisecond)
		if code, _, _ := send(src, http.MethodGet, "/v1/models", "sk-good"); code != 200 {
			t.Fatalf("%s: valid key with a token back: %d", src, code)
		}
		if code, _, _ := send(src, http.MethodGet, "/v1/models", "sk-wrong"); code != 401 {
			t.Fatalf("%s: the token back is one more guess: %d", src, code)
		}
		if code, _, _ := send(src, http.MethodGet, "/v1/models", "sk-wrong"); code != 429 {
			t.Fatalf("%s: and only one: %d", src, code)
		}
	}
}
