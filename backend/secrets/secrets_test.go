package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpenRoundTripAndKeyFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	key, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	again, err := LoadOrCreateKey(path)
	if err != nil || string(again) != string(key) {
		t.Fatalf("reloaded key differs: %v", err)
	}
	box, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal("sk-live-abcdef123456")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "abcdef") {
		t.Fatal("ciphertext contains plaintext")
	}
	got, err := box.Open(sealed)
	if err != nil || got != "sk-live-abcdef123456" {
		t.Fatalf("open = %q, %v", got, err)
	}
	other, _ := New(make([]byte, 32))
	if _, err := other.Open(sealed); err == nil {
		t.Fatal("opened with the wrong key")
	}
	if _, err := box.Open("v1:!!!"); err == nil {
		t.Fatal("garbage opened")
	}
}

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"short", "••••"},
		{"sk-abcdefghijklmnop", "sk-a…mnop"},
	}
	for _, tt := range tests {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
