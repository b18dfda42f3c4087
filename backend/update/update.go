// Package update is the opt-in check for a newer release: it reads a small
// signed JSON manifest from a configured URL, verifies its Ed25519 signature
// with the release key compiled into the binary, and says whether a newer
// version exists. It never downloads or runs anything: the user is told, and
// installs the release themselves.
//
// The manifest document is {"manifest": {...}, "signature": "<base64>"}: the
// signature covers the manifest member's bytes exactly as they stand in the
// document, so no canonical re-encoding is needed to verify it.
package update

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"omniroute/backend/clock"
)

// ReleaseKey is the public half of the key release manifests are signed with.
const ReleaseKey = "Dxaqtnpt1mQWFd6w1df0RxfRBu4wU1fXZvyLi+nFN18="

// Interval is how old a check may be before a status read checks again.
const Interval = 24 * time.Hour

// maxManifest bounds the manifest document read.
const maxManifest = 64 << 10

// Manifest describes the newest release.
type Manifest struct {
	Version     string `json:"version"`
	URL         string `json:"url"` // the release page the user is pointed at
	Notes       string `json:"notes,omitempty"`
	PublishedAt string `json:"publishedAt,omitempty"`
}

// Status is what the last check found.
type Status struct {
	Enabled   bool      `json:"enabled"`
	Current   string    `json:"current"`
	Latest    string    `json:"latest,omitempty"`
	Available bool      `json:"available"`
	URL       string    `json:"url,omitempty"`
	Notes     string    `json:"notes,omitempty"`
	CheckedAt time.Time `json:"checkedAt,omitzero"`
	// Error says why the last check found nothing (unreachable, no manifest,
	// a signature that does not verify): shown in settings, never as a notice.
	Error string `json:"error,omitempty"`
}

// Checker runs checks and remembers the last one.
type Checker struct {
	client  *http.Client
	key     ed25519.PublicKey
	clk     clock.Clock
	current string

	mu   sync.Mutex
	last Status
}

// New returns a checker for the running version current, verifying with key
// (base64 Ed25519 public key; ReleaseKey in the binary).
func New(client *http.Client, key string, clk clock.Clock, current string) (*Checker, error) {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("update: the release key is not a base64 Ed25519 public key")
	}
	return &Checker{client: client, key: ed25519.PublicKey(raw), clk: clk, current: current}, nil
}

// Status returns the last check's result; when enabled and the last check is
// older than Interval (or there was none), it checks url first.
func (c *Checker) Status(ctx context.Context, enabled bool, url string) Status {
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if !enabled {
		return Status{Current: c.current}
	}
	if last.CheckedAt.IsZero() || c.clk.Now().Sub(last.CheckedAt) >= Interval {
		return c.Check(ctx, url)
	}
	return last
}

// Check reads and verifies the manifest at url now.
func (c *Checker) Check(ctx context.Context, url string) Status {
	s := Status{Enabled: true, Current: c.current, CheckedAt: c.clk.Now()}
	m, err := c.fetch(ctx, url)
	if err != nil {
		s.Error = err.Error()
	} else {
		s.Latest, s.URL, s.Notes = m.Version, m.URL, m.Notes
		s.Available = Newer(m.Version, c.current)
	}
	c.mu.Lock()
	c.last = s
	c.mu.Unlock()
	return s
}

func (c *Checker) fetch(ctx context.Context, url string) (Manifest, error) {
	var m Manifest
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return m, fmt.Errorf("the update URL is not valid: %w", err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return m, errors.New("the update manifest could not be reached")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("the update manifest answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxManifest+1))
	if err != nil || len(body) > maxManifest {
		return m, errors.New("the update manifest could not be read (or is over 64 KiB)")
	}
	return Verify(body, c.key)
}

// Verify checks a manifest document's signature with key and returns the
// manifest it vouches for.
func Verify(doc []byte, key ed25519.PublicKey) (Manifest, error) {
	var m Manifest
	var env struct {
		Manifest  json.RawMessage `json:"manifest"`
		Signature string          `json:"signature"`
	}
	if err := json.Unmarshal(doc, &env); err != nil || len(env.Manifest) == 0 {
		return m, errors.New("the update manifest is not a signed manifest document")
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signature)
	if err != nil || !ed25519.Verify(key, env.Manifest, sig) {
		return m, errors.New("the update manifest's signature does not verify: ignored")
	}
	if err := json.Unmarshal(env.Manifest, &m); err != nil || parse(m.Version) == nil {
		return Manifest{}, errors.New("the signed update manifest has no valid version")
	}
	return m, nil
}

// Sign makes a manifest document for m with the release's private key (the
// release tooling and the tests).
func Sign(m Manifest, priv ed25519.PrivateKey) ([]byte, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"manifest": json.RawMessage(raw),
		"signature": base64.StdEncoding.EncodeToString(ed25519.Sign(priv, raw))})
}

// Newer reports whether version a is newer than b (MAJOR.MINOR.PATCH, a
// leading "v" allowed; anything else is never newer).
func Newer(a, b string) bool {
	x, y := parse(a), parse(b)
	if x == nil || y == nil {
		return false
	}
	for i := range 3 {
		if x[i] != y[i] {
			return x[i] > y[i]
		}
	}
	return false
}

func parse(v string) []int {
	parts := strings.Split(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	if len(parts) != 3 {
		return nil
	}
	out := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil
		}
		out[i] = n
	}
	return out
}
