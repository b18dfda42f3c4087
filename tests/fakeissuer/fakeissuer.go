// Package fakeissuer is an OpenID Connect provider for tests, written from
// the specifications (OpenID Connect Core and Discovery 1.0, RFC 7636 PKCE,
// RFC 7517 JWK, RFC 7515/7519 JWS/JWT): a discovery document, a JWKS with one
// RSA key, an authorization endpoint that issues a code bound to the PKCE
// S256 challenge, and a token endpoint that checks the client, the redirect
// URI and the code verifier before answering an RS256-signed ID token. Knobs
// make it misbehave: a signature by another key, an expired token, a nonce
// other than the one asked for.
package fakeissuer

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"
)

// Issuer is a running fake provider.
type Issuer struct {
	URL          string
	ClientID     string
	ClientSecret string

	srv   *httptest.Server
	key   *rsa.PrivateKey // the published key
	other *rsa.PrivateKey // a key the JWKS does not hold

	mu sync.Mutex
	// Email is who signs in at /authorize (the user the test plays).
	Email string
	// TTL is the ID token's lifetime from Now (negative: already expired).
	TTL time.Duration
	// Now is the issuer's clock.
	Now func() time.Time
	// BadSignature signs ID tokens with a key the JWKS does not publish.
	BadSignature bool
	// Nonce, when set, replaces the nonce the client asked for.
	Nonce string
	// Subject, when set, is the ID token's sub (else "sub-" + the email).
	Subject string
	// EmailVerified is the email_verified claim: "" true, "false" false,
	// "omit" no claim at all.
	EmailVerified string
	// Challenges records each /authorize's code_challenge_method.
	Challenges []string
	codes      map[string]grant
}

type grant struct {
	challenge, redirect, nonce, email string
}

// Start runs a provider with one client registered.
func Start() *Issuer {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	i := &Issuer{ClientID: "omniroute-test", ClientSecret: "s3cret-client", key: key, other: other,
		Email: "alice@example.com", TTL: 5 * time.Minute, Now: time.Now, codes: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", i.discovery)
	mux.HandleFunc("GET /jwks", i.jwks)
	mux.HandleFunc("GET /authorize", i.authorize)
	mux.HandleFunc("POST /token", i.token)
	i.srv = httptest.NewServer(mux)
	i.URL = i.srv.URL
	return i
}

// Close stops the provider.
func (i *Issuer) Close() { i.srv.Close() }

// Set changes the knobs under the issuer's lock.
func (i *Issuer) Set(f func(*Issuer)) {
	i.mu.Lock()
	defer i.mu.Unlock()
	f(i)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (i *Issuer) discovery(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": i.URL, "authorization_endpoint": i.URL + "/authorize", "token_endpoint": i.URL + "/token",
		"jwks_uri": i.URL + "/jwks", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"openid", "email", "profile"},
	})
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (i *Issuer) jwks(w http.ResponseWriter, r *http.Request) {
	pub := i.key.PublicKey
	writeJSON(w, http.StatusOK, map[string]any{"keys": []any{map[string]any{
		"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
	}}})
}

// authorize signs Email in at once and sends the browser back with a code.
func (i *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	i.mu.Lock()
	i.Challenges = append(i.Challenges, q.Get("code_challenge_method"))
	email := i.Email
	i.mu.Unlock()
	if q.Get("client_id") != i.ClientID || q.Get("response_type") != "code" || q.Get("redirect_uri") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE S256 required", http.StatusBadRequest)
		return
	}
	code := b64(randomBytes(16))
	i.mu.Lock()
	i.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), nonce: q.Get("nonce"), email: email}
	i.mu.Unlock()
	u, _ := url.Parse(q.Get("redirect_uri"))
	back := u.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func (i *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != i.ClientID || secret != i.ClientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	i.mu.Lock()
	g, found := i.codes[r.PostForm.Get("code")]
	delete(i.codes, r.PostForm.Get("code")) // a code is used once
	i.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if r.PostForm.Get("grant_type") != "authorization_code" || !found || g.redirect != r.PostForm.Get("redirect_uri") || b64(sum[:]) != g.challenge {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": b64(randomBytes(16)), "token_type": "Bearer",
		"expires_in": 3600, "id_token": i.idToken(g)})
}

// idToken is the RS256 ID token for a grant, as the knobs say.
func (i *Issuer) idToken(g grant) string {
	i.mu.Lock()
	now, ttl, nonce, key := i.Now(), i.TTL, g.nonce, i.key
	if i.Nonce != "" {
		nonce = i.Nonce
	}
	if i.BadSignature {
		key = i.other
	}
	subject, verified := i.Subject, i.EmailVerified
	i.mu.Unlock()
	head, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "k1"})
	sub := "sub-" + g.email
	if subject != "" {
		sub = subject
	}
	cl := map[string]any{"iss": i.URL, "sub": sub, "aud": i.ClientID,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(), "nonce": nonce, "email": g.email, "email_verified": true,
		"name": "Test " + g.email}
	switch verified {
	case "false":
		cl["email_verified"] = false
	case "omit":
		delete(cl, "email_verified")
	}
	claims, _ := json.Marshal(cl)
	signing := b64(head) + "." + b64(claims)
	digest := sha256.Sum256([]byte(signing))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	return signing + "." + b64(sig)
}
