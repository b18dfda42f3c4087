package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/oauth"
	"omniroute/backend/providers"
	"omniroute/backend/providers/registry"
	"omniroute/backend/routing"
	"omniroute/tests/fakeupstream"
)

const ghToken = "gho_unit_token"

// copilotFixture is a store with one GitHub Copilot connection whose
// Copilot token expires at exp, against a fake Copilot.
func copilotFixture(t *testing.T, exp time.Time) (*fixture, *fakeupstream.Copilot, *routing.Conn, *http.Client) {
	t.Helper()
	up := fakeupstream.New()
	t.Cleanup(up.Close)
	cp := fakeupstream.NewCopilot(up, "Iv1.unit", ghToken)
	t.Cleanup(cp.Close)
	env := map[string]string{}
	for _, kv := range cp.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	f := newFixture(t, func(k string) string { return env[k] })
	res, err := oauth.Upsert(f.st, f.box, f.cat, oauth.Login{Source: "github-copilot", AccessToken: "cpt-0", RefreshToken: ghToken,
		ExpiresAt: exp, AccountID: "4242", Username: "octo", Endpoint: "http://127.0.0.1:9/old"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Connection.Provider != "github-copilot" || res.Connection.BaseURL != "http://127.0.0.1:9/old" || res.Connection.Name != "GitHub Copilot (octo)" {
		t.Fatalf("upsert: %+v", res.Connection)
	}
	f.load(t)
	conn, _ := f.reg.Get(res.Connection.ID)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	return f, cp, conn, client
}

// TestCopilotRefreshLeadBoundary: the Copilot token is exchanged again
// exactly DefaultLead before its expiry, not a nanosecond sooner; the new
// token, its expiry and endpoint are used and persisted, the GitHub token kept.
func TestCopilotRefreshLeadBoundary(t *testing.T) {
	exp := t0.Add(10 * time.Minute)
	f, cp, conn, client := copilotFixture(t, exp)
	clk := clock.NewFake(exp.Add(-oauth.DefaultLead - time.Nanosecond))
	r := oauth.NewRefresher(oauth.RefresherDeps{Store: f.st, Box: f.box, Client: client, Clock: clk})
	if tok, err := r.Fresh(context.Background(), conn); err != nil || tok != "cpt-0" || cp.Exchanges() != 0 {
		t.Fatalf("before the lead: %q %v, %d exchanges", tok, err, cp.Exchanges())
	}
	clk.Set(exp.Add(-oauth.DefaultLead))
	tok, err := r.Fresh(context.Background(), conn)
	if err != nil || tok != fakeupstream.CopilotTokenN(1) || cp.Exchanges() != 1 {
		t.Fatalf("at the lead: %q %v, %d exchanges", tok, err, cp.Exchanges())
	}
	if conn.Endpoint() != cp.URL() || conn.Target("m").BaseURL != cp.URL() {
		t.Fatalf("endpoint %q, want the exchange's %q", conn.Endpoint(), cp.URL())
	}
	row, _ := f.st.Connection(conn.ID)
	access, _ := f.box.Open(row.AccessTokenEnc)
	refresh, _ := f.box.Open(row.RefreshTokenEnc)
	if access != tok || refresh != ghToken || row.ExpiresAt <= exp.UnixMilli() {
		t.Fatalf("persisted access %q refresh %q expires %d", access, refresh, row.ExpiresAt)
	}
}

// TestCopilotExchangeSingleFlightAcrossExpiry: ten requests that find the
// token expired share one exchange.
func TestCopilotExchangeSingleFlightAcrossExpiry(t *testing.T) {
	exp := t0.Add(10 * time.Minute)
	f, cp, conn, client := copilotFixture(t, exp)
	clk := clock.NewFake(exp) // expired this instant
	r := oauth.NewRefresher(oauth.RefresherDeps{Store: f.st, Box: f.box, Client: client, Clock: clk})
	release := cp.Hold()
	var wg sync.WaitGroup
	toks := make([]string, 10)
	errsOut := make([]error, 10)
	for i := range toks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], errsOut[i] = r.Fresh(context.Background(), conn)
		}()
	}
	for cp.Exchanges() == 0 {
		time.Sleep(time.Millisecond) // waiting for the held exchange to arrive, not timing
	}
	release()
	wg.Wait()
	for i := range toks {
		if errsOut[i] != nil || toks[i] != fakeupstream.CopilotTokenN(1) {
			t.Errorf("request %d: %q %v", i, toks[i], errsOut[i])
		}
	}
	if n := cp.Exchanges(); n != 1 {
		t.Fatalf("%d exchanges, want 1", n)
	}
	// A 401 with the stale token (the Refresh path) does not exchange again.
	if tok, err := r.Refresh(context.Background(), conn, "cpt-0"); err != nil || tok != fakeupstream.CopilotTokenN(1) || cp.Exchanges() != 1 {
		t.Fatalf("refresh of the stale token: %q %v, %d exchanges", tok, err, cp.Exchanges())
	}
}

// TestCopilotExchangeErrors: a revoked GitHub login and an account without a
// seat are refresh errors (the connection's auth verdict); a login without a
// seat is COPILOT_NOT_ENTITLED.
func TestCopilotExchangeErrors(t *testing.T) {
	f, cp, conn, client := copilotFixture(t, t0)
	p := conn.Provider
	x := providers.LoginCall{OAuth: *p.OAuth, Client: client, Now: t0}
	exchange := p.TokenRefresher()
	var te *providers.TokenError
	if _, err := exchange(context.Background(), x, "gho_other"); !errors.As(err, &te) || te.Status != 401 {
		t.Fatalf("bad GitHub token: %v", err)
	}
	cp.SetEntitled(false)
	if _, err := exchange(context.Background(), x, ghToken); !errors.As(err, &te) || te.Code != "copilot_not_entitled" || te.Status != 403 {
		t.Fatalf("no seat: %v", err)
	}
	if _, err := p.LoginFlow().Finish(context.Background(), x, ghToken); errs.As(err).Code != "COPILOT_NOT_ENTITLED" {
		t.Fatalf("login without a seat: %v", err)
	}
	clk := clock.NewFake(t0)
	r := oauth.NewRefresher(oauth.RefresherDeps{Store: f.st, Box: f.box, Client: client, Clock: clk})
	_, err := r.Fresh(context.Background(), conn)
	var re *oauth.RefreshError
	if !errors.As(err, &re) || re.Code != "copilot_not_entitled" || re.Status != 403 {
		t.Fatalf("expired token without a seat: %v", err)
	}
}

// TestDeviceFlow: the device code, the pending and refused answers, the
// token, through the module's login hooks.
func TestDeviceFlow(t *testing.T) {
	_, cp, conn, client := copilotFixture(t, t0)
	flow := conn.Provider.LoginFlow()
	x := providers.LoginCall{OAuth: *conn.Provider.OAuth, Client: client, Now: t0}
	dev, err := flow.Start(context.Background(), x)
	if err != nil || dev.UserCode != fakeupstream.CopilotUserCode || dev.VerificationURI != cp.URL()+"/login/device" ||
		dev.Interval != time.Second || !dev.ExpiresAt.Equal(t0.Add(900*time.Second)) || dev.DeviceCode == "" {
		t.Fatalf("start: %+v %v", dev, err)
	}
	var de *providers.DeviceError
	if _, err := flow.Poll(context.Background(), x, dev.DeviceCode); !errors.As(err, &de) || de.Code != providers.DevicePending || de.Terminal() {
		t.Fatalf("pending: %v", err)
	}
	if _, err := flow.Poll(context.Background(), x, "wrong"); !errors.As(err, &de) || !de.Terminal() {
		t.Fatalf("wrong device code: %v", err)
	}
	cp.Approve()
	if tok, err := flow.Poll(context.Background(), x, dev.DeviceCode); err != nil || tok != ghToken {
		t.Fatalf("approved: %q %v", tok, err)
	}
	bad := x
	bad.OAuth.ClientID = "someone-else"
	if _, err := flow.Start(context.Background(), bad); errs.As(err).Code != "GITHUB_DEVICE_CODE_FAILED" {
		t.Fatalf("wrong client id: %v", err)
	}
}

// The catalogue entry's device-flow URLs follow the env overrides.
func TestCopilotCatalogueOverrides(t *testing.T) {
	env := map[string]string{"OMNIROUTE_GITHUB_COPILOT_OAUTH_DEVICE_CODE_URL": "http://x/dc", "OMNIROUTE_GITHUB_COPILOT_OAUTH_ACCESS_TOKEN_URL": "http://x/at",
		"OMNIROUTE_GITHUB_COPILOT_OAUTH_USER_URL": "http://x/u", "OMNIROUTE_GITHUB_COPILOT_OAUTH_TOKEN_URL": "http://x/t"}
	p, ok := registry.Catalog(func(k string) string { return env[k] }).Lookup("copilot")
	if !ok || p.ID != "github-copilot" || p.OAuth.DeviceCodeURL != "http://x/dc" || p.OAuth.AccessTokenURL != "http://x/at" ||
		p.OAuth.UserURL != "http://x/u" || p.OAuth.TokenURL != "http://x/t" {
		t.Fatalf("%+v", p.OAuth)
	}
	d, _ := registry.Catalog(nil).Lookup("github-copilot")
	if d.OAuth.DeviceCodeURL != "https://github.com/login/device/code" || d.OAuth.TokenURL != "https://api.github.com/copilot_internal/v2/token" {
		t.Fatalf("defaults: %+v", d.OAuth)
	}
}
