package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"

	"omniroute/backend/errs"
	"omniroute/backend/gateway"
	"omniroute/backend/httpx"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// KeyInfo is the in-memory view of a client key.
type KeyInfo struct {
	ID     string
	Name   string
	Scopes []string
	Access routing.Access
}

// Keyring maps client key hashes to keys; the hot path never reads the database.
type Keyring struct {
	mu     sync.RWMutex
	byHash map[string]*KeyInfo // replaced whole by Load, never changed: callers may keep what Lookup returns
}

// NewKeyring returns an empty keyring.
func NewKeyring() *Keyring { return &Keyring{byHash: map[string]*KeyInfo{}} }

// Load replaces the keyring's content.
func (k *Keyring) Load(rows []store.APIKey) {
	m := make(map[string]*KeyInfo, len(rows))
	for _, row := range rows {
		info := &KeyInfo{ID: row.ID, Name: row.Name}
		_ = json.Unmarshal([]byte(row.Scopes), &info.Scopes)
		_ = json.Unmarshal([]byte(row.AllowedConnections), &info.Access.AllowedConnections)
		_ = json.Unmarshal([]byte(row.AllowedModels), &info.Access.AllowedModels)
		m[row.KeyHash] = info
	}
	k.mu.Lock()
	k.byHash = m
	k.mu.Unlock()
}

// Lookup finds a key by its plaintext value.
func (k *Keyring) Lookup(value string) (*KeyInfo, bool) {
	var buf [secrets.HashLen]byte
	h := secrets.AppendHash(buf[:0], value)
	k.mu.RLock()
	defer k.mu.RUnlock()
	info, ok := k.byHash[string(h)] // the conversion in a map index does not allocate
	return info, ok
}

// clientKey extracts a client key from Authorization: Bearer or x-api-key.
func clientKey(r *http.Request) string {
	if b := bearer(r); b != "" {
		return b
	}
	return r.Header.Get("x-api-key")
}

// writeClientError writes a client-route error; Anthropic clients (the
// /v1/messages routes) also get the top-level "type":"error" their SDKs read.
func writeClientError(w http.ResponseWriter, r *http.Request, e *errs.Error) {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		httpx.WriteError(w, e)
		return
	}
	httpx.WriteJSON(w, httpx.Status(e.Class), map[string]any{"type": "error", "error": httpx.ErrorBody(e)})
}

// client authenticates an inference request with a client key (required unless
// the requireApiKey setting is off).
func (a *API) client(next gateway.Inference) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c, ok := a.clientOf(w, r); ok {
			next(w, r, c)
		}
	}
}

// clientOf identifies the request's client by its key, answering the refusal
// itself (ok false). Out of line: its frame is gone before the request runs,
// which keeps a streaming request's stack small.
//
//go:noinline
func (a *API) clientOf(w http.ResponseWriter, r *http.Request) (c gateway.Client, ok bool) {
	if a.paused.Load() {
		writeClientError(w, r, errs.New(errs.Unavailable, "GATEWAY_PAUSED", "the gateway is paused; resume it from the tray or the dashboard"))
		return c, false
	}
	v := clientKey(r)
	if v == "" && !a.Settings.GeneralRef().RequireAPIKey {
		if crossOriginBrowser(r) {
			// Without keys, a page of any other origin (any local port
			// included) could spend quota through a simple POST.
			writeClientError(w, r, errs.New(errs.Permission, "ORIGIN_NOT_ALLOWED",
				"a browser request from another origin needs an API key (requireApiKey is off, so only same-origin and non-browser clients may go without one)"))
			return c, false
		}
		return c, true
	}
	if v == "" {
		writeClientError(w, r, errs.New(errs.Auth, "API_KEY_REQUIRED",
			"missing API key: send Authorization: Bearer <key> (the default key is shown by the dashboard and at start)"))
		return c, false
	}
	if e := a.authPrecheck(r, authRouteClient); e != nil {
		writeClientError(w, r, e)
		return c, false
	}
	info, ok := a.Keys.Lookup(v)
	if !ok {
		writeClientError(w, r, a.authFailure(r, authRouteClient, errs.New(errs.Auth, "API_KEY_INVALID", "the API key is not valid")))
		return c, false
	}
	if !slices.Contains(info.Scopes, "inference") {
		writeClientError(w, r, errs.New(errs.Permission, "SCOPE_REQUIRED", "this API key lacks the \"inference\" scope"))
		return c, false
	}
	return gateway.Client{KeyID: info.ID, Access: &info.Access}, true
}

// viaContext adapts a handler that reads its client from the request's
// context (gateway.ClientFrom) to client.
func viaContext(next http.HandlerFunc) gateway.Inference {
	return func(w http.ResponseWriter, r *http.Request, c gateway.Client) {
		next(w, r.WithContext(gateway.WithClient(r.Context(), c)))
	}
}

// NameOf returns the name of the key with this id ("" when unknown).
func (k *Keyring) NameOf(id string) string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, info := range k.byHash {
		if info.ID == id {
			return info.Name
		}
	}
	return ""
}
