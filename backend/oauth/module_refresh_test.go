package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/oauth"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
)

// TestModuleRefreshHook: a provider module's own Refresh stands in for the
// OAuth grant: the refresher hands it the stored refresh credential and the
// row's OAuth, stores what it answers (access, refresh, expiry) and points
// the connection at the endpoint it names; its refusal is a RefreshError
// with the hook's status and code. A made-up provider shows the refresher
// names none.
func TestModuleRefreshHook(t *testing.T) {
	var calls atomic.Int32
	var refuse atomic.Bool
	mod := providers.Module{ID: "acme",
		Rows: []providers.Provider{{ID: "acme", Name: "Acme", Category: providers.CategoryOAuth, Format: providers.FormatOpenAI, BaseURL: "https://acme.test",
			OAuth: &providers.OAuth{ImportSource: "acme", TokenURL: "https://acme.test/token"}}},
		Refresh: func(_ context.Context, x providers.LoginCall, refresh string) (providers.Tokens, error) {
			calls.Add(1)
			if refuse.Load() {
				return providers.Tokens{}, &providers.TokenError{Status: 403, Code: "no_seat", Message: "no seat"}
			}
			if refresh != "r-1" || x.OAuth.TokenURL != "https://acme.test/token" || x.Client == nil {
				t.Errorf("hook called with %q %+v", refresh, x)
			}
			return providers.Tokens{Access: "a-2", Refresh: "r-2", ExpiresAt: x.Now.Add(time.Hour), Endpoint: "http://127.0.0.1:9/acme"}, nil
		},
	}
	f := newFixture(t, nil)
	f.cat = providers.NewCatalog().WithModules(mod)
	f.reg = routing.NewRegistry(f.cat)
	res, err := oauth.Upsert(f.st, f.box, f.cat, oauth.Login{Source: "acme", AccessToken: "a-1", RefreshToken: "r-1", ExpiresAt: t0, AccountID: "u1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	f.load(t)
	conn, _ := f.reg.Get(res.Connection.ID)
	r := oauth.NewRefresher(oauth.RefresherDeps{Store: f.st, Box: f.box, Client: &http.Client{}, Clock: clock.NewFake(t0)})
	tok, err := r.Fresh(context.Background(), conn)
	if err != nil || tok != "a-2" || calls.Load() != 1 || conn.Endpoint() != "http://127.0.0.1:9/acme" {
		t.Fatalf("refresh: %q %v, %d calls, endpoint %q", tok, err, calls.Load(), conn.Endpoint())
	}
	row, _ := f.st.Connection(conn.ID)
	refresh, _ := f.box.Open(row.RefreshTokenEnc)
	if refresh != "r-2" || row.ExpiresAt != t0.Add(time.Hour).UnixMilli() {
		t.Fatalf("persisted refresh %q expires %d", refresh, row.ExpiresAt)
	}
	refuse.Store(true)
	var re *oauth.RefreshError
	if _, err := r.Refresh(context.Background(), conn, "a-2"); !errors.As(err, &re) || re.Status != 403 || re.Code != "no_seat" {
		t.Fatalf("refused: %v", err)
	}
}
