package vertex_test

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
	"omniroute/backend/providers/vertex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func keyFile(t *testing.T, k *rsa.PrivateKey, pkcs1 bool, extra map[string]string) string {
	t.Helper()
	der, typ := x509.MarshalPKCS1PrivateKey(k), "RSA PRIVATE KEY"
	if !pkcs1 {
		der, _ = x509.MarshalPKCS8PrivateKey(k)
		typ = "PRIVATE KEY"
	}
	m := map[string]string{"type": "service_account", "project_id": "proj-one", "private_key_id": "kid-1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})), "client_email": "sa@proj-one.iam.gserviceaccount.com",
		"token_uri": "https://oauth2.googleapis.com/token"}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

var testKey = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 1024) // small: signing only, in tests
	if err != nil {
		panic(err)
	}
	return k
}()

func TestParseServiceAccount(t *testing.T) {
	cases := []struct {
		name, json, field string
	}{
		{"pkcs8", keyFile(t, testKey, false, nil), ""},
		{"pkcs1", keyFile(t, testKey, true, nil), ""},
		{"not json", "{", ""},
		{"user credentials", `{"type":"authorized_user","client_id":"x","refresh_token":"y"}`, "type"},
		{"no email", keyFile(t, testKey, false, map[string]string{"client_email": ""}), "client_email"},
		{"no key", keyFile(t, testKey, false, map[string]string{"private_key": "nope"}), "private_key"},
		{"bad token uri", keyFile(t, testKey, false, map[string]string{"token_uri": "file:///etc/passwd"}), "token_uri"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sa, err := vertex.ParseServiceAccount(c.json)
			ok := c.name == "pkcs8" || c.name == "pkcs1"
			if ok {
				if err != nil || sa.ClientEmail != "sa@proj-one.iam.gserviceaccount.com" || sa.ProjectID != "proj-one" {
					t.Fatalf("%+v %v", sa, err)
				}
				return
			}
			var ke *vertex.KeyError
			if !errors.As(err, &ke) || ke.Field != c.field || strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatalf("err %v, want field %q", err, c.field)
			}
		})
	}
}

// TestAssertionVerifiesWithThePublicKey: the JWT is RS256 over
// header.claims, signed with the account's key, with the claims Google wants.
func TestAssertionVerifiesWithThePublicKey(t *testing.T) {
	sa, err := vertex.ParseServiceAccount(keyFile(t, testKey, false, nil))
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := sa.Assertion("https://token.test/token", t0)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(jwt, ".")
	dec := base64.RawURLEncoding.DecodeString
	h, _ := dec(parts[0])
	c, _ := dec(parts[1])
	sig, _ := dec(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&testKey.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
	if gjson.GetBytes(h, "alg").String() != "RS256" || gjson.GetBytes(h, "kid").String() != "kid-1" {
		t.Fatalf("header %s", h)
	}
	cl := gjson.ParseBytes(c)
	if cl.Get("iss").String() != sa.ClientEmail || cl.Get("aud").String() != "https://token.test/token" || cl.Get("scope").String() != vertex.Scope ||
		cl.Get("iat").Int() != t0.Unix() || cl.Get("exp").Int() != t0.Add(time.Hour).Unix() {
		t.Fatalf("claims %s", c)
	}
}

// tokenDoer is a token endpoint (the JWT bearer grant) and a Vertex upstream.
type tokenDoer struct {
	mu      sync.Mutex
	mints   int
	hold    chan struct{}
	aud     string
	refuse  bool
	reject  map[string]bool // access tokens Vertex answers 401
	vertex  []*http.Request
	bodies  [][]byte
	arrived atomic.Int32
}

func (d *tokenDoer) Do(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	if strings.HasSuffix(req.URL.Path, "/token") {
		d.arrived.Add(1)
		if d.hold != nil {
			<-d.hold
		}
		form, _ := url.ParseQuery(string(b))
		d.mu.Lock()
		defer d.mu.Unlock()
		d.aud = gjson.GetBytes(mustDecode(strings.Split(form.Get("assertion"), ".")[1]), "aud").String()
		if d.refuse || form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			return answer(400, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`), nil
		}
		d.mints++
		return answer(200, fmt.Sprintf(`{"access_token":"ya29.m%d","expires_in":3600,"token_type":"Bearer"}`, d.mints)), nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.vertex, d.bodies = append(d.vertex, req), append(d.bodies, b)
	if d.reject[strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")] {
		return answer(401, `{"error":{"code":401,"status":"UNAUTHENTICATED"}}`), nil
	}
	return answer(200, `{}`), nil
}

func mustDecode(s string) []byte {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	return b
}

func answer(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
}

// TestTokensMintedOnceAndAgainBeforeExpiry: ten callers share one mint;
// the token is reused until exactly Lead before its expiry, then minted
// again; a changed key mints at once; a refused key is a MintError.
func TestTokensMintedOnceAndAgainBeforeExpiry(t *testing.T) {
	clk := clock.NewFake(t0)
	d := &tokenDoer{hold: make(chan struct{})}
	m := vertex.NewTokens(d, clk.Now, "")
	key := keyFile(t, testKey, false, nil)
	var wg sync.WaitGroup
	toks := make([]string, 10)
	for i := range toks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], _ = m.Token(context.Background(), "c", key)
		}()
	}
	for d.arrived.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others join the flight (the count below is the assertion)
	close(d.hold)
	wg.Wait()
	for _, tok := range toks {
		if tok != "ya29.m1" {
			t.Fatalf("tokens %v", toks)
		}
	}
	if d.mints != 1 || d.aud != "https://oauth2.googleapis.com/token" {
		t.Fatalf("%d mints, aud %q", d.mints, d.aud)
	}
	clk.Set(t0.Add(time.Hour - vertex.Lead - time.Nanosecond))
	if tok, _ := m.Token(context.Background(), "c", key); tok != "ya29.m1" || d.mints != 1 {
		t.Fatalf("just before the lead: %q, %d mints", tok, d.mints)
	}
	clk.Set(t0.Add(time.Hour - vertex.Lead))
	if tok, _ := m.Token(context.Background(), "c", key); tok != "ya29.m2" || d.mints != 2 {
		t.Fatalf("at the lead: %q, %d mints", tok, d.mints)
	}
	other := keyFile(t, testKey, false, map[string]string{"private_key_id": "kid-2"})
	if tok, _ := m.Token(context.Background(), "c", other); tok != "ya29.m3" {
		t.Fatalf("new key: %q", tok)
	}
	d.refuse = true
	var me *vertex.MintError
	if _, err := m.Token(context.Background(), "d", key); !errors.As(err, &me) || me.Status != 400 || me.Code != "invalid_grant" {
		t.Fatalf("refused: %v", err)
	}
	od := &tokenDoer{}
	override := vertex.NewTokens(od, clk.Now, "http://127.0.0.1:9/token")
	if _, err := override.Token(context.Background(), "c", key); err != nil || od.aud != "http://127.0.0.1:9/token" {
		t.Fatalf("token URL override: aud %q, %v", od.aud, err)
	}
}

// TestExecutorURLsAndBodies: Gemini and Claude models go to their publisher
// with the minted token; the Claude body loses its model and gains the
// Vertex anthropic_version; a 401 drops the token and the call is sent once
// more with a new one; a refused key reads as a 401 in plain words.
func TestExecutorURLsAndBodies(t *testing.T) {
	clk := clock.NewFake(t0)
	d := &tokenDoer{reject: map[string]bool{}}
	e := vertex.New(d, "ua", vertex.NewTokens(d, clk.Now, ""))
	key := keyFile(t, testKey, false, nil)
	tgt := func(model string) *providers.Target {
		return &providers.Target{BaseURL: vertex.BaseURL("europe-west4"), Secret: key, Model: model, ConnectionID: "c",
			Google: providers.Google{Region: "europe-west4"}}
	}
	cases := []struct {
		model  string
		stream bool
		url    string
	}{
		{"gemini-2.5-pro", false, "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-one/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent"},
		{"gemini-2.5-pro", true, "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-one/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
		{"claude-sonnet-4-5@20250929", false, "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-one/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"},
		{"claude-sonnet-4-5@20250929", true, "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-one/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"},
	}
	for i, c := range cases {
		resp, err := e.Do(context.Background(), tgt(c.model), providers.Call{Body: []byte(`{"model":"x","messages":[]}`), Stream: c.stream,
			Anthropic: providers.AnthropicHeaders{Betas: []string{"b1", "b2"}}})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", c.model, resp, err)
		}
		req, body := d.vertex[i], d.bodies[i]
		if req.URL.String() != c.url || req.Header.Get("Authorization") != "Bearer ya29.m1" {
			t.Fatalf("%s: %s %q", c.model, req.URL, req.Header.Get("Authorization"))
		}
		claude := strings.HasPrefix(c.model, "claude")
		if claude != (gjson.GetBytes(body, "anthropic_version").String() == vertex.AnthropicVersion) || claude == gjson.GetBytes(body, "model").Exists() ||
			claude != (req.Header.Get("Anthropic-Beta") == "b1,b2") {
			t.Fatalf("%s body %s beta %q", c.model, body, req.Header.Get("Anthropic-Beta"))
		}
	}
	if d.mints != 1 {
		t.Fatalf("%d mints for four calls", d.mints)
	}
	d.reject["ya29.m1"] = true
	resp, err := e.Do(context.Background(), tgt("gemini-2.5-pro"), providers.Call{Body: []byte(`{}`)})
	if err != nil || resp.StatusCode != 200 || d.mints != 2 || d.vertex[len(d.vertex)-1].Header.Get("Authorization") != "Bearer ya29.m2" {
		t.Fatalf("401 retry: %v %v, %d mints", resp, err, d.mints)
	}
	d.reject["ya29.m2"], d.reject["ya29.m3"] = true, true
	if resp, _ := e.Do(context.Background(), tgt("gemini-2.5-pro"), providers.Call{Body: []byte(`{}`)}); resp.StatusCode != 401 || d.mints != 3 {
		t.Fatalf("second 401 is handed on: %d, %d mints", resp.StatusCode, d.mints)
	}
	d.refuse = true
	bad := tgt("gemini-2.5-pro")
	bad.ConnectionID = "other"
	resp, err = e.Do(context.Background(), bad, providers.Call{Body: []byte(`{}`)})
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("refused key: %v %v", resp, err)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(gjson.GetBytes(b, "error.message").String(), "refused the service account (HTTP 400: invalid_grant)") {
		t.Fatalf("refused key message: %s", b)
	}
	if _, err := vertex.Path("", "us-central1", "gemini-2.5-pro", false); err == nil {
		t.Fatal("a path without a project")
	}
	if _, err := vertex.Path("p-1", "us-central1", "../x", false); err == nil {
		t.Fatal("a model with a slash")
	}
}
