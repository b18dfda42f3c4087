package peoplecache

import (
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"omniroute/backend/store"
)

// fixture is a SQLite store with one admin user, a session of theirs
// expiring at exp and a token they minted.
func fixture(t *testing.T, exp int64) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.CreateUser(&store.User{ID: "u1", Email: "ops@example.com", Role: "admin", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(&store.UserSession{IDHash: "sh", UserID: "u1", CreatedAt: 1, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateManagementToken(&store.ManagementToken{ID: "t1", Name: "ci", TokenHash: "th", TokenPrefix: "omt_",
		Role: "admin", CreatorUserID: "u1", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	return st
}

// roles are the user's role as read by id, through the session and the
// token's name ("" for an error).
func roles(c *Cache, st *store.Store, nowMs int64) (user, session, token string) {
	if u, err := c.User(st, "u1"); err == nil {
		user = u.Role
	}
	if u, err := c.SessionUser(st, "sh", nowMs); err == nil {
		session = u.Role
	}
	if tk, err := c.Token(st, "th"); err == nil {
		token = tk.Name
	}
	return
}

// TestCache: a change made behind the cache's back (another instance's
// write) is not seen until Forget, then at once; a cached session stops at
// its expiry; a read that began before a forget stores nothing; unknown
// rows are not cached; a nil cache reads the store every time.
func TestCache(t *testing.T) {
	const now, exp = int64(1_000), int64(2_000)
	st := fixture(t, exp)
	c := New()
	if u, s, tk := roles(c, st, now); u != "admin" || s != "admin" || tk != "ci" {
		t.Fatalf("before: %q %q %q", u, s, tk)
	}
	if err := st.SaveUser(&store.User{ID: "u1", Email: "ops@example.com", Role: "viewer", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteManagementToken("t1"); err != nil {
		t.Fatal(err)
	}
	if u, s, tk := roles(c, st, now); u != "admin" || s != "admin" || tk != "ci" {
		t.Fatalf("cached, before Forget: %q %q %q; want the cached rows", u, s, tk)
	}
	c.Forget()
	if u, s, tk := roles(c, st, now); u != "viewer" || s != "viewer" || tk != "" {
		t.Fatalf("after Forget: %q %q %q; want viewer, viewer, the token gone", u, s, tk)
	}
	if _, err := c.Token(st, "th"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown token: %v, want ErrNotFound", err)
	}
	if _, s, _ := roles(c, st, exp); s != "" {
		t.Fatalf("cached session at its expiry: %q, want refused", s)
	}

	gen := c.generation()
	c.Forget()
	put(c, gen, c.users, "u1", store.User{ID: "u1", Role: "admin"})
	if _, ok := get(c, c.users, "u1"); ok {
		t.Fatal("a read that began before a forget was stored")
	}

	c.TokenUsed("th", store.ManagementToken{ID: "t1", Name: "used", LastUsedAt: 5})
	if tk, err := c.Token(st, "th"); err != nil || tk.Name != "used" {
		t.Fatalf("TokenUsed not cached: %+v %v", tk, err)
	}

	var none *Cache
	none.Forget()
	none.TokenUsed("th", store.ManagementToken{})
	if err := st.SaveUser(&store.User{ID: "u1", Email: "ops@example.com", Role: "admin", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if u, s, _ := roles(none, st, now); u != "admin" || s != "admin" {
		t.Fatalf("without a cache: %q %q; want the store's admin", u, s)
	}
}

// TestCacheIsBounded: a map full at MaxCached starts over rather than grow.
func TestCacheIsBounded(t *testing.T) {
	c := New()
	for i := range MaxCached {
		put(c, 0, c.users, strconv.Itoa(i), store.User{})
	}
	put(c, 0, c.users, "last", store.User{})
	if n := len(c.users); n != 1 {
		t.Fatalf("%d users after the bound, want the map started over (1)", n)
	}
}
