package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"omniroute/backend/httpx"
	"omniroute/backend/store"
)

func (a *API) listLogs(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			httpx.WriteError(w, errInvalidQuery("limit", "limit must be 1..1000"))
			return
		}
		limit = n
	}
	q := r.URL.Query()
	f := store.RequestLogFilter{Status: q.Get("status"), ConnectionID: q.Get("connectionId"), Model: q.Get("model"), APIKeyID: q.Get("keyId")}
	if f.Status != "" && f.Status != "ok" && f.Status != "error" {
		if n, err := strconv.Atoi(f.Status); err != nil || n < 100 || n > 599 {
			httpx.WriteError(w, errInvalidQuery("status", "status must be ok, error or an HTTP status code"))
			return
		}
	}
	rows, err := a.Store.FilteredRequestLogs(f, limit)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, l := range rows {
		out = append(out, map[string]any{"id": l.ID, "requestId": l.RequestID, "createdAt": rfc3339(l.CreatedAt),
			"model": l.Model, "provider": l.Provider, "connectionId": l.ConnectionID, "apiKeyId": l.APIKeyID, "status": l.Status,
			"stream": l.Stream, "attemptCount": l.AttemptCount, "attempts": json.RawMessage(orEmpty(l.Attempts)),
			"latencyMs": l.LatencyMs, "errorCode": l.ErrorCode, "promptTokens": l.PromptTokens, "completionTokens": l.CompletionTokens, "cachedTokens": l.CachedTokens})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"logs": out})
}

func orEmpty(s string) string {
	if s == "" {
		return "[]"
	}
	return s
}
