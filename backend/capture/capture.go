// Package capture keeps request and response bodies on demand: off by
// default, switched on for a time window, some keys or some models; each
// captured body redacted, capped, and kept only for the retention the user
// sets. The gateway asks Begin on every request, which costs one atomic load
// while capture is off.
package capture

import (
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/store"
)

// Defaults and bounds of the settings.
const (
	DefaultRetentionMinutes = 24 * 60
	DefaultMaxBodyBytes     = 64 << 10
	DefaultMaxTotalBytes    = 16 << 20
	MaxRetentionMinutes     = 30 * 24 * 60
	MaxBodyBytesLimit       = 4 << 20
	MaxTotalBytesLimit      = 1 << 30
)

// Config is when bodies are captured and how long they are kept. Every
// condition set must hold: enabled, before UntilMs (0: until switched off),
// the request's key among KeyIDs and its model among Models (empty: any).
// Keys marked private are never captured.
type Config struct {
	Enabled          bool     `json:"enabled"`
	UntilMs          int64    `json:"untilMs,omitempty"`
	KeyIDs           []string `json:"keyIds"`
	Models           []string `json:"models"`
	RetentionMinutes int      `json:"retentionMinutes"`
	MaxBodyBytes     int      `json:"maxBodyBytes"`
	MaxTotalBytes    int64    `json:"maxTotalBytes"`
}

// Defaults is the configuration before the user sets one: off.
func Defaults() Config {
	return Config{KeyIDs: []string{}, Models: []string{}, RetentionMinutes: DefaultRetentionMinutes,
		MaxBodyBytes: DefaultMaxBodyBytes, MaxTotalBytes: DefaultMaxTotalBytes}
}

// Validate refuses settings out of bounds, naming the field.
func (c Config) Validate() error {
	switch {
	case c.RetentionMinutes < 1 || c.RetentionMinutes > MaxRetentionMinutes:
		return errs.New(errs.Invalid, "INVALID_FIELD", "retentionMinutes must be between 1 and %d", MaxRetentionMinutes).WithParam("retentionMinutes")
	case c.MaxBodyBytes < 1024 || c.MaxBodyBytes > MaxBodyBytesLimit:
		return errs.New(errs.Invalid, "INVALID_FIELD", "maxBodyBytes must be between 1024 and %d", MaxBodyBytesLimit).WithParam("maxBodyBytes")
	case c.MaxTotalBytes < int64(c.MaxBodyBytes) || c.MaxTotalBytes > MaxTotalBytesLimit:
		return errs.New(errs.Invalid, "INVALID_FIELD", "maxTotalBytes must be between maxBodyBytes and %d", MaxTotalBytesLimit).WithParam("maxTotalBytes")
	case c.UntilMs < 0:
		return errs.New(errs.Invalid, "INVALID_FIELD", "until must be a time").WithParam("until")
	}
	return nil
}

// Store is where captured bodies live (backend/store implements it).
type Store interface {
	GetValue(namespace, key string) (string, bool, error)
	SetValue(namespace, key, value string) error
	SaveRequestBodies(b *store.RequestBodies) error
	RequestBodies(requestID string) (store.RequestBodies, error)
	DeleteRequestBodiesBefore(ms int64) error
	PruneRequestBodies(keepBytes int64) error
}

// Settings' place in the key_value table.
const (
	settingsNamespace = "capture"
	settingsKey       = "config"
)

// Service decides which requests are captured and keeps their bodies.
type Service struct {
	clk   clock.Clock
	store Store
	cfg   atomic.Pointer[Config]
}

// New builds the service with its stored settings (off when none).
func New(clk clock.Clock, st Store) (*Service, error) {
	s := &Service{clk: clk, store: st}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, s.Sweep()
}

// ExpiredBefore is the creation time (Unix ms) before which captured bodies
// have expired.
func (s *Service) ExpiredBefore() int64 { return s.expiredBefore(s.cfg.Load()) }

// Sweep drops the bodies whose retention has passed.
func (s *Service) Sweep() error {
	return s.store.DeleteRequestBodiesBefore(s.expiredBefore(s.cfg.Load()))
}

// Reload reads the stored settings again (a team server's other instance
// changed them).
func (s *Service) Reload() error {
	cfg := Defaults()
	if v, ok, err := s.store.GetValue(settingsNamespace, settingsKey); err != nil {
		return err
	} else if ok {
		if err := json.Unmarshal([]byte(v), &cfg); err != nil {
			cfg = Defaults() // unreadable settings capture nothing
		}
	}
	s.cfg.Store(&cfg)
	return nil
}

// Config is the current settings.
func (s *Service) Config() Config { return *s.cfg.Load() }

// Set validates, stores and applies new settings.
func (s *Service) Set(c Config) error {
	if c.KeyIDs == nil {
		c.KeyIDs = []string{}
	}
	if c.Models == nil {
		c.Models = []string{}
	}
	if err := c.Validate(); err != nil {
		return err
	}
	b, _ := json.Marshal(c)
	if err := s.store.SetValue(settingsNamespace, settingsKey, string(b)); err != nil {
		return err
	}
	s.cfg.Store(&c)
	return nil
}

// Active reports whether capture is on now (enabled, window not over).
func (s *Service) Active() bool {
	c := s.cfg.Load()
	return c.Enabled && (c.UntilMs == 0 || s.clk.Now().UnixMilli() < c.UntilMs)
}

// want reports whether a request of keyID for model is captured now.
func (s *Service) want(keyID, model string, private bool) bool {
	c := s.cfg.Load()
	if !c.Enabled || private {
		return false
	}
	if c.UntilMs != 0 && s.clk.Now().UnixMilli() >= c.UntilMs {
		return false
	}
	return (len(c.KeyIDs) == 0 || slices.Contains(c.KeyIDs, keyID)) && (len(c.Models) == 0 || slices.Contains(c.Models, model))
}

// Begin starts capturing a request when the settings say so, with a copy of
// the client's body; nil (no allocation) when they do not.
func (s *Service) Begin(keyID, model string, private bool, clientFormat string, body []byte) *Request {
	if !s.want(keyID, model, private) {
		return nil
	}
	max := s.cfg.Load().MaxBodyBytes
	r := &Request{keyID: keyID, model: model, clientFormat: clientFormat, created: s.clk.Now().UnixMilli()}
	r.ClientRequest.max, r.UpstreamRequest.max, r.UpstreamResponse.max, r.ClientResponse.max = max, max, max, max
	_, _ = r.ClientRequest.Write(body)
	return r
}

// Finish redacts a captured request's bodies and keeps them under requestID,
// after dropping what expired and, when the total would exceed its cap, the
// oldest; a capture larger than the whole cap is not kept.
func (s *Service) Finish(requestID string, r *Request) error {
	if r == nil || requestID == "" {
		return nil
	}
	c := s.cfg.Load()
	row := store.RequestBodies{RequestID: requestID, CreatedAt: r.created, APIKeyID: r.keyID, Model: r.model,
		ClientFormat: r.clientFormat, UpstreamFormat: r.upstreamFormat, Stream: r.Stream}
	var cuts [4]int64
	row.ClientRequest, cuts[0] = r.ClientRequest.redacted(r.secrets)
	row.UpstreamRequest, cuts[1] = r.UpstreamRequest.redacted(r.secrets)
	row.UpstreamResponse, cuts[2] = r.UpstreamResponse.redacted(r.secrets)
	row.ClientResponse, cuts[3] = r.ClientResponse.redacted(r.secrets)
	row.Truncated = cuts[0] + cuts[1] + cuts[2] + cuts[3]
	row.Bytes = int64(len(row.ClientRequest) + len(row.UpstreamRequest) + len(row.UpstreamResponse) + len(row.ClientResponse))
	if err := s.Sweep(); err != nil {
		return err
	}
	if row.Bytes > c.MaxTotalBytes {
		return nil
	}
	if err := s.store.PruneRequestBodies(c.MaxTotalBytes - row.Bytes); err != nil {
		return err
	}
	return s.store.SaveRequestBodies(&row)
}

// expiredBefore is the creation time before which bodies have expired: a
// capture is gone once exactly its retention has passed.
func (s *Service) expiredBefore(c *Config) int64 {
	return s.clk.Now().Add(-time.Duration(c.RetentionMinutes)*time.Minute).UnixMilli() + 1
}

// ErrNotFound is returned for a request with no (or no longer any) bodies.
var ErrNotFound = errs.New(errs.NotFound, "BODIES_NOT_FOUND", "no bodies were captured for this request, or they expired")

// Get returns a request's captured bodies; expired ones are gone.
func (s *Service) Get(requestID string) (store.RequestBodies, error) {
	if err := s.Sweep(); err != nil {
		return store.RequestBodies{}, err
	}
	b, err := s.store.RequestBodies(requestID)
	if errors.Is(err, store.ErrNotFound) {
		return b, ErrNotFound
	}
	return b, err
}

// Request is one request's capture in progress, owned by its request's
// goroutine until Finish.
type Request struct {
	keyID, model, clientFormat, upstreamFormat string
	created                                    int64
	secrets                                    []string
	// Stream: the client asked for a stream.
	Stream bool
	// The four bodies: the client's request, what was sent upstream (the
	// last attempt's), what the upstream answered (the last attempt's: a
	// stream as received, SSE framing kept) and what the client was sent.
	ClientRequest, UpstreamRequest, UpstreamResponse, ClientResponse Buffer
}

// Upstream records an attempt's translated body, the wire format it goes
// out in and the connection's secret (removed by value from every body).
// The upstream answer of an earlier attempt is dropped.
func (r *Request) Upstream(body []byte, format, secret string) {
	r.UpstreamRequest.Reset()
	_, _ = r.UpstreamRequest.Write(body)
	r.UpstreamResponse.Reset()
	r.upstreamFormat = format
	r.AddSecret(secret)
}

// AddSecret removes secret by value from every body (a continuation's
// connection, besides the attempts').
func (r *Request) AddSecret(secret string) {
	if secret != "" && !slices.Contains(r.secrets, secret) {
		r.secrets = append(r.secrets, secret)
	}
}

// redactSlack is what a buffer keeps beyond its cap until it is redacted: a
// credential straddling the cap is whole in what was kept, so it is
// redacted, then the body cut (cut first, a secret's first characters would
// survive, too short for any credential shape to match).
const redactSlack = 8 << 10

// Buffer keeps at most max bytes of what is written to it (plus redactSlack
// until redacted) and counts the rest.
type Buffer struct {
	b   []byte
	max int
	cut int64
}

// Write keeps what fits; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	room := b.max + redactSlack - len(b.b)
	if room < 0 {
		room = 0
	}
	if len(p) > room {
		b.cut += int64(len(p) - room)
		b.b = append(b.b, p[:room]...)
	} else {
		b.b = append(b.b, p...)
	}
	return len(p), nil
}

// redacted is what the buffer kept, redacted, then cut at max; and how many
// bytes were cut in all.
func (b *Buffer) redacted(secrets []string) (string, int64) {
	out := Redact(b.b, secrets)
	cut := b.cut
	if len(out) > b.max {
		cut += int64(len(out) - b.max)
		out = out[:b.max]
	}
	return string(out), cut
}

// Reset empties the buffer.
func (b *Buffer) Reset() { b.b, b.cut = b.b[:0], 0 }

// Bytes is what the buffer kept (not yet redacted nor cut at its cap).
func (b *Buffer) Bytes() []byte { return b.b }

// Cut is how many bytes did not fit even in its slack.
func (b *Buffer) Cut() int64 { return b.cut }
