//go:build !race

package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Allocation pins of the request edge. Not built under -race, whose
// instrumentation changes allocation counts.

// TestHotRoutesSaveTheRouterAllocations: an inference request through the
// fast path costs at least 6 allocations fewer than the same request through
// gorilla/mux (its route match, the two request copies carrying route and
// variables, and the client's context value and request copy).
func TestHotRoutesSaveTheRouterAllocations(t *testing.T) {
	kv := memKV{}
	_, fast := edgeAPI(t, kv, false)
	_, router := edgeAPI(t, kv, true)
	count := func(h http.Handler) float64 {
		return testing.AllocsPerRun(200, func() {
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"model":"nope-model","messages":[]}`))
			r.Host = "127.0.0.1:20128"
			r.Header.Set("Authorization", "Bearer sk-good")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusNotFound {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
		})
	}
	f, m := count(fast), count(router)
	t.Logf("allocations per refused request: fast path %v, router %v", f, m)
	if f+6 > m {
		t.Fatalf("fast path %v allocations, router %v: want at least 6 fewer", f, m)
	}
}
