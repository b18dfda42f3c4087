package vertex

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/sync/singleflight"

	"omniroute/backend/providers"
)

// Scope is the OAuth scope a Vertex access token is minted for.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// DefaultTokenURL is Google's token endpoint, used when a key names none.
const DefaultTokenURL = "https://oauth2.googleapis.com/token"

// Token minting limits.
const (
	// Lead mints a new token this long before the current one expires.
	Lead = 5 * time.Minute
	// assertionLife is the signed assertion's lifetime (Google's maximum).
	assertionLife = time.Hour
	// mintTimeout bounds one call to the token endpoint.
	mintTimeout = 30 * time.Second
	// maxKey bounds a service-account JSON.
	maxKey = 64 << 10
)

// ServiceAccount is the part of a Google service-account key file
// (type "service_account") a token is minted with. The private key never
// leaves this process.
type ServiceAccount struct {
	ProjectID    string
	PrivateKeyID string
	ClientEmail  string
	TokenURI     string
	key          *rsa.PrivateKey
}

// KeyError is a service-account JSON that cannot be used; Field names the
// JSON field at fault. It never holds key material.
type KeyError struct{ Field, Msg string }

func (e *KeyError) Error() string { return "service account key: " + e.Msg }

// ParseServiceAccount reads a service-account key file's JSON.
func ParseServiceAccount(raw string) (*ServiceAccount, error) {
	if len(raw) > maxKey {
		return nil, &KeyError{"", "the JSON is larger than a key file"}
	}
	if !gjson.Valid(raw) || !gjson.Parse(raw).IsObject() {
		return nil, &KeyError{"", "it is not the JSON object of a key file"}
	}
	root := gjson.Parse(raw)
	if typ := root.Get("type").String(); typ != "service_account" {
		return nil, &KeyError{"type", `"type" must be "service_account" (a key file from IAM → Service accounts → Keys)`}
	}
	sa := &ServiceAccount{ProjectID: root.Get("project_id").String(), PrivateKeyID: root.Get("private_key_id").String(),
		ClientEmail: root.Get("client_email").String(), TokenURI: root.Get("token_uri").String()}
	if sa.ClientEmail == "" || !strings.Contains(sa.ClientEmail, "@") {
		return nil, &KeyError{"client_email", `"client_email" is missing`}
	}
	if sa.TokenURI != "" {
		if u, err := url.Parse(sa.TokenURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, &KeyError{"token_uri", `"token_uri" is not an http(s) URL`}
		}
	}
	block, _ := pem.Decode([]byte(root.Get("private_key").String()))
	if block == nil {
		return nil, &KeyError{"private_key", `"private_key" holds no PEM key`}
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, &KeyError{"private_key", `"private_key" is not an RSA key`}
		}
		key = rk
	} else if rk, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = rk
	} else {
		return nil, &KeyError{"private_key", `"private_key" cannot be read as an RSA key`}
	}
	sa.key = key
	return sa, nil
}

// Assertion is the signed JWT (RS256) the token endpoint exchanges for an
// access token: iss the service account, aud the token URL, the
// cloud-platform scope, valid for an hour from now.
func (sa *ServiceAccount) Assertion(aud string, now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	hdr := map[string]string{"alg": "RS256", "typ": "JWT"}
	if sa.PrivateKeyID != "" {
		hdr["kid"] = sa.PrivateKeyID
	}
	h, _ := json.Marshal(hdr)
	c, _ := json.Marshal(map[string]any{"iss": sa.ClientEmail, "scope": Scope, "aud": aud,
		"iat": now.Unix(), "exp": now.Add(assertionLife).Unix()})
	signing := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, sa.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// MintError is a token endpoint's refusal of a service account's assertion
// (a deleted key, a disabled account). It never holds a token.
type MintError struct {
	Status int
	Code   string
}

func (e *MintError) Error() string {
	msg := fmt.Sprintf("the token endpoint refused the service account (HTTP %d", e.Status)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	return msg + ")"
}

// Tokens mints and caches access tokens per connection, single-flight: a
// token is minted again Lead before it expires, once however many requests
// need it at that moment.
type Tokens struct {
	client providers.Doer
	now    func() time.Time
	// tokenURL, when set, replaces every key's token_uri (tests, proxies).
	tokenURL string

	group singleflight.Group
	mu    sync.Mutex
	cache map[string]cached // connection id → token
	keys  map[string]*ServiceAccount
}

type cached struct {
	key     string // the service-account JSON it was minted with
	token   string
	expires time.Time
}

// NewTokens returns a minter. tokenURL overrides the keys' token_uri ("" : none).
func NewTokens(client providers.Doer, now func() time.Time, tokenURL string) *Tokens {
	return &Tokens{client: client, now: now, tokenURL: tokenURL, cache: map[string]cached{}, keys: map[string]*ServiceAccount{}}
}

// Token returns an access token for the connection whose key is saJSON.
func (m *Tokens) Token(ctx context.Context, connID, saJSON string) (string, error) {
	m.mu.Lock()
	c, ok := m.cache[connID]
	m.mu.Unlock()
	if ok && c.key == saJSON && m.now().Before(c.expires.Add(-Lead)) {
		return c.token, nil
	}
	ch := m.group.DoChan(connID, func() (any, error) {
		m.mu.Lock()
		c, ok := m.cache[connID]
		m.mu.Unlock()
		if ok && c.key == saJSON && m.now().Before(c.expires.Add(-Lead)) {
			return c.token, nil // minted by the flight that just ended
		}
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mintTimeout)
		defer cancel()
		tok, exp, err := m.mint(mctx, saJSON)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.cache[connID] = cached{key: saJSON, token: tok, expires: exp}
		m.mu.Unlock()
		return tok, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(string), nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// Invalidate drops the connection's token if it is still tok (the upstream
// refused it before its time).
func (m *Tokens) Invalidate(connID, tok string) {
	m.mu.Lock()
	if c, ok := m.cache[connID]; ok && c.token == tok {
		delete(m.cache, connID)
	}
	m.mu.Unlock()
}

// account parses saJSON once.
func (m *Tokens) account(saJSON string) (*ServiceAccount, error) {
	m.mu.Lock()
	sa, ok := m.keys[saJSON]
	m.mu.Unlock()
	if ok {
		return sa, nil
	}
	sa, err := ParseServiceAccount(saJSON)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if len(m.keys) >= 256 {
		m.keys = map[string]*ServiceAccount{}
	}
	m.keys[saJSON] = sa
	m.mu.Unlock()
	return sa, nil
}

// mint exchanges a fresh assertion for an access token (the JWT bearer grant).
func (m *Tokens) mint(ctx context.Context, saJSON string) (string, time.Time, error) {
	sa, err := m.account(saJSON)
	if err != nil {
		return "", time.Time{}, err
	}
	aud := sa.TokenURI
	if m.tokenURL != "" {
		aud = m.tokenURL
	}
	if aud == "" {
		aud = DefaultTokenURL
	}
	now := m.now()
	assertion, err := sa.Assertion(aud, now)
	if err != nil {
		return "", time.Time{}, err
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, aud, strings.NewReader(form))
	if err != nil {
		return "", time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return "", time.Time{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", time.Time{}, &MintError{Status: resp.StatusCode, Code: providers.SafeOAuthCode(gjson.GetBytes(raw, "error").String())}
	}
	tok := gjson.GetBytes(raw, "access_token").String()
	if tok == "" {
		return "", time.Time{}, errors.New("vertex: the token endpoint answered without an access token")
	}
	life := time.Duration(gjson.GetBytes(raw, "expires_in").Float() * float64(time.Second))
	if life <= 0 {
		life = time.Hour
	}
	return tok, m.now().Add(life), nil
}
