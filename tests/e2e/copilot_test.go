package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/testproc"
)

// copilotClientID is the device-flow client id the fake accepts (set on the
// gateway by OMNIROUTE_GITHUB_COPILOT_OAUTH_CLIENT_ID).
const copilotClientID = "Iv1.e2e-copilot"

// chatText is a chat answer's assistant text: the message of a JSON answer,
// or a stream's content deltas joined.
func chatText(body []byte) string {
	if gjson.ValidBytes(body) {
		return gjson.GetBytes(body, "choices.0.message.content").String()
	}
	var b strings.Builder
	for _, line := range strings.Split(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && gjson.Valid(data) {
			b.WriteString(gjson.Get(data, "choices.0.delta.content").String())
		}
	}
	return b.String()
}

// TestCopilotDeviceLoginAndTokenExchange drives GitHub Copilot through the
// binary: the dashboard's device login (start, polls throttled to GitHub's
// interval, approval) creates the connection at the exchange's endpoint with
// its models discovered; chats carry the Copilot token and editor headers;
// ten concurrent requests while the token is due for refresh, and ten more
// after the upstream stopped taking it, each make exactly one exchange.
func TestCopilotDeviceLoginAndTokenExchange(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	t.Cleanup(up.Close)
	cp := fakeupstream.NewCopilot(up, copilotClientID, "gho_e2e_github_token")
	t.Cleanup(cp.Close)
	// The login's token expires in 4 min: valid, but within the 5 min refresh lead.
	cp.SetTokenTTL(4 * time.Minute)
	g := startGateway(t, t.TempDir(), 0, cp.Env()...)

	start := g.mustMgmt(http.StatusCreated, "POST", "/api/providers/login/copilot", nil)
	if start["userCode"] != fakeupstream.CopilotUserCode || start["verificationUri"] != cp.URL()+"/login/device" || start["interval"] != float64(1) {
		t.Fatalf("start: %v", start)
	}
	if _, leaked := start["deviceCode"]; leaked {
		t.Fatalf("the device code left the gateway: %v", start)
	}
	flow := "/api/providers/login/copilot/" + start["flowId"].(string)
	// Polled faster than GitHub's interval: pending, GitHub not asked.
	if p := g.mustMgmt(200, "GET", flow, nil); p["status"] != "pending" || cp.Polls() != 0 {
		t.Fatalf("early poll: %v, GitHub polled %d times", p, cp.Polls())
	}
	var p map[string]any
	waitFor(t, "a device poll reaching GitHub", func() bool {
		p = g.mustMgmt(200, "GET", flow, nil)
		return cp.Polls() == 1
	})
	if p["status"] != "pending" {
		t.Fatalf("before approval: %v", p)
	}
	cp.Approve()
	waitFor(t, "the login to complete", func() bool {
		p = g.mustMgmt(200, "GET", flow, nil)
		return p["status"] != "pending"
	})
	conn, _ := p["connection"].(map[string]any)
	if p["status"] != "complete" || p["created"] != true || conn["provider"] != "github-copilot" || conn["baseUrl"] != cp.URL() ||
		conn["name"] != "GitHub Copilot ("+fakeupstream.CopilotLogin+")" {
		t.Fatalf("complete: %v", p)
	}
	served, _ := conn["servedModels"].([]any)
	if !slices.Contains(served, any("gpt-4o")) || conn["modelsSource"] != "upstream" {
		t.Fatalf("models not discovered from the Copilot endpoint: %v", conn)
	}
	// The login's exchange, then discovery's: the first token was already due.
	if cp.Exchanges() != 2 {
		t.Fatalf("login made %d token exchanges, want 2 (the login's, and discovery refreshing the due token)", cp.Exchanges())
	}
	if h := cp.LastChatHeader(); h.Get("Editor-Version") == "" || h.Get("Copilot-Integration-Id") != "vscode-chat" {
		t.Fatalf("discovery without the editor headers: %v", h)
	}

	// Ten concurrent chats while the token is due: one exchange, all answered with the new token.
	cp.SetTokenTTL(30 * time.Minute)
	burst := func(wantToken string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan string, 10)
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, body := g.chat(g.key, "github-copilot/gpt-4o", i%2 == 0)
				if resp.StatusCode != 200 || !strings.Contains(chatText(body), fakeupstream.Content(wantToken)) {
					errs <- resp.Status + " " + string(body)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("chat: %s", e)
		}
	}
	release := cp.Hold()
	var held sync.WaitGroup
	held.Add(1)
	go func() {
		defer held.Done()
		burst(fakeupstream.CopilotTokenN(3))
	}()
	waitFor(t, "the exchange", func() bool { return cp.Exchanges() == 3 })
	release()
	held.Wait()
	if n := cp.Exchanges(); n != 3 {
		t.Fatalf("10 concurrent requests made %d exchanges, want 1", n-2)
	}
	h := cp.LastChatHeader()
	if h.Get("Authorization") != "Bearer "+fakeupstream.CopilotTokenN(3) || h.Get("Editor-Version") == "" || h.Get("Editor-Plugin-Version") == "" ||
		h.Get("Copilot-Integration-Id") != "vscode-chat" || !strings.HasPrefix(h.Get("User-Agent"), "GitHubCopilotChat/") {
		t.Fatalf("chat headers: %v", h)
	}

	// The upstream stops taking the token before its stated expiry: each
	// request's 401 asks for a refresh, and they share one exchange.
	cp.Revoke()
	burst(fakeupstream.CopilotTokenN(4))
	if n := cp.Exchanges(); n != 4 {
		t.Fatalf("10 requests refused with a stale token made %d exchanges, want 1", n-3)
	}
	// A second login of the same GitHub account updates the connection.
	start = g.mustMgmt(http.StatusCreated, "POST", "/api/providers/login/copilot", nil)
	flow = "/api/providers/login/copilot/" + start["flowId"].(string)
	waitFor(t, "the second login", func() bool {
		p = g.mustMgmt(200, "GET", flow, nil)
		return p["status"] != "pending"
	})
	if p["status"] != "complete" || p["created"] != false {
		t.Fatalf("re-login: %v", p)
	}
	if code, m := g.mgmt("GET", "/api/providers/login/copilot/nope", nil); code != 404 || m["error"].(map[string]any)["code"] != "LOGIN_NOT_FOUND" {
		t.Fatalf("unknown flow: %d %v", code, m)
	}
	g.stop()
}

// TestCopilotLoginCommand: `omniroute login copilot` prints the code and
// URL and waits for the approval, through the running gateway (which then
// routes the connection) and, with no gateway, in its own process (the
// connection is there at the next start, and ten concurrent requests that
// find its token expired share one exchange); a refused login and an
// account without a Copilot seat fail with a clear message.
func TestCopilotLoginCommand(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	t.Cleanup(up.Close)
	cp := fakeupstream.NewCopilot(up, copilotClientID, "gho_cli_github_token")
	t.Cleanup(cp.Close)
	dir := t.TempDir()
	port := testproc.FreePort(t)
	env := gatewayEnv(dir, port, cp.Env()...)

	// Offline, refused on GitHub.
	cp.Deny()
	out, errOut, code := runCLI(t, env, "login", "copilot")
	if code == 0 || !strings.Contains(out, fakeupstream.CopilotUserCode) || !strings.Contains(errOut, "cancelled on GitHub") {
		t.Fatalf("denied login: code %d\n%s%s", code, out, errOut)
	}

	// Offline, approved after the first pending poll; the Copilot token the
	// login stores has already expired when the gateway starts.
	cp = fakeupstream.NewCopilot(up, copilotClientID, "gho_cli_github_token")
	t.Cleanup(cp.Close)
	cp.SetTokenTTL(-time.Minute)
	env = gatewayEnv(dir, port, cp.Env()...)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for cp.Polls() == 0 && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		cp.Approve()
	}()
	out, errOut, code = runCLI(t, env, "login", "copilot")
	if code != 0 || !strings.Contains(out, "open "+cp.URL()+"/login/device and enter the code "+fakeupstream.CopilotUserCode) || !strings.Contains(out, "created") {
		t.Fatalf("offline login: code %d\n%s%s", code, out, errOut)
	}

	g := startGateway(t, dir, port, cp.Env()...)
	conns := g.mustMgmt(200, "GET", "/api/providers", nil)["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["provider"] != "github-copilot" || conns[0].(map[string]any)["baseUrl"] != cp.URL() {
		t.Fatalf("after an offline login: %v", conns)
	}
	// Ten concurrent chats find the token expired: they wait for one exchange.
	cp.SetTokenTTL(30 * time.Minute)
	if n := cp.Exchanges(); n != 1 {
		t.Fatalf("the offline login made %d exchanges, want 1", n)
	}
	release := cp.Hold()
	var wg sync.WaitGroup
	failed := make(chan string, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := g.chat(g.key, "github-copilot/gpt-4o", i%2 == 1)
			if resp.StatusCode != 200 || chatText(body) != fakeupstream.Content(fakeupstream.CopilotTokenN(2)) {
				failed <- resp.Status + " " + string(body)
			}
		}()
	}
	waitFor(t, "the exchange", func() bool { return cp.Exchanges() == 2 })
	release()
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Errorf("chat across the expiry: %s", f)
	}
	if n := cp.Exchanges(); n != 2 {
		t.Fatalf("10 concurrent requests across the expiry made %d exchanges, want 1", n-1)
	}

	// Online: through the running gateway, an account without a seat.
	cp.SetEntitled(false)
	out, errOut, code = runCLI(t, env, "login", "copilot")
	if code == 0 || !strings.Contains(errOut, "no GitHub Copilot access") {
		t.Fatalf("login without a seat: code %d\n%s%s", code, out, errOut)
	}
	cp.SetEntitled(true)
	out, errOut, code = runCLI(t, env, "login", "copilot")
	if code != 0 || !strings.Contains(out, "updated") {
		t.Fatalf("online re-login: code %d\n%s%s", code, out, errOut)
	}
	g.stop()
}
