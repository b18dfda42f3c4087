//go:build !race

package providers

import (
	"context"
	"testing"
)

// TestJSONRequestAllocations pins building one upstream request from a cached
// endpoint, its credential header included: the header map (a map of a few
// entries is two allocations), the request's own storage (URL, header values,
// credential, body reader), GetBody, and the request itself; the body with
// its model rewritten is read from the client's bytes and the name (a
// splice), not copied. (Not built under -race, whose instrumentation changes
// allocation counts.)
func TestJSONRequestAllocations(t *testing.T) {
	var r Requests
	target := Target{BaseURL: "http://127.0.0.1:9/v1", Model: "gpt-4o-mini"}
	call := Call{Body: []byte(`{"model":"openai-compatible/gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}]}`)}
	ctx := context.Background()
	cred := Credential{Name: "Authorization", Prefix: "Bearer ", Secret: "sk-upstream"}
	if _, err := r.JSON(ctx, new(target), call, "/chat/completions", "ua", cred); err != nil { // fills the cache
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		if _, err := r.JSON(ctx, new(target), call, "/chat/completions", "ua", cred); err != nil {
			t.Fatal(err)
		}
	})
	if n > 5 {
		t.Fatalf("%v allocations per request, want ≤ 5", n)
	}
}

// TestJSONRequestAllocationsWithStorage: with the call's storage in the
// caller's memory (as the gateway's attempt keeps it), the request's own
// storage is not an allocation: four are left.
func TestJSONRequestAllocationsWithStorage(t *testing.T) {
	var r Requests
	target := Target{BaseURL: "http://127.0.0.1:9/v1", Model: "gpt-4o-mini"}
	call := Call{Body: []byte(`{"model":"openai-compatible/gpt-4o-mini","messages":[]}`)}
	ctx := context.Background()
	cred := Credential{Name: "Authorization", Prefix: "Bearer ", Secret: "sk-upstream"}
	if _, err := r.JSON(ctx, new(target), call, "/chat/completions", "ua", cred); err != nil { // fills the cache
		t.Fatal(err)
	}
	stores := make([]CallStorage, 101)
	i := 0
	n := testing.AllocsPerRun(100, func() {
		c := call
		c.Storage = &stores[i]
		i++
		if _, err := r.JSON(ctx, new(target), c, "/chat/completions", "ua", cred); err != nil {
			t.Fatal(err)
		}
	})
	if n > 4 {
		t.Fatalf("%v allocations per request with storage, want ≤ 4", n)
	}
}
