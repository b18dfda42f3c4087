package api

import (
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
	"omniroute/tests/pgtest"
)

// peopleFixture is an API over st with one admin user, a session of theirs
// and an admin token they minted.
type peopleFixture struct {
	a              *API
	st             *store.Store
	clk            *clock.Fake
	user           store.User
	token, session string
}

func newPeopleFixture(t testing.TB, st *store.Store, cache bool) *peopleFixture {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	f := &peopleFixture{st: st, clk: clk, token: TokenPrefix + "cachedtokenvalue", session: "session-value"}
	f.user = store.User{ID: "u1", Email: "ops@example.com", Role: RoleAdmin, CreatedAt: 1}
	if err := st.CreateUser(&f.user); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(&store.UserSession{IDHash: secrets.Hash(f.session), UserID: "u1", CreatedAt: 1,
		ExpiresAt: clk.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateManagementToken(&store.ManagementToken{ID: "t1", Name: "ci", TokenHash: secrets.Hash(f.token),
		TokenPrefix: "omt_", Role: RoleAdmin, CreatorUserID: "u1", CreatedAt: 1, LastUsedAt: clk.Now().UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	f.a = New(Deps{Store: st, Clock: clk, Token: "instance-token", CachePeople: cache})
	return f
}

// roles are the token's and the session's roles as authenticate resolves
// them ("" for refused).
func (f *peopleFixture) roles(t testing.TB) (token, session string) {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/session", nil)
	r.Header.Set("Authorization", "Bearer "+f.token)
	if p, err := f.a.authenticate(r); err == nil {
		token = p.Role
	}
	r = httptest.NewRequest("GET", "/api/session", nil)
	r.Header.Set("Cookie", SessionCookie+"="+f.session)
	if p, err := f.a.authenticate(r); err == nil {
		session = p.Role
	}
	return token, session
}

func openSQLite(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestPeopleCache: with the cache (a team server) a change made behind the
// instance's back — another instance's write — is not seen until the change
// feed forgets the cache (ForgetPeople), then at once; a cached session
// stops at its expiry (a read that began before a forget storing nothing is
// held in backend/peoplecache).
// Without it (SQLite) every check reads the database: the change applies
// at the next request.
func TestPeopleCache(t *testing.T) {
	f := newPeopleFixture(t, openSQLite(t), true)
	if tok, ses := f.roles(t); tok != RoleAdmin || ses != RoleAdmin {
		t.Fatalf("before: token %q session %q", tok, ses)
	}
	demoted := f.user
	demoted.Role = RoleViewer
	if err := f.st.SaveUser(&demoted); err != nil {
		t.Fatal(err)
	}
	if tok, ses := f.roles(t); tok != RoleAdmin || ses != RoleAdmin {
		t.Fatalf("cached, before the change feed: token %q session %q; want the cached admin (no database read)", tok, ses)
	}
	f.a.ForgetPeople()
	if tok, ses := f.roles(t); tok != RoleViewer || ses != RoleViewer {
		t.Fatalf("after the change feed: token %q session %q; want viewer", tok, ses)
	}
	if err := f.st.DeleteManagementToken("t1"); err != nil {
		t.Fatal(err)
	}
	f.a.ForgetPeople()
	f.clk.Advance(time.Hour) // the session's expiry
	if tok, ses := f.roles(t); tok != "" || ses != "" {
		t.Fatalf("revoked token %q, expired session %q; want both refused", tok, ses)
	}

	g := newPeopleFixture(t, openSQLite(t), false)
	if err := g.st.SaveUser(&demoted); err != nil {
		t.Fatal(err)
	}
	if tok, ses := g.roles(t); tok != RoleViewer || ses != RoleViewer {
		t.Fatalf("without the cache: token %q session %q; want viewer at once", tok, ses)
	}
}

// BenchmarkPeopleCheck is what a management request's people check costs
// on PostgreSQL (a token: its row and its creator's; a session: its row and
// its user's), read from the database on every request as before and from
// the team server's cache now.
func BenchmarkPeopleCheck(b *testing.B) {
	pg, err := pgtest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pg.Stop)
	for _, cache := range []bool{false, true} {
		st, err := store.OpenPostgres(pg.NewDatabase(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		f := newPeopleFixture(b, st, cache)
		name := "database"
		if cache {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if tok, ses := f.roles(b); tok != RoleAdmin || ses != RoleAdmin {
					b.Fatal(tok, ses)
				}
			}
		})
	}
}
