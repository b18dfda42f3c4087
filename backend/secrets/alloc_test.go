//go:build !race

package secrets

import "testing"

// TestAppendHashAllocatesNothing: hashing a client key into a caller's buffer
// (every inference request looks its key up this way) allocates nothing.
// (Not built under -race, whose instrumentation changes allocation counts.)
func TestAppendHashAllocatesNothing(t *testing.T) {
	key := "sk-omni-0123456789abcdef0123456789abcdef0123456789abcdef"
	var buf [HashLen]byte
	if n := testing.AllocsPerRun(100, func() { AppendHash(buf[:0], key) }); n != 0 {
		t.Fatalf("%v allocations per hash, want 0", n)
	}
}
