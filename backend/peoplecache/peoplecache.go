// Package peoplecache holds a team server instance's people checks — stored
// management tokens by hash, sessions by hash (with their user and expiry),
// users by id — so a management request costs no database round trip once
// its credential was seen. Any change to people, on any instance, forgets
// everything (Forget): the change feed's "people" topic (triggers on users,
// user_sessions and management_tokens), its reconnects and its 15-second
// reconcile, and the instance's own management writes. A lookup that began
// before a forget does not store what it read (the generation moved), so a
// stale answer never outlives the change. Only found rows are cached: an
// unknown credential always asks the database.
package peoplecache

import (
	"sync"

	"omniroute/backend/store"
)

// MaxCached bounds each of the cache's maps: past it the map starts over
// rather than grow without end (a flood of distinct sessions).
const MaxCached = 10_000

// Source is where people are read from (the store).
type Source interface {
	ManagementTokenByHash(hash string) (store.ManagementToken, error)
	SessionUser(idHash string, nowMs int64) (store.User, error)
	SessionUserUntil(idHash string, nowMs int64) (store.User, int64, error)
	User(id string) (store.User, error)
}

// Cache is the people checks seen. A nil *Cache caches nothing: every
// lookup reads its source (an instance alone on its database).
type Cache struct {
	mu       sync.Mutex
	gen      uint64
	tokens   map[string]store.ManagementToken
	sessions map[string]session
	users    map[string]store.User
}

type session struct {
	user  store.User
	until int64 // the session's expiry, unix ms
}

// New is an empty cache.
func New() *Cache {
	return &Cache{tokens: map[string]store.ManagementToken{}, sessions: map[string]session{}, users: map[string]store.User{}}
}

// Forget drops everything cached (nil: nothing to drop).
func (c *Cache) Forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gen++
	clear(c.tokens)
	clear(c.sessions)
	clear(c.users)
	c.mu.Unlock()
}

// generation is the cache's generation before a database read.
func (c *Cache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores v under k in m unless the cache was forgotten since gen.
func put[V any](c *Cache, gen uint64, m map[string]V, k string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(m) >= MaxCached {
		clear(m)
	}
	m[k] = v
}

// get reads k from m.
func get[V any](c *Cache, m map[string]V, k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := m[k]
	return v, ok
}

// Token is the stored management token with this hash.
func (c *Cache) Token(src Source, hash string) (store.ManagementToken, error) {
	if c == nil {
		return src.ManagementTokenByHash(hash)
	}
	if t, ok := get(c, c.tokens, hash); ok {
		return t, nil
	}
	gen := c.generation()
	t, err := src.ManagementTokenByHash(hash)
	if err == nil {
		put(c, gen, c.tokens, hash, t)
	}
	return t, err
}

// TokenUsed records a token's last use in the cache too, so it is written
// once a minute, not on every request once the cached stamp is old.
func (c *Cache) TokenUsed(hash string, t store.ManagementToken) {
	if c != nil {
		put(c, c.generation(), c.tokens, hash, t)
	}
}

// SessionUser is the user signed in under the session with this hash,
// while it has not expired at nowMs.
func (c *Cache) SessionUser(src Source, hash string, nowMs int64) (store.User, error) {
	if c == nil {
		return src.SessionUser(hash, nowMs)
	}
	if s, ok := get(c, c.sessions, hash); ok && s.until > nowMs {
		return s.user, nil
	}
	gen := c.generation()
	u, until, err := src.SessionUserUntil(hash, nowMs)
	if err == nil {
		put(c, gen, c.sessions, hash, session{user: u, until: until})
	}
	return u, err
}

// User is the user with this id.
func (c *Cache) User(src Source, id string) (store.User, error) {
	if c == nil {
		return src.User(id)
	}
	if u, ok := get(c, c.users, id); ok {
		return u, nil
	}
	gen := c.generation()
	u, err := src.User(id)
	if err == nil {
		put(c, gen, c.users, id, u)
	}
	return u, err
}
