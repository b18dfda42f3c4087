package oauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/oauth"
	"omniroute/backend/providers"
	"omniroute/backend/providers/registry"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
	"omniroute/tests/fakeupstream"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"))
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func jwt(claims string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{}`)) + "." + e([]byte(claims)) + ".x"
}

func TestReadLoginPerSource(t *testing.T) {
	cat := registry.Catalog(nil)
	const claudeCode, codexCLI, geminiCLI = "claude-code", "codex", "gemini-cli"
	home := t.TempDir()
	claudePath, _ := oauth.DefaultPath(cat, claudeCode, home)
	write(t, claudePath, `{"claudeAiOauth":{"accessToken":"at","refreshToken":"rt","expiresAt":1767225600000,"subscriptionType":"pro"}}`)
	write(t, filepath.Join(home, ".claude.json"), `{"oauthAccount":{"accountUuid":"a1","emailAddress":"e@x","organizationUuid":"o1"}}`)
	codexPath, _ := oauth.DefaultPath(cat, codexCLI, home)
	write(t, codexPath, `{"tokens":{"access_token":"`+jwt(`{"exp":1767225600}`)+`","refresh_token":"rt","id_token":"`+
		jwt(`{"email":"c@x","https://api.openai.com/auth":{"chatgpt_account_id":"acc-from-jwt","chatgpt_plan_type":"plus"}}`)+`"}}`)
	geminiPath, _ := oauth.DefaultPath(cat, geminiCLI, home)
	write(t, geminiPath, `{"access_token":"ya29.x","refresh_token":"1//rt","expiry_date":1767225600000,"id_token":"`+jwt(`{"sub":"g-1","email":"g@x"}`)+`"}`)

	// A Gemini CLI file without an id token: the CLI's active account names the login.
	noIDHome := t.TempDir()
	geminiNoID, _ := oauth.DefaultPath(cat, geminiCLI, noIDHome)
	write(t, geminiNoID, `{"access_token":"ya29.y","refresh_token":"1//rt2","expiry_date":1767225600000,"token_type":"Bearer"}`)
	write(t, filepath.Join(noIDHome, ".gemini", "google_accounts.json"), `{"active":"active@gmail.com","old":[]}`)

	exp := time.UnixMilli(1767225600000)
	cases := []struct {
		source, path string
		want         oauth.Login
	}{
		{claudeCode, claudePath, oauth.Login{Source: "claude-code", AccessToken: "at", RefreshToken: "rt", ExpiresAt: exp,
			AccountID: "a1", Email: "e@x", OrganizationUUID: "o1", Plan: "pro"}},
		{codexCLI, codexPath, oauth.Login{Source: "codex", RefreshToken: "rt", ExpiresAt: exp, AccountID: "acc-from-jwt", Email: "c@x", Plan: "plus"}},
		{geminiCLI, geminiPath, oauth.Login{Source: "gemini-cli", AccessToken: "ya29.x", RefreshToken: "1//rt", ExpiresAt: exp, AccountID: "g-1", Email: "g@x"}},
		{geminiCLI, geminiNoID, oauth.Login{Source: "gemini-cli", AccessToken: "ya29.y", RefreshToken: "1//rt2", ExpiresAt: exp, Email: "active@gmail.com"}},
	}
	for _, c := range cases {
		t.Run(c.source+" "+filepath.Base(filepath.Dir(filepath.Dir(c.path))), func(t *testing.T) {
			got, err := oauth.ReadLogin(cat, c.source, c.path)
			if err != nil {
				t.Fatal(err)
			}
			if c.source == codexCLI {
				c.want.AccessToken = got.AccessToken
			}
			if got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestReadLoginErrors(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, "notjson"), `{`)
	write(t, filepath.Join(home, "empty.json"), `{"claudeAiOauth":{}}`)
	cases := []struct {
		source, path, code string
	}{
		{"emacs", filepath.Join(home, "x"), "UNKNOWN_IMPORT_SOURCE"},
		{"codex", "auth.json", "INVALID_PATH"},
		{"codex", filepath.Join(home, "missing.json"), "CREDENTIALS_NOT_FOUND"},
		{"claude-code", filepath.Join(home, "notjson"), "INVALID_CREDENTIALS_FILE"},
		{"claude-code", filepath.Join(home, "empty.json"), "INVALID_CREDENTIALS_FILE"},
		{"claude-code", home, "INVALID_CREDENTIALS_FILE"}, // a directory
	}
	for _, c := range cases {
		_, err := oauth.ReadLogin(registry.Catalog(nil), c.source, c.path)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != c.code {
			t.Errorf("%s %s: %v, want %s", c.source, c.path, err, c.code)
		}
	}
}

type fixture struct {
	st  *store.Store
	box *secrets.Box
	cat *providers.Catalog
	reg *routing.Registry
}

func newFixture(t *testing.T, getenv func(string) string) *fixture {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box, _ := secrets.New(make([]byte, 32))
	cat := registry.Catalog(getenv)
	return &fixture{st: st, box: box, cat: cat, reg: routing.NewRegistry(cat)}
}

func (f *fixture) load(t *testing.T) {
	t.Helper()
	rows, _ := f.st.Connections()
	if err := f.reg.Load(rows, f.box); err != nil {
		t.Fatal(err)
	}
}

func TestUpsertMatchesTheAccountAndKeepsUserSettings(t *testing.T) {
	f := newFixture(t, nil)
	l := oauth.Login{Source: "codex", AccessToken: "a1", RefreshToken: "r1", AccountID: "acc-1", Email: "x@y"}
	first, err := oauth.Upsert(f.st, f.box, f.cat, l, t0)
	if err != nil || !first.Created || first.Connection.Provider != "codex" || first.Connection.Name != "Codex (x@y)" {
		t.Fatalf("%+v %v", first, err)
	}
	// The user opts in to something and the connection goes terminal.
	row := first.Connection
	row.ProviderSpecificData = `{"accountId":"acc-1","lowPriorityMode":true}`
	row.TestStatus, row.ExpiredRetries = "expired", 3
	if err := f.st.SaveConnection(&row); err != nil {
		t.Fatal(err)
	}
	l.AccessToken = "a2"
	second, err := oauth.Upsert(f.st, f.box, f.cat, l, t0.Add(time.Hour))
	if err != nil || second.Created || second.Connection.ID != row.ID {
		t.Fatalf("%+v %v", second, err)
	}
	got, _ := f.st.Connection(row.ID)
	var psd map[string]any
	_ = json.Unmarshal([]byte(got.ProviderSpecificData), &psd)
	tok, _ := f.box.Open(got.AccessTokenEnc)
	if got.TestStatus != "active" || got.ExpiredRetries != 0 || psd["lowPriorityMode"] != true || tok != "a2" {
		t.Fatalf("row %+v psd %v", got, psd)
	}
	// Another account of the same provider is a new connection, next in priority.
	third, _ := oauth.Upsert(f.st, f.box, f.cat, oauth.Login{Source: "codex", AccessToken: "b", AccountID: "acc-2"}, t0)
	if !third.Created || third.Connection.Priority != row.Priority+1 {
		t.Fatalf("%+v", third)
	}
}

// TestRefreshFormGrantAndEarlyFailure: Google's form-encoded grant; a failed
// refresh while the token is still valid keeps the old token, once expired
// it is an error.
func TestRefreshFormGrantAndEarlyFailure(t *testing.T) {
	ts := fakeupstream.NewTokenServer("gemini-client", "rt-initial")
	defer ts.Close()
	env := map[string]string{"OMNIROUTE_GEMINI_CLI_OAUTH_TOKEN_URL": ts.URL(), "OMNIROUTE_GEMINI_CLI_OAUTH_CLIENT_ID": "gemini-client"}
	f := newFixture(t, func(k string) string { return env[k] })
	clk := clock.NewFake(t0)
	res, err := oauth.Upsert(f.st, f.box, f.cat, oauth.Login{Source: "gemini-cli", AccessToken: "old", RefreshToken: "rt-initial",
		ExpiresAt: t0.Add(2 * time.Minute), AccountID: "g"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	f.load(t)
	conn, _ := f.reg.Get(res.Connection.ID)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	r := oauth.NewRefresher(oauth.RefresherDeps{Store: f.st, Box: f.box, Client: client, Clock: clk})

	// Two minutes left is inside the 5-minute lead: a refresh is tried, and fails.
	ts.Fail(http.StatusBadRequest)
	tok, err := r.Fresh(context.Background(), conn)
	if err != nil || tok != "old" || ts.Calls() != 1 {
		t.Fatalf("early failure: %q %v calls %d", tok, err, ts.Calls())
	}
	// Within 30 s of that failure no new attempt.
	clk.Advance(29 * time.Second)
	if tok, _ := r.Fresh(context.Background(), conn); tok != "old" || ts.Calls() != 1 {
		t.Fatalf("retried too soon: calls %d", ts.Calls())
	}
	// Expired: the failure is returned.
	clk.Set(t0.Add(2 * time.Minute))
	if _, err := r.Fresh(context.Background(), conn); !oauth.IsRefreshError(err) || ts.Calls() != 2 {
		t.Fatalf("expired: %v calls %d", err, ts.Calls())
	}
	ts.Fail(0)
	tok, err = r.Fresh(context.Background(), conn)
	if err != nil || tok != "at-1" {
		t.Fatalf("healed: %q %v", tok, err)
	}
	row, _ := f.st.Connection(conn.ID)
	rt, _ := f.box.Open(row.RefreshTokenEnc)
	if rt != "rt-1" || row.ExpiresAt != clk.Now().Add(time.Hour).UnixMilli() {
		t.Fatalf("persisted rt %q expires %d", rt, row.ExpiresAt)
	}
	// A token far from expiry is used as is.
	if tok, _ := r.Fresh(context.Background(), conn); tok != "at-1" || ts.Calls() != 3 {
		t.Fatalf("calls %d", ts.Calls())
	}
}

// acmeImport is a made-up provider module whose CLI keeps its login in
// ~/.acme/login.json and its account in account.json beside it.
func acmeImport() providers.Module {
	return providers.Module{ID: "acme",
		Rows: []providers.Provider{{ID: "acme", Name: "Acme Cloud", Category: providers.CategoryOAuth, Format: providers.FormatOpenAI,
			OAuth: &providers.OAuth{ImportSource: "acme-cli"}}},
		Import: &providers.CredentialImport{Source: "acme-cli", Label: "Acme CLI", File: ".acme/login.json",
			Parse: func(f providers.CredentialFile) (providers.CLILogin, error) {
				if string(f.Raw) == "broken" {
					return providers.CLILogin{}, &providers.ImportError{Why: "it is not an Acme login"}
				}
				acc, _ := f.Beside(filepath.Join(filepath.Dir(f.Path), "account.json"))
				return providers.CLILogin{AccessToken: string(f.Raw), Email: string(acc)}, nil
			}},
	}
}

// TestReadLoginAsksTheModule: a module's import decides where its CLI's
// login is and how it reads (a file beside it included); its refusal says
// why; the source list and the connection's name come from the modules.
func TestReadLoginAsksTheModule(t *testing.T) {
	cat := providers.NewCatalog().WithModules(acmeImport())
	home := t.TempDir()
	path, err := oauth.DefaultPath(cat, "acme-cli", home)
	if err != nil || path != filepath.Join(home, ".acme", "login.json") {
		t.Fatalf("default path %q %v", path, err)
	}
	if got := oauth.Sources(cat); len(got) != 1 || got[0] != "acme-cli" {
		t.Fatalf("sources %v", got)
	}
	write(t, path, "acme-token")
	write(t, filepath.Join(home, ".acme", "account.json"), "a@acme.test")
	l, err := oauth.ReadLogin(cat, "acme-cli", path)
	if err != nil || l != (oauth.Login{Source: "acme-cli", AccessToken: "acme-token", Email: "a@acme.test"}) {
		t.Fatalf("%+v %v", l, err)
	}
	f := newFixture(t, nil)
	res, err := oauth.Upsert(f.st, f.box, cat, l, t0)
	if err != nil || res.Connection.Provider != "acme" || res.Connection.Name != "Acme CLI (a@acme.test)" {
		t.Fatalf("%+v %v", res, err)
	}

	write(t, path, "broken")
	_, err = oauth.ReadLogin(cat, "acme-cli", path)
	if e := errs.As(err); e == nil || e.Code != "INVALID_CREDENTIALS_FILE" || e.Message != "the acme-cli credential file cannot be imported: it is not an Acme login" {
		t.Fatalf("refused file: %v", err)
	}
	_, err = oauth.ReadLogin(registry.Catalog(nil), "emacs", path)
	if e := errs.As(err); e == nil || e.Message != `unknown import source "emacs"; use claude-code, codex or gemini-cli` {
		t.Fatalf("unknown source: %v", err)
	}
}
