// Package secrets encrypts provider credentials and client keys at rest with
// AES-256-GCM under a key kept in a 0600 file in the data directory, and masks
// them for display.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

const prefix = "v1:"

// Box seals and opens secrets.
type Box struct {
	aead cipher.AEAD
}

// LoadOrCreateKey reads the 32-byte key at path, creating it with mode 0600 if absent.
func LoadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, derr := hex.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(key) != 32 {
			return nil, fmt.Errorf("secret key file %s is corrupt", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		return nil, err
	}
	return key, f.Sync()
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext; the empty string stays empty.
func (b *Box) Seal(plaintext string) (string, error) {
	if plaintext == "" {
		return "", nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	ct := b.aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return prefix + base64.RawStdEncoding.EncodeToString(ct), nil
}

// Open decrypts a value produced by Seal.
func (b *Box) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	if !strings.HasPrefix(sealed, prefix) {
		return "", errors.New("secret is not in a known format")
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed[len(prefix):])
	if err != nil {
		return "", errors.New("secret is corrupt")
	}
	ns := b.aead.NonceSize()
	if len(raw) < ns {
		return "", errors.New("secret is corrupt")
	}
	pt, err := b.aead.Open(nil, raw[:ns], raw[ns:], nil)
	if err != nil {
		return "", errors.New("secret cannot be decrypted with this data directory's key")
	}
	return string(pt), nil
}

// Mask shows only enough of a secret to recognise it: "sk-a…wxyz".
func Mask(s string) string {
	if s == "" {
		return ""
	}
	if len(s) <= 12 {
		return "••••"
	}
	return s[:4] + "…" + s[len(s)-4:]
}

// Hash returns the hex SHA-256 of a value (client keys, lease owners).
func Hash(s string) string {
	return string(AppendHash(make([]byte, 0, HashLen), s))
}

// HashLen is the length of Hash's result.
const HashLen = 2 * sha256.Size

// AppendHash appends Hash(s) to dst. It allocates nothing when dst has room
// and s is at most 128 bytes (every key the gateway issues): the request path
// looks client keys up by hash on every request.
func AppendHash(dst []byte, s string) []byte {
	var buf [128]byte
	sum := sha256.Sum256(append(buf[:0], s...))
	return hex.AppendEncode(dst, sum[:])
}

// RandomToken returns n random bytes as URL-safe base64 without padding.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// RandomID returns a 16-byte hex identifier.
func RandomID() string {
	return string(AppendRandomID(make([]byte, 0, 32)))
}

// AppendRandomID appends a RandomID to dst.
func AppendRandomID(dst []byte) []byte {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.AppendEncode(dst, b[:])
}
