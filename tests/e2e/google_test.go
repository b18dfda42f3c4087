package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// geminiCLIClientID is the Gemini CLI's OAuth client id, which the catalogue
// sends with the refresh grant and the fake token server insists on.
const geminiCLIClientID = "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com"

// clientCall is one client format's request and where its answer's text is.
type clientCall struct {
	name string
	path string
	hdr  func(key string) map[string]string
	body func(model string, stream bool) any
}

// clientCalls are the four client formats, each asking model for "hi".
func clientCalls() []clientCall {
	bearer := func(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} }
	msg := []any{map[string]any{"role": "user", "content": "hi"}}
	return []clientCall{
		{"chat", "/v1/chat/completions", bearer, func(m string, s bool) any {
			return map[string]any{"model": m, "stream": s, "messages": msg}
		}},
		{"messages", "/v1/messages", func(k string) map[string]string { return map[string]string{"x-api-key": k} }, func(m string, s bool) any {
			return map[string]any{"model": m, "stream": s, "max_tokens": 64, "messages": msg}
		}},
		{"responses", "/v1/responses", bearer, func(m string, s bool) any {
			return map[string]any{"model": m, "stream": s, "input": "hi"}
		}},
		{"gemini", "", func(k string) map[string]string { return map[string]string{"x-goog-api-key": k} }, func(string, bool) any {
			return map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}}
		}},
	}
}

// answerText is the assistant text of an answer in any client format,
// whole or streamed (SSE).
func answerText(t *testing.T, body []byte, stream bool) string {
	t.Helper()
	var out strings.Builder
	collect := func(root gjson.Result) {
		for _, p := range []string{"choices.0.message.content", "choices.0.delta.content", "delta.text",
			"candidates.0.content.parts.#.text"} {
			r := root.Get(p)
			if r.IsArray() {
				for _, x := range r.Array() {
					out.WriteString(x.String())
				}
			} else {
				out.WriteString(r.String())
			}
		}
		if root.Get("type").String() == "response.output_text.delta" {
			out.WriteString(root.Get("delta").String())
		}
		if !stream {
			for _, c := range root.Get("content.#(type==\"text\")#.text").Array() {
				out.WriteString(c.String())
			}
			for _, o := range root.Get("output.#.content.#.text").Array() {
				for _, x := range o.Array() {
					out.WriteString(x.String())
				}
			}
		}
	}
	if !stream {
		if !gjson.ValidBytes(body) {
			t.Fatalf("answer is not JSON: %s", body)
		}
		collect(gjson.ParseBytes(body))
		return out.String()
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && gjson.Valid(d) {
			collect(gjson.Parse(d))
		}
	}
	return out.String()
}

// askAll sends every client format, whole and streamed, for model and
// checks each answer reads want.
func askAll(t *testing.T, g *gatewayProc, model, bareModel, want string) {
	t.Helper()
	for _, c := range clientCalls() {
		for _, stream := range []bool{false, true} {
			path := c.path
			if c.name == "gemini" {
				path = "/v1beta/models/" + bareModel + ":generateContent"
				if stream {
					path = "/v1beta/models/" + bareModel + ":streamGenerateContent?alt=sse"
				}
			}
			resp, body := g.do("POST", path, c.body(model, stream), c.hdr(g.key))
			if resp.StatusCode != 200 {
				t.Fatalf("%s stream=%v: %d %s", c.name, stream, resp.StatusCode, body)
			}
			if got := answerText(t, body, stream); got != want {
				t.Fatalf("%s stream=%v: answer %q, want %q\n%s", c.name, stream, got, want, body)
			}
		}
	}
}

// inFlight reads the gateway's omniroute_requests_in_flight gauge (/metrics).
func inFlight(t *testing.T, g *gatewayProc) int {
	t.Helper()
	resp, body := g.do("GET", "/metrics", nil, map[string]string{"Authorization": "Bearer " + g.token})
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "omniroute_requests_in_flight "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(n)
		}
	}
	t.Fatalf("no omniroute_requests_in_flight in /metrics")
	return 0
}

func fakeJWT(claims map[string]any) string {
	b, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc(b) + ".sig"
}

// TestGeminiCLILoginEndToEnd: a user signed in with the Gemini CLI imports
// the login (`omniroute import gemini-cli`); its access token has expired.
// Ten requests at once cause exactly one refresh at Google's token endpoint
// (the CLI's client id, a form grant); the account is onboarded to Code Assist
// once (loadCodeAssist, then onboardUser until its operation is done); every
// client format, whole and streamed, is answered through the Code Assist
// envelope with the refreshed token.
func TestGeminiCLILoginEndToEnd(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	up.SetCodeAssistOnboarding(true, 1)
	tokens := fakeupstream.NewTokenServer(geminiCLIClientID, "1//rt-initial")
	t.Cleanup(tokens.Close)
	home, dir := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "OMNIROUTE_GEMINI_CLI_OAUTH_TOKEN_URL=" + tokens.URL()}
	g := startGateway(t, dir, 0, env...)

	// The Gemini CLI's ~/.gemini/oauth_creds.json, expired an hour ago.
	old := "ya29.gemini-cli-expired-token"
	writeJSON(t, filepath.Join(home, ".gemini", "oauth_creds.json"), map[string]any{"access_token": old,
		"refresh_token": "1//rt-initial", "scope": "https://www.googleapis.com/auth/cloud-platform openid", "token_type": "Bearer",
		"id_token":    fakeJWT(map[string]any{"sub": "1077", "email": "dev@gmail.com"}),
		"expiry_date": time.Now().Add(-time.Hour).UnixMilli()})
	out, errOut, code := runCLI(t, append(gatewayEnv(dir, g.port), env...), "import", "gemini-cli")
	if code != 0 || !strings.Contains(out, "created") {
		t.Fatalf("import: code %d\n%s%s", code, out, errOut)
	}
	var id string
	for _, c := range g.mustMgmt(200, "GET", "/api/providers", nil)["connections"].([]any) {
		if m := c.(map[string]any); m["provider"] == "gemini-cli" {
			id = m["id"].(string)
			if m["name"] != "Gemini CLI (dev@gmail.com)" {
				t.Errorf("name %v", m["name"])
			}
		}
	}
	if id == "" {
		t.Fatal("no gemini-cli connection after the import")
	}
	// verify:false: the edit's check would refresh the token before the ten requests do.
	g.mustMgmt(200, "PATCH", "/api/providers/"+id, map[string]any{"baseUrl": upURL, "verify": false})

	// Ten at once on the expired token: one refresh.
	release := tokens.Hold()
	var wg sync.WaitGroup
	codes := make([]int, 10)
	bodies := make([][]byte, 10)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := g.chat(g.key, "gemini-cli/gemini-2.5-flash", i%2 == 1)
			codes[i], bodies[i] = resp.StatusCode, body
		}()
	}
	// The one exchange is held at the token server while all ten wait on it.
	waitFor(t, "the refresh to reach the token endpoint", func() bool { return tokens.Calls() > 0 })
	waitFor(t, "ten requests in flight", func() bool { return inFlight(t, g) == 10 })
	release()
	wg.Wait()
	for i, c := range codes {
		if c != 200 || answerText(t, bodies[i], i%2 == 1) != fakeupstream.Content("at-1") {
			t.Fatalf("request %d: %d %s", i, c, bodies[i])
		}
	}
	if n := tokens.Calls(); n != 1 {
		t.Fatalf("token endpoint called %d times, want exactly 1", n)
	}
	if up.Hits(old) != 0 {
		t.Fatalf("the expired token reached the upstream %d times", up.Hits(old))
	}
	if loads, onboards := up.CodeAssistLookups(); loads != 1 || onboards != 2 {
		t.Fatalf("project lookup: %d loadCodeAssist, %d onboardUser; want 1 and 2 (one pending poll)", loads, onboards)
	}
	call, _ := up.LastGoogle("at-1")
	env0 := gjson.ParseBytes(call.Body)
	if !strings.HasPrefix(call.Path, "/v1internal:") || env0.Get("model").String() != "gemini-2.5-flash" ||
		env0.Get("project").String() != fakeupstream.CodeAssistProject || !env0.Get("request.contents").IsArray() {
		t.Fatalf("Code Assist envelope: %s %s", call.Path, call.Body)
	}

	askAll(t, g, "gemini-cli/gemini-2.5-flash", "gemini-2.5-flash", fakeupstream.Content("at-1"))
	if tokens.Calls() != 1 {
		t.Fatalf("token endpoint called %d times", tokens.Calls())
	}
	// Test makes one real request through Code Assist and reads the
	// login's quota buckets for the Subscriptions card: the most used daily
	// model quota (gemini-2.5-flash, half left).
	chk := g.mustMgmt(200, "POST", "/api/providers/"+id+"/test", nil)
	completed := false
	for _, st := range chk["steps"].([]any) {
		if m := st.(map[string]any); m["step"] == "completion" && m["ok"] == true && m["status"] == float64(200) {
			completed = true
		}
	}
	if chk["ok"] != true || !completed {
		t.Fatalf("check: %v", chk)
	}
	conn := g.mustMgmt(200, "GET", "/api/providers/"+id, nil)["connection"].(map[string]any)
	quota, _ := conn["quota"].(map[string]any)
	daily, _ := quota["daily"].(map[string]any)
	if daily == nil || daily["utilization"] != 0.5 || quota["dailyModel"] != "gemini-2.5-flash" || daily["resetsAt"] != "2026-01-02T00:00:00Z" {
		t.Fatalf("quota meters: %v", conn["quota"])
	}
	// Secrets stay sealed and masked.
	if raw, _ := json.Marshal(conn); strings.Contains(string(raw), "at-1") || strings.Contains(string(raw), "rt-1") {
		t.Fatalf("a token is returned by the API: %s", raw)
	}
	g.stop()
}

// TestGeminiCLIQuotaLocksTheModelUntilItsReset: Code Assist's QUOTA_EXHAUSTED
// 429 (a daily model quota, its reset in RetryInfo) fails over to the next
// connection and locks that model on the login until the reset, while the
// login's other models keep serving.
func TestGeminiCLIQuotaLocksTheModelUntilItsReset(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	home, dir := t.TempDir(), t.TempDir()
	g := startGateway(t, dir, 0, "HOME="+home)
	writeJSON(t, filepath.Join(home, ".gemini", "oauth_creds.json"), map[string]any{"access_token": "ya29.quota-login",
		"refresh_token": "1//rt", "expiry_date": time.Now().Add(time.Hour).UnixMilli()})
	m := g.mustMgmt(201, "POST", "/api/providers/import", map[string]any{"source": "gemini-cli"})
	id := m["connection"].(map[string]any)["id"].(string)
	g.mustMgmt(200, "PATCH", "/api/providers/"+id, map[string]any{"verify": false, "baseUrl": upURL, "priority": 1})
	g.mustMgmt(201, "POST", "/api/providers", map[string]any{"verify": false, "provider": "gemini", "name": "key", "apiKey": "gk-backup",
		"baseUrl": upURL + "/v1beta", "priority": 2, "models": []string{"gemini-2.5-pro"}})

	up.SetFault("ya29.quota-login", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Body: fakeupstream.CodeAssistQuotaBody, Times: 1})
	resp, body := g.chat(g.key, "gemini-2.5-pro", false)
	if resp.StatusCode != 200 || answerText(t, body, false) != fakeupstream.Content("gk-backup") {
		t.Fatalf("failover: %d %s", resp.StatusCode, body)
	}
	locks := g.mustMgmt(200, "GET", "/api/resilience/model-cooldowns", nil)
	found := false
	for _, l := range locks["items"].([]any) {
		lm := l.(map[string]any)
		if lm["connectionId"] == id && lm["model"] == "gemini-2.5-pro" {
			found = true
			if ms, _ := lm["remainingMs"].(float64); ms < 9000_000 || ms > 9400_000 {
				t.Errorf("lock remaining %v ms, want the 9384 s reset", lm["remainingMs"])
			}
		}
	}
	if !found {
		t.Fatalf("no lock of gemini-2.5-pro on the login: %v", locks)
	}
	// The model stays away from the login; another model on it still serves.
	hits := up.Hits("ya29.quota-login")
	if resp, body := g.chat(g.key, "gemini-2.5-pro", false); resp.StatusCode != 200 || up.Hits("ya29.quota-login") != hits {
		t.Fatalf("locked model tried again: %d %s", resp.StatusCode, body)
	}
	if resp, body := g.chat(g.key, "gemini-cli/gemini-2.5-flash", false); resp.StatusCode != 200 ||
		answerText(t, body, false) != fakeupstream.Content("ya29.quota-login") {
		t.Fatalf("other model: %d %s", resp.StatusCode, body)
	}
	g.stop()
}

// TestVertexServiceAccountEndToEnd: a vertex connection from a service
// account's JSON key: the key is sealed (never returned), the project and
// region are the connection's; one access token is minted (a JWT the fake
// verifies with the account's public key) for ten requests at once; Gemini
// models answer on publishers/google generateContent and Claude models on
// publishers/anthropic rawPredict, for every client format, whole and streamed.
func TestVertexServiceAccountEndToEnd(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	sa, err := fakeupstream.NewServiceAccountKey("vertex-proj-7", "http://127.0.0.1:1/unused")
	if err != nil {
		t.Fatal(err)
	}
	tokens := fakeupstream.NewJWTTokenServer(sa.Email, &sa.Key.PublicKey)
	t.Cleanup(tokens.Close)
	dir := t.TempDir()
	g := startGateway(t, dir, 0, "OMNIROUTE_VERTEX_TOKEN_URL="+tokens.URL())

	// A key that is not a service account's is refused with a clear 400.
	code, bad := g.mgmt("POST", "/api/providers", map[string]any{"provider": "vertex", "name": "v", "apiKey": `{"type":"authorized_user"}`})
	if code != 400 || !strings.Contains(bad["error"].(map[string]any)["message"].(string), "service_account") {
		t.Fatalf("bad key: %d %v", code, bad)
	}
	m := g.mustMgmt(201, "POST", "/api/providers", map[string]any{"verify": false, "provider": "vertex", "name": "vertex", "apiKey": sa.JSON,
		"baseUrl": upURL + "/v1", "providerSpecificData": map[string]any{"region": "europe-west4"},
		"models": []string{"gemini-2.5-flash", "claude-sonnet-4-5@20250929"}})
	conn := m["connection"].(map[string]any)
	raw, _ := json.Marshal(conn)
	if strings.Contains(string(raw), "PRIVATE KEY") || strings.Contains(string(raw), sa.JSON[:40]) {
		t.Fatalf("the key is returned by the API: %s", raw)
	}
	psd := conn["providerSpecificData"].(map[string]any)
	if psd["projectId"] != "vertex-proj-7" || psd["region"] != "europe-west4" || psd["clientEmail"] != sa.Email {
		t.Fatalf("providerSpecificData %v", psd)
	}

	release := tokens.Hold()
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := g.chat(g.key, "vertex/gemini-2.5-flash", i%2 == 0)
			codes[i] = resp.StatusCode
		}()
	}
	waitFor(t, "the mint to reach the token endpoint", func() bool { c, _ := tokens.Calls(); return c > 0 })
	waitFor(t, "ten requests in flight", func() bool { return inFlight(t, g) == 10 })
	release()
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("request %d: %d", i, c)
		}
	}
	if calls, refused := tokens.Calls(); calls != 1 || refused != 0 {
		t.Fatalf("token endpoint: %d calls, %d refused; want one accepted mint", calls, refused)
	}
	tok := "ya29.vertex-1"
	if call, _ := up.LastGoogle(tok); call.Path != "/v1/projects/vertex-proj-7/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse" &&
		call.Path != "/v1/projects/vertex-proj-7/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent" {
		t.Fatalf("Vertex Gemini path %q", call.Path)
	}

	askAll(t, g, "vertex/gemini-2.5-flash", "gemini-2.5-flash", fakeupstream.Content(tok))
	askAll(t, g, "vertex/claude-sonnet-4-5@20250929", "claude-sonnet-4-5@20250929", fakeupstream.Content(tok))
	call, _ := up.LastGoogle(tok)
	if !strings.HasSuffix(call.Path, "/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict") ||
		gjson.GetBytes(call.Body, "model").Exists() || gjson.GetBytes(call.Body, "anthropic_version").String() != "vertex-2023-10-16" {
		t.Fatalf("Vertex Claude call: %s %s", call.Path, call.Body)
	}
	if calls, _ := tokens.Calls(); calls != 1 {
		t.Fatalf("token minted %d times for one hour of requests", calls)
	}

	// Test (the credential check) makes one real request and passes.
	chk := g.mustMgmt(200, "POST", "/api/providers/"+conn["id"].(string)+"/test", nil)
	if chk["ok"] != true {
		t.Fatalf("check: %v", chk)
	}

	// A key Google no longer trusts: the connection's credentials are blamed
	// (an auth failure, the connection cooled), in plain words.
	other, _ := fakeupstream.NewServiceAccountKey("vertex-proj-7", "")
	tokens.Trust(&other.Key.PublicKey)
	g.mustMgmt(200, "PATCH", "/api/providers/"+conn["id"].(string), map[string]any{"verify": false, "apiKey": strings.Replace(sa.JSON, "fake-key-id-1", "fake-key-id-2", 1)})
	resp, body := g.chat(g.key, "vertex/gemini-2.5-flash", false)
	if resp.StatusCode == 200 || !strings.Contains(string(body), "Upstream authentication failed") || !strings.Contains(string(body), "refused the service account") {
		t.Fatalf("untrusted key: %d %s", resp.StatusCode, body)
	}
	g.stop()
}
