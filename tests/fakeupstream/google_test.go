package fakeupstream

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func (f *fixture) post(t *testing.T, path, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, f.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestCodeAssistWire: the project comes from loadCodeAssist (after
// onboardUser for a new account); generateContent wants the envelope and
// answers inside {"response"}, each SSE event too; what breaks the
// contract is Google's 400/403.
func TestCodeAssistWire(t *testing.T) {
	f := newFixture(t)
	f.u.SetCodeAssistOnboarding(true, 1)
	meta := `{"metadata":{"ideType":"IDE_UNSPECIFIED","platform":"PLATFORM_UNSPECIFIED","pluginType":"GEMINI"}}`
	if _, b := f.post(t, "/v1internal:loadCodeAssist", "tok", meta); gjson.Get(b, "cloudaicompanionProject").Exists() || !gjson.Get(b, `allowedTiers.#(isDefault==true).id`).Exists() {
		t.Fatalf("new account: %s", b)
	}
	if _, b := f.post(t, "/v1internal:onboardUser", "tok", `{"tierId":"free-tier","metadata":{}}`); gjson.Get(b, "done").Bool() {
		t.Fatalf("first poll done: %s", b)
	}
	if _, b := f.post(t, "/v1internal:onboardUser", "tok", `{"tierId":"free-tier","metadata":{}}`); gjson.Get(b, "response.cloudaicompanionProject.id").String() != CodeAssistProject {
		t.Fatalf("onboarded: %s", b)
	}
	if _, b := f.post(t, "/v1internal:loadCodeAssist", "tok", meta); gjson.Get(b, "cloudaicompanionProject").String() != CodeAssistProject {
		t.Fatalf("after onboarding: %s", b)
	}
	req := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	env := `{"model":"gemini-2.5-flash","project":"` + CodeAssistProject + `","request":` + req + `}`
	resp, b := f.post(t, "/v1internal:generateContent", "tok", env)
	if resp.StatusCode != 200 || gjson.Get(b, "response.candidates.0.content.parts.0.text").String() != Content("tok") || gjson.Get(b, "candidates").Exists() {
		t.Fatalf("whole: %d %s", resp.StatusCode, b)
	}
	resp, b = f.post(t, "/v1internal:streamGenerateContent?alt=sse", "tok", env)
	var text string
	events := 0
	for _, line := range strings.Split(b, "\n") {
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: "); ok {
			events++
			if !gjson.Get(d, "response").IsObject() {
				t.Fatalf("event not wrapped: %s", d)
			}
			text += gjson.Get(d, "response.candidates.0.content.parts.0.text").String()
		}
	}
	if resp.StatusCode != 200 || events < 2 || text != Content("tok") {
		t.Fatalf("stream: %d %d events %q\n%s", resp.StatusCode, events, text, b)
	}
	for _, c := range []struct{ body, status string }{
		{req, "INVALID_ARGUMENT"},
		{`{"model":"models/gemini-2.5-flash","project":"` + CodeAssistProject + `","request":` + req + `}`, "INVALID_ARGUMENT"},
		{`{"model":"gemini-2.5-flash","project":"other","request":` + req + `}`, "PERMISSION_DENIED"},
	} {
		if _, b := f.post(t, "/v1internal:generateContent", "tok", c.body); gjson.Get(b, "error.status").String() != c.status {
			t.Errorf("%s: %s", c.body, b)
		}
	}
	if resp, _ := f.post(t, "/v1internal:generateContent", "", env); resp.StatusCode != 401 {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	f.u.SetFault("tok", Fault{Mode: ModeStatus, Status: 429, Body: CodeAssistQuotaBody, Times: 1})
	if resp, b := f.post(t, "/v1internal:generateContent", "tok", env); resp.StatusCode != 429 || gjson.Get(b, "error.details.0.reason").String() != "QUOTA_EXHAUSTED" {
		t.Fatalf("quota fault: %d %s", resp.StatusCode, b)
	}
}

// TestVertexAnthropicContract: rawPredict wants no model and the Vertex
// anthropic_version, and the stream flag of its method.
func TestVertexAnthropicContract(t *testing.T) {
	f := newFixture(t)
	p := "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:"
	good := `{"anthropic_version":"vertex-2023-10-16","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	if resp, b := f.post(t, p+"rawPredict", "ya29.x", good); resp.StatusCode != 200 || gjson.Get(b, "content.0.text").String() != Content("ya29.x") {
		t.Fatalf("good: %d %s", resp.StatusCode, b)
	}
	for _, c := range []struct{ method, body string }{
		{"rawPredict", `{"model":"claude","anthropic_version":"vertex-2023-10-16","max_tokens":8,"messages":[]}`},
		{"rawPredict", `{"anthropic_version":"2023-06-01","max_tokens":8,"messages":[]}`},
		{"streamRawPredict", good},
	} {
		if resp, b := f.post(t, p+c.method, "ya29.x", c.body); resp.StatusCode != 400 {
			t.Errorf("%s %s: %d %s", c.method, c.body, resp.StatusCode, b)
		}
	}
	if call, ok := f.u.LastGoogle("ya29.x"); !ok || !strings.HasSuffix(call.Path, ":streamRawPredict") {
		t.Fatalf("recorded %+v", call)
	}
}

// TestJWTTokenServerVerifiesTheSignature: an assertion signed with the
// service account's key is exchanged; one signed with another key, or with
// the wrong audience, is refused as Google does (400 invalid_grant).
func TestJWTTokenServerVerifiesTheSignature(t *testing.T) {
	sa, err := NewServiceAccountKey("proj-x", "")
	if err != nil {
		t.Fatal(err)
	}
	ts := NewJWTTokenServer(sa.Email, &sa.Key.PublicKey)
	defer ts.Close()
	other, _ := rsa.GenerateKey(rand.Reader, 1024)
	sign := func(k *rsa.PrivateKey, aud string) string {
		enc := base64.RawURLEncoding.EncodeToString
		s := enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc([]byte(`{"iss":"`+sa.Email+`","aud":"`+aud+`","scope":"https://www.googleapis.com/auth/cloud-platform","iat":1000,"exp":4600}`))
		sum := sha256.Sum256([]byte(s))
		sig, _ := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		return s + "." + enc(sig)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	exchange := func(assertion string) (int, string) {
		resp, err := client.PostForm(ts.URL(), url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := exchange(sign(sa.Key, ts.URL())); code != 200 || gjson.Get(b, "access_token").String() != "ya29.vertex-1" {
		t.Fatalf("good assertion: %d %s", code, b)
	}
	for name, a := range map[string]string{"other key": sign(other, ts.URL()), "wrong audience": sign(sa.Key, "https://elsewhere/token"), "garbage": "a.b.c"} {
		if code, b := exchange(a); code != 400 || gjson.Get(b, "error").String() != "invalid_grant" {
			t.Errorf("%s: %d %s", name, code, b)
		}
	}
	if calls, refused := ts.Calls(); calls != 4 || refused != 3 {
		t.Fatalf("calls %d refused %d", calls, refused)
	}
}
