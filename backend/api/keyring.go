package api

import (
	"net/http"
	"slices"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/gateway"
	"omniroute/backend/httpx"
)

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
	if info.Timed() { // most keys never expire: no clock read for them
		if e := info.Refusal(a.Clock.Now().UnixMilli()); e != nil {
			writeClientError(w, r, e)
			return c, false
		}
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
