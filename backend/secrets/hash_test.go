package secrets

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestAppendHashIsHexSHA256: AppendHash and Hash give the hex SHA-256 of the
// value, for short keys (the stack path) and long ones alike, appended after
// what dst holds.
func TestAppendHashIsHexSHA256(t *testing.T) {
	for _, v := range []string{"", "sk-omni-0123456789abcdef", strings.Repeat("k", 128), strings.Repeat("long", 100)} {
		sum := sha256.Sum256([]byte(v))
		want := hex.EncodeToString(sum[:])
		if got := Hash(v); got != want {
			t.Errorf("Hash(%d bytes) = %s, want %s", len(v), got, want)
		}
		if got := string(AppendHash([]byte("x:"), v)); got != "x:"+want {
			t.Errorf("AppendHash(%d bytes) = %s, want x:%s", len(v), got, want)
		}
		if len(want) != HashLen {
			t.Fatalf("HashLen %d, hash is %d", HashLen, len(want))
		}
	}
}
