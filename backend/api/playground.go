package api

import (
	"net/http"
	"slices"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/gateway"
	"omniroute/backend/httpx"
	"omniroute/backend/keyring"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// PlaygroundKeyName names the dashboard playground's own client key.
const PlaygroundKeyName = "playground"

// playground's place in the key_value table: the id of its key.
const (
	playgroundNamespace = "playground"
	playgroundKeyID     = "keyId"
)

// HeaderRequestID names the playground request's log row.
const HeaderRequestID = "X-OmniRoute-Request-Id"

// playgroundKey returns the playground's client key, created (named
// "playground", listed on the Keys page) when it has none yet or the user
// revoked it. Its secret is never read: the playground's requests run under
// the key in-process.
func (a *API) playgroundKey() (store.APIKey, error) {
	rows, err := a.Store.APIKeys()
	if err != nil {
		return store.APIKey{}, err
	}
	if id, ok, err := a.Store.GetValue(playgroundNamespace, playgroundKeyID); err != nil {
		return store.APIKey{}, err
	} else if ok {
		for _, row := range rows {
			if row.ID == id {
				return row, nil
			}
		}
	}
	row, _, err := NewClientKey(a.Store, a.Box, PlaygroundKeyName, false, a.Clock.Now().UnixMilli())
	if err != nil {
		return store.APIKey{}, err
	}
	if err := a.Store.SetValue(playgroundNamespace, playgroundKeyID, row.ID); err != nil {
		return store.APIKey{}, err
	}
	return row, a.reloadKeys()
}

// getPlaygroundKey serves POST /api/playground/key: the playground key
// (created on first use) as the Keys page lists it, never its secret.
func (a *API) getPlaygroundKey(w http.ResponseWriter, r *http.Request) {
	row, err := a.playgroundKey()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, keyJSON(row))
}

// playground serves POST /api/playground/{client route}: a real request
// through the gateway under the playground key, in the client format its
// path names (/v1/chat/completions, /v1/messages, /v1/responses,
// /v1beta/models/{model}:generateContent or :streamGenerateContent), the
// answer streamed as the gateway writes it. ?connection=ID restricts it to
// one connection. The X-OmniRoute-Request-Id header names its log row.
func (a *API) playground(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api/playground")
	var serve gateway.Inference
	switch {
	case path == "/v1/chat/completions":
		serve = a.Gateway.ChatCompletionsFor
	case path == "/v1/messages":
		serve = a.Gateway.MessagesFor
	case path == "/v1/responses":
		serve = a.Gateway.ResponsesFor
	case strings.HasPrefix(path, gateway.GeminiPrefix+"/") && strings.Contains(path, ":"):
		serve = a.Gateway.GeminiFor
	default:
		httpx.WriteError(w, errs.New(errs.NotFound, "ROUTE_NOT_FOUND",
			"the playground serves /v1/chat/completions, /v1/messages, /v1/responses and /v1beta/models/{model}:generateContent"))
		return
	}
	row, err := a.playgroundKey()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	// The playground runs as its key, restrictions included: its scopes,
	// allowedModels and allowedConnections (?connection= only narrows them).
	info := keyring.InfoOf(row)
	if !slices.Contains(info.Scopes, "inference") {
		httpx.WriteError(w, errs.New(errs.Permission, "SCOPE_REQUIRED", "the playground key lacks the \"inference\" scope"))
		return
	}
	if conn := r.URL.Query().Get("connection"); conn != "" {
		if _, ok := a.Engine.Registry().Get(conn); !ok {
			httpx.WriteError(w, errs.New(errs.Invalid, "UNKNOWN_CONNECTION", "connection names an unknown connection %q", truncate(conn, 40)).WithParam("connection"))
			return
		}
		if len(info.Access.AllowedConnections) > 0 && !slices.Contains(info.Access.AllowedConnections, conn) {
			httpx.WriteError(w, errs.New(errs.Permission, "CONNECTION_NOT_ALLOWED",
				"the playground key may not use connection %q (see its allowedConnections)", truncate(conn, 40)).WithParam("connection"))
			return
		}
		info.Access.AllowedConnections = []string{conn}
	}
	id := secrets.RandomID()
	w.Header().Set(HeaderRequestID, id)
	r2 := r.Clone(gateway.WithRequestID(r.Context(), id))
	q := r.URL.Query()
	q.Del("connection") // the rest (Gemini's alt=sse) is the client route's
	r2.URL.Path, r2.URL.RawPath, r2.URL.RawQuery = path, "", q.Encode()
	serve(w, r2, gateway.Client{KeyID: info.ID, Access: &info.Access})
}
