package secrets

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// The environment variables that may provide the sealing key instead of the
// data directory's secret.key (containers, secret managers).
const (
	// EnvKey holds the key itself: 64 hexadecimal characters (32 bytes).
	EnvKey = "OMNIROUTE_SECRET_KEY"
	// EnvKeyFile names a file holding it (the same format as secret.key),
	// such as a mounted Docker or Kubernetes secret.
	EnvKeyFile = "OMNIROUTE_SECRET_KEY_FILE"
)

// KeySource says where the sealing key came from.
type KeySource string

// Key sources.
const (
	SourceEnv     KeySource = EnvKey
	SourceEnvFile KeySource = EnvKeyFile
	SourceDataDir KeySource = "secret.key"
)

// ParseKey reads a key written as 64 hexadecimal characters (surrounding
// space ignored).
func ParseKey(s string) ([]byte, error) {
	key, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(key) != 32 {
		return nil, errors.New("a sealing key is 64 hexadecimal characters (32 bytes; openssl rand -hex 32)")
	}
	return key, nil
}

// LoadKeyFrom returns the sealing key: OMNIROUTE_SECRET_KEY, else the file
// OMNIROUTE_SECRET_KEY_FILE names (which must exist: a key that was meant to
// be provided is never made up), else the data directory's file at path,
// created when absent. Setting both variables is refused. The key itself is
// never part of an error.
func LoadKeyFrom(getenv func(string) string, path string) ([]byte, KeySource, error) {
	v, file := getenv(EnvKey), getenv(EnvKeyFile)
	switch {
	case v != "" && file != "":
		return nil, "", fmt.Errorf("set %s or %s, not both", EnvKey, EnvKeyFile)
	case v != "":
		key, err := ParseKey(v)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvKey, err)
		}
		return key, SourceEnv, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvKeyFile, err)
		}
		key, err := ParseKey(string(b))
		if err != nil {
			return nil, "", fmt.Errorf("%s (%s): %w", EnvKeyFile, file, err)
		}
		return key, SourceEnvFile, nil
	}
	key, err := LoadOrCreateKey(path)
	return key, SourceDataDir, err
}
