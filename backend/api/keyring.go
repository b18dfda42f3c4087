package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

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
	// ExpiresAtMs is when the key stops working (unix ms; 0: never).
	ExpiresAtMs int64
	// Previous marks the secret a rotation replaced: it works until
	// PrevUntilMs (the grace period's end), then is refused KEY_ROTATED.
	Previous    bool
	PrevUntilMs int64
}

// Refusal is why the key cannot be used at nowMs (nil: it can): an expired
// key is refused KEY_EXPIRED, a replaced secret past its grace period
// KEY_ROTATED, both 401. A key works while nowMs < its expiry (and a replaced
// secret while nowMs < the grace period's end).
func (k *KeyInfo) Refusal(nowMs int64) *errs.Error {
	if k.Previous && nowMs >= k.PrevUntilMs {
		return errs.New(errs.Auth, "KEY_ROTATED",
			"the API key %q was rotated: this secret no longer works; use the new secret shown when it was rotated (or rotate it again on the dashboard's API Keys page)", k.Name)
	}
	if k.ExpiresAtMs > 0 && nowMs >= k.ExpiresAtMs {
		return errs.New(errs.Auth, "KEY_EXPIRED",
			"the API key %q expired at %s; set a later expiry or rotate it on the dashboard's API Keys page", k.Name,
			time.UnixMilli(k.ExpiresAtMs).UTC().Format(time.RFC3339Nano))
	}
	return nil
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
		info := keyInfoOf(row)
		m[row.KeyHash] = &info
		if row.PrevKeyHash != "" {
			prev := info
			prev.Previous, prev.PrevUntilMs = true, row.PrevValidUntil
			m[row.PrevKeyHash] = &prev
		}
	}
	k.mu.Lock()
	k.byHash = m
	k.mu.Unlock()
}

// keyInfoOf is a stored key's in-memory view: its scopes and restrictions.
func keyInfoOf(row store.APIKey) KeyInfo {
	info := KeyInfo{ID: row.ID, Name: row.Name, ExpiresAtMs: row.ExpiresAt}
	info.Access.Private = row.Private
	_ = json.Unmarshal([]byte(row.Scopes), &info.Scopes)
	_ = json.Unmarshal([]byte(row.AllowedConnections), &info.Access.AllowedConnections)
	_ = json.Unmarshal([]byte(row.AllowedModels), &info.Access.AllowedModels)
	return info
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

// clientKey extracts a client key from Authorization: Bearer or x-api-key;
// on the Gemini-native routes and the model list (GET /v1/models…, which
// Google's v1 shares with OpenAI's) also from x-goog-api-key or ?key= (where
// Google's SDKs and the Gemini CLI send it).
func clientKey(r *http.Request) string {
	if b := bearer(r); b != "" {
		return b
	}
	if v := r.Header.Get("x-api-key"); v != "" || !isGeminiPath(r.URL.Path) && !isModelsPath(r.URL.Path) {
		return v
	}
	if v := r.Header.Get("x-goog-api-key"); v != "" {
		return v
	}
	return r.URL.Query().Get("key")
}

// isGeminiPath reports whether p is under the Gemini-native API, whose
// refusals are in Google's error shape: /v1beta/models…, and a
// /v1/models/{model}:{method} call (Google's v1).
func isGeminiPath(p string) bool {
	if strings.HasPrefix(p, gateway.GeminiV1Prefix) {
		return strings.IndexByte(p[len(gateway.GeminiV1Prefix):], ':') >= 0
	}
	return strings.HasPrefix(p, gateway.GeminiPrefix) && (len(p) == len(gateway.GeminiPrefix) || p[len(gateway.GeminiPrefix)] == '/')
}

// isModelsPath reports whether p is the model list or one model under /v1
// (served to OpenAI's and Google's clients alike).
func isModelsPath(p string) bool {
	return p == "/v1/models" || strings.HasPrefix(p, gateway.GeminiV1Prefix)
}

// geminiShaped reports whether r's refusals are in Google's error shape: a
// Gemini-native route, or the model list asked by a Google client.
func geminiShaped(r *http.Request) bool {
	return isGeminiPath(r.URL.Path) || isModelsPath(r.URL.Path) && gateway.GoogleCaller(r)
}

// writeClientError writes a client-route error; Anthropic clients (the
// /v1/messages routes) also get the top-level "type":"error" their SDKs read,
// and Gemini-native clients Google's error shape.
func writeClientError(w http.ResponseWriter, r *http.Request, e *errs.Error) {
	if geminiShaped(r) {
		gateway.WriteGeminiError(w, e)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		httpx.WriteError(w, e)
		return
	}
	httpx.WriteJSON(w, httpx.Status(e.Class), map[string]any{"type": "error", "error": httpx.ErrorBody(e)})
}

// writeEdgeError writes a refusal of the edge (Host, origin, no route, a
// panic) in the error envelope, or in Google's shape on the Gemini-native
// routes.
func writeEdgeError(w http.ResponseWriter, r *http.Request, e *errs.Error) {
	if geminiShaped(r) {
		gateway.WriteGeminiError(w, e)
		return
	}
	httpx.WriteError(w, e)
}

// writeGeminiStatus writes e in Google's shape with an explicit status.
func writeGeminiStatus(w http.ResponseWriter, status int, e *errs.Error) {
	gateway.WriteGeminiErrorStatus(w, status, e)
}

// client authenticates an inference request with a client key (required unless
// the requireApiKey setting is off).
func (a *API) client(next gateway.Inference) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c, ok := a.clientOf(w, r, false); ok {
			next(w, r, c)
		}
	}
}

// inference is client for the routes that ask a model for an answer (their
// requests are logged): a POST refused there because the gateway is paused
// is logged too, under its key, when the key is known.
func (a *API) inference(next gateway.Inference) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c, ok := a.clientOf(w, r, r.Method == http.MethodPost && !strings.HasSuffix(r.URL.Path, ":countTokens")); ok {
			next(w, r, c)
		}
	}
}

// pausedClient is the client of a request refused because the gateway is
// paused, when its key is known and may infer (ok false: not logged, as any
// request whose key is missing or wrong). No authentication failure is
// counted: the answer is GATEWAY_PAUSED whatever the key.
func (a *API) pausedClient(r *http.Request) (gateway.Client, bool) {
	v := clientKey(r)
	if v == "" {
		return gateway.Client{}, !a.Settings.GeneralRef().RequireAPIKey && !crossOriginBrowser(r)
	}
	info, ok := a.Keys.Lookup(v)
	if !ok || !slices.Contains(info.Scopes, "inference") || info.Refusal(a.Clock.Now().UnixMilli()) != nil {
		return gateway.Client{}, false
	}
	return gateway.Client{KeyID: info.ID, Access: &info.Access}, true
}

// clientOf identifies the request's client by its key, answering the refusal
// itself (ok false); logPaused: a refusal because the gateway is paused is
// logged (an inference route). Out of line: its frame is gone before the request runs,
// which keeps a streaming request's stack small.
//
//go:noinline
func (a *API) clientOf(w http.ResponseWriter, r *http.Request, logPaused bool) (c gateway.Client, ok bool) {
	if a.paused.Load() {
		e := errs.New(errs.Unavailable, "GATEWAY_PAUSED", "the gateway is paused; resume it from the tray or the dashboard")
		if logPaused {
			if pc, known := a.pausedClient(r); known {
				a.Gateway.LogRefused(w, r, pc, e)
			}
		}
		writeClientError(w, r, e)
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
		how := "Authorization: Bearer <key>"
		if geminiShaped(r) {
			how = "x-goog-api-key: <key> (or ?key=<key>)"
		}
		writeClientError(w, r, errs.New(errs.Auth, "API_KEY_REQUIRED",
			"missing API key: send %s (the default key is shown by the dashboard and at start)", how))
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
	if e := info.Refusal(a.Clock.Now().UnixMilli()); e != nil {
		writeClientError(w, r, e)
		return c, false
	}
	if !slices.Contains(info.Scopes, "inference") {
		writeClientError(w, r, errs.New(errs.Permission, "SCOPE_REQUIRED", "this API key lacks the \"inference\" scope"))
		return c, false
	}
	if a.KeysFresh != nil {
		if err := a.KeysFresh(); err != nil {
			writeClientError(w, r, errs.As(err))
			return c, false
		}
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
