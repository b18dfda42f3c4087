package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadKeyFrom: the variable, then the file it names, then the data
// directory's secret.key (created); both variables, a malformed key or a
// missing key file are refused without the key in the message.
func TestLoadKeyFrom(t *testing.T) {
	dir := t.TempDir()
	hexKey := strings.Repeat("ab", 32)
	keyFile := filepath.Join(dir, "mounted")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("cd", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tt := range []struct {
		name    string
		env     map[string]string
		source  KeySource
		first   byte
		wantErr string
	}{
		{"variable", map[string]string{EnvKey: hexKey}, SourceEnv, 0xab, ""},
		{"variable with spaces", map[string]string{EnvKey: " " + hexKey + "\n"}, SourceEnv, 0xab, ""},
		{"file", map[string]string{EnvKeyFile: keyFile}, SourceEnvFile, 0xcd, ""},
		{"both", map[string]string{EnvKey: hexKey, EnvKeyFile: keyFile}, "", 0, "not both"},
		{"short", map[string]string{EnvKey: "abcd"}, "", 0, "64 hexadecimal"},
		{"not hex", map[string]string{EnvKey: strings.Repeat("zz", 32)}, "", 0, "64 hexadecimal"},
		{"missing file", map[string]string{EnvKeyFile: filepath.Join(dir, "nope")}, "", 0, EnvKeyFile},
		{"data directory", map[string]string{}, SourceDataDir, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secret.key")
			key, src, err := LoadKeyFrom(env(tt.env), path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), hexKey) {
					t.Fatalf("err = %v, want one naming %q without the key", err, tt.wantErr)
				}
				return
			}
			if err != nil || src != tt.source || len(key) != 32 {
				t.Fatalf("key %d bytes from %q, %v; want 32 from %q", len(key), src, err, tt.source)
			}
			if tt.first != 0 && key[0] != tt.first {
				t.Fatalf("key starts %#x, want %#x", key[0], tt.first)
			}
			_, statErr := os.Stat(path)
			if (src == SourceDataDir) != (statErr == nil) {
				t.Fatalf("secret.key exists: %v, want only when the data directory is the source", statErr == nil)
			}
		})
	}
}
