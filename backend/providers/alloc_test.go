//go:build !race

package providers

import (
	"context"
	"testing"
)

// TestJSONRequestAllocations pins building one upstream request from a cached
// endpoint: the rewritten body, the header map and its one values array, the
// URL copy, the body reader and its GetBody, and the request itself (a map
// of a few entries is two allocations). (Not
// built under -race, whose instrumentation changes allocation counts.)
func TestJSONRequestAllocations(t *testing.T) {
	var r Requests
	target := Target{BaseURL: "http://127.0.0.1:9/v1", Model: "gpt-4o-mini"}
	call := Call{Body: []byte(`{"model":"openai-compatible/gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}]}`)}
	ctx := context.Background()
	if _, err := r.JSON(ctx, target, call, "/chat/completions", "ua"); err != nil { // fills the cache
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		if _, err := r.JSON(ctx, target, call, "/chat/completions", "ua", "Authorization", "Bearer k"); err != nil {
			t.Fatal(err)
		}
	})
	if n > 8 {
		t.Fatalf("%v allocations per request, want ≤ 8", n)
	}
}
