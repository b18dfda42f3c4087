// Package sso signs people in through an OpenID Connect provider: issuer
// discovery (/.well-known/openid-configuration), the authorization code flow
// with PKCE (S256), and the ID token verified against the issuer's JWKS
// (signature, issuer, audience, expiry) and the login's nonce. It knows
// nothing of users or roles beyond the mapping it is configured with.
package sso

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Config is an OpenID Connect client.
type Config struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is the gateway's callback (…/api/oidc/callback) as the
	// provider knows it.
	RedirectURL string
	// Roles maps an email ("alice@example.com") or a domain ("@example.com")
	// to a role; DefaultRole is everyone else's ("" refuses them).
	Roles       map[string]string
	DefaultRole string
	HTTPClient  *http.Client
	Now         func() time.Time
}

// Errors of Finish, each a reason a sign-in is refused.
var (
	ErrDiscovery     = errors.New("the identity provider's discovery document could not be read")
	ErrStateMismatch = errors.New("the sign-in's state does not match this browser's")
	ErrExchange      = errors.New("the identity provider refused the authorization code")
	ErrIDToken       = errors.New("the ID token is invalid")
	ErrNonceMismatch = errors.New("the ID token's nonce does not match the sign-in's")
	ErrNoEmail       = errors.New("the ID token carries no verified email (email_verified: true)")
)

// Client runs sign-ins against one provider; the provider's metadata is read
// on first use and again after a failure.
type Client struct {
	cfg Config
	mu  sync.Mutex
	p   *oidc.Provider
}

// New checks cfg and returns a client (no network until the first sign-in).
func New(cfg Config) (*Client, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("single sign-on needs an issuer, a client id and a redirect URL")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg}, nil
}

// ParseRoles reads "alice@example.com=admin,@example.com=viewer" into a role
// map, each role checked by valid.
func ParseRoles(s string, valid func(string) bool) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		who, role, ok := strings.Cut(part, "=")
		who, role = strings.ToLower(strings.TrimSpace(who)), strings.TrimSpace(role)
		if !ok || who == "" || !strings.Contains(who, "@") || !valid(role) {
			return nil, fmt.Errorf("role mapping %q: want email=role or @domain=role with role admin, operator or viewer", part)
		}
		out[who] = role
	}
	return out, nil
}

// RoleFor is the role an email gets: its own mapping, else its domain's,
// else the default ("": none).
func (c *Client) RoleFor(email string) string {
	email = strings.ToLower(email)
	if r, ok := c.cfg.Roles[email]; ok {
		return r
	}
	if at := strings.LastIndexByte(email, '@'); at >= 0 {
		if r, ok := c.cfg.Roles[email[at:]]; ok {
			return r
		}
	}
	return c.cfg.DefaultRole
}

func (c *Client) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, c.cfg.HTTPClient)
}

// provider is the discovered provider, read once and again after a failure.
func (c *Client) provider(ctx context.Context) (*oidc.Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p != nil {
		return c.p, nil
	}
	p, err := oidc.NewProvider(c.ctx(ctx), c.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDiscovery, err)
	}
	c.p = p
	return p, nil
}

func (c *Client) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: c.cfg.ClientID, ClientSecret: c.cfg.ClientSecret, RedirectURL: c.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// Pending is a sign-in between Begin and Finish, kept by the browser (sealed).
type Pending struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
}

// Begin starts a sign-in: the provider's authorization URL (with state,
// nonce and the PKCE S256 challenge) and what Finish will need.
func (c *Client) Begin(ctx context.Context, state, nonce string) (string, Pending, error) {
	p, err := c.provider(ctx)
	if err != nil {
		return "", Pending{}, err
	}
	pend := Pending{State: state, Nonce: nonce, Verifier: oauth2.GenerateVerifier()}
	u := c.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(pend.Verifier))
	return u, pend, nil
}

// Claims are who the provider says signed in. The identity is the (Issuer,
// Subject) pair; Email is only a claim, trusted to name a person when
// EmailVerified (the provider said email_verified: true).
type Claims struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
}

// Finish completes a sign-in: the state must be the pending one, the code is
// exchanged with the PKCE verifier, and the ID token must verify (JWKS
// signature, issuer, audience, expiry) and carry the pending nonce and a
// subject. Whether its email may name a person is the caller's to decide
// (Claims.EmailVerified).
func (c *Client) Finish(ctx context.Context, pend Pending, state, code string) (Claims, error) {
	if pend.State == "" || state != pend.State {
		return Claims{}, ErrStateMismatch
	}
	p, err := c.provider(ctx)
	if err != nil {
		return Claims{}, err
	}
	tok, err := c.oauth(p).Exchange(c.ctx(ctx), code, oauth2.VerifierOption(pend.Verifier))
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrExchange, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Claims{}, fmt.Errorf("%w: the token answer has no id_token", ErrIDToken)
	}
	v := p.Verifier(&oidc.Config{ClientID: c.cfg.ClientID, Now: c.cfg.Now})
	idt, err := v.Verify(c.ctx(ctx), raw)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrIDToken, err)
	}
	if idt.Nonce != pend.Nonce {
		return Claims{}, ErrNonceMismatch
	}
	var cl struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
		Name          string `json:"name"`
	}
	if err := idt.Claims(&cl); err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrIDToken, err)
	}
	if idt.Subject == "" {
		return Claims{}, fmt.Errorf("%w: the ID token has no subject", ErrIDToken)
	}
	return Claims{Issuer: idt.Issuer, Subject: idt.Subject, Email: strings.ToLower(cl.Email),
		EmailVerified: cl.EmailVerified != nil && *cl.EmailVerified, Name: cl.Name}, nil
}
