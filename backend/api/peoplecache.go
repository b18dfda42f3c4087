package api

import (
	"sync"

	"omniroute/backend/store"
)

// maxPeopleCached bounds each of the cache's maps: past it the map starts
// over rather than grow without end (a flood of distinct sessions).
const maxPeopleCached = 10_000

// peopleCache holds a team server instance's people checks — stored
// management tokens by hash, sessions by hash (with their user and expiry),
// users by id — so a management request costs no database round trip once
// its credential was seen. Any change to people, on any instance, forgets
// everything: the change feed's "people" topic (triggers on users,
// user_sessions and management_tokens), its reconnects and its 15-second
// reconcile (ForgetPeople), and this instance's own management writes. A
// lookup that began before a forget does not store what it read (the
// generation moved), so a stale answer never outlives the change. Only
// found rows are cached: an unknown credential always asks the database.
type peopleCache struct {
	mu       sync.Mutex
	gen      uint64
	tokens   map[string]store.ManagementToken
	sessions map[string]cachedSession
	users    map[string]store.User
}

type cachedSession struct {
	user  store.User
	until int64 // the session's expiry, unix ms
}

func newPeopleCache() *peopleCache {
	return &peopleCache{tokens: map[string]store.ManagementToken{}, sessions: map[string]cachedSession{}, users: map[string]store.User{}}
}

// forget drops everything cached.
func (c *peopleCache) forget() {
	c.mu.Lock()
	c.gen++
	clear(c.tokens)
	clear(c.sessions)
	clear(c.users)
	c.mu.Unlock()
}

// generation is the cache's generation before a database read.
func (c *peopleCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores v under k in m unless the cache was forgotten since gen.
func put[V any](c *peopleCache, gen uint64, m map[string]V, k string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(m) >= maxPeopleCached {
		clear(m)
	}
	m[k] = v
}

// get reads k from m.
func get[V any](c *peopleCache, m map[string]V, k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := m[k]
	return v, ok
}

// ForgetPeople drops the cached people checks (a team server's change feed
// saw users, sessions or tokens change on some instance).
func (a *API) ForgetPeople() {
	if a.people != nil {
		a.people.forget()
	}
}

// tokenByHash is the stored management token with this hash.
func (a *API) tokenByHash(hash string) (store.ManagementToken, error) {
	c := a.people
	if c == nil {
		return a.Store.ManagementTokenByHash(hash)
	}
	if t, ok := get(c, c.tokens, hash); ok {
		return t, nil
	}
	gen := c.generation()
	t, err := a.Store.ManagementTokenByHash(hash)
	if err == nil {
		put(c, gen, c.tokens, hash, t)
	}
	return t, err
}

// tokenUsed records a token's last use in the cache too, so it is written
// once a minute, not on every request once the cached stamp is old.
func (a *API) tokenUsed(hash string, t store.ManagementToken) {
	if c := a.people; c != nil {
		put(c, c.generation(), c.tokens, hash, t)
	}
}

// sessionUser is the user signed in under the session with this hash,
// while it has not expired at nowMs.
func (a *API) sessionUser(hash string, nowMs int64) (store.User, error) {
	c := a.people
	if c == nil {
		return a.Store.SessionUser(hash, nowMs)
	}
	if s, ok := get(c, c.sessions, hash); ok && s.until > nowMs {
		return s.user, nil
	}
	gen := c.generation()
	u, until, err := a.Store.SessionUserUntil(hash, nowMs)
	if err == nil {
		put(c, gen, c.sessions, hash, cachedSession{user: u, until: until})
	}
	return u, err
}

// userByID is the user with this id.
func (a *API) userByID(id string) (store.User, error) {
	c := a.people
	if c == nil {
		return a.Store.User(id)
	}
	if u, ok := get(c, c.users, id); ok {
		return u, nil
	}
	gen := c.generation()
	u, err := a.Store.User(id)
	if err == nil {
		put(c, gen, c.users, id, u)
	}
	return u, err
}
