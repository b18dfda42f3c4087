package api

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLazyRouterBuildsOnFirstRequestOnly: the router is not built with the
// handler, only by the first request that reaches it, once however many
// arrive together; the three hot routes never build it.
func TestLazyRouterBuildsOnFirstRequestOnly(t *testing.T) {
	var builds, served atomic.Int32
	lazy := &lazyRouter{build: func() http.Handler {
		builds.Add(1)
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) })
	}}
	noop := func(http.ResponseWriter, *http.Request) {}
	hot := &hotRoutes{router: lazy, chat: noop, messages: noop, responses: noop}
	for _, p := range []string{"/v1/chat/completions", "/v1/messages", "/v1/responses"} {
		hot.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, p, nil))
	}
	if n := builds.Load(); n != 0 {
		t.Fatalf("after the hot routes: router built %d times, want 0", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			hot.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/providers", nil))
		})
	}
	wg.Wait()
	if b, s := builds.Load(), served.Load(); b != 1 || s != 8 {
		t.Fatalf("8 routed requests: router built %d times, served %d; want 1 and 8", b, s)
	}
}

// TestHandlerServesTheRouterAfterTheHotRoutes: through the whole handler, a
// hot route first and then a routed one (the router built then) answer as
// they do with the router built first.
func TestHandlerServesTheRouterAfterTheHotRoutes(t *testing.T) {
	_, h := edgeAPI(t, memKV{}, false)
	chat := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/chat/completions", nil)
	chat.Header.Set("Authorization", "Bearer sk-good")
	chat.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, chat)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("hot route with no body: %d %s, want 400", w.Code, w.Body)
	}
	models := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/v1/models", nil)
	models.Header.Set("Authorization", "Bearer sk-good")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, models)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /v1/models after a hot route: %d %s, want 200", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/providers", nil))
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("GET /api/providers without a token: %d %s, want 401", w.Code, w.Body)
	}
}
