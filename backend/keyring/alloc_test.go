//go:build !race

package keyring

import (
	"testing"

	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Not built under -race, whose instrumentation changes allocation counts.

// TestKeyLookupAllocatesNothing: finding a client key by its hash allocates
// nothing (the hash is built on the stack, the map indexed by its bytes).
func TestKeyLookupAllocatesNothing(t *testing.T) {
	keys := New()
	keys.Load([]store.APIKey{{ID: "k1", KeyHash: secrets.Hash("sk-good"), Scopes: `["inference"]`}})
	n := testing.AllocsPerRun(100, func() {
		if _, ok := keys.Lookup("sk-good"); !ok {
			t.Fatal("key not found")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per key lookup, want 0", n)
	}
}
