package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"

	"omniroute/backend/httpx"
	"omniroute/backend/store"
)

// logsPageBytes caps one page of GET /api/logs: however large the stored rows,
// an answer stays small; the client follows nextBefore for more.
const logsPageBytes = 1 << 20

// maxLogString caps each free-text field of a log row in the answer.
const maxLogString = 256

// listLogs serves GET /api/logs?limit=N&before=ID: the newest rows first,
// at most limit rows (default 100, max 1000) and about logsPageBytes bytes.
// nextBefore, when present, is the before= of the next (older) page.
func (a *API) listLogs(w http.ResponseWriter, r *http.Request) {
	limit := 100
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			httpx.WriteError(w, errInvalidQuery("limit", "limit must be 1..1000"))
			return
		}
		limit = n
	}
	var before int64
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			httpx.WriteError(w, errInvalidQuery("before", "before must be a log id (a positive integer)"))
			return
		}
		before = n
	}
	f := store.RequestLogFilter{Status: q.Get("status"), ConnectionID: q.Get("connectionId"), Model: q.Get("model"), APIKeyID: q.Get("keyId"), Before: before}
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
	out := make([]json.RawMessage, 0, len(rows))
	size, truncated := 0, false
	for _, l := range rows {
		row, err := json.Marshal(map[string]any{"id": l.ID, "requestId": l.RequestID, "createdAt": rfc3339(l.CreatedAt),
			"model": capString(l.Model), "provider": capString(l.Provider), "connectionId": l.ConnectionID, "apiKeyId": l.APIKeyID, "status": l.Status,
			"stream": l.Stream, "attemptCount": l.AttemptCount, "attempts": json.RawMessage(validAttempts(l.Attempts)),
			"latencyMs": l.LatencyMs, "errorCode": capString(l.ErrorCode), "promptTokens": l.PromptTokens, "completionTokens": l.CompletionTokens, "cachedTokens": l.CachedTokens,
			"queueMs": l.QueueMs, "upstreamMs": max(l.LatencyMs-l.QueueMs, 0), "queueReason": capString(l.QueueReason),
			"costUsd": nullUSD(l.CostUSD), "savedUsd": l.SavedUSD})
		if err != nil {
			continue
		}
		if len(out) > 0 && size+len(row) > logsPageBytes {
			truncated = true
			break
		}
		size += len(row)
		out = append(out, row)
	}
	body := map[string]any{"logs": out}
	if len(out) > 0 && (truncated || len(rows) == limit) {
		var last struct {
			ID int64 `json:"id"`
		}
		_ = json.Unmarshal(out[len(out)-1], &last)
		body["nextBefore"] = last.ID
	}
	if truncated {
		body["truncated"] = true
	}
	httpx.WriteJSON(w, http.StatusOK, body)
}

// capString bounds a stored string for display, on a rune boundary.
func capString(s string) string {
	if len(s) <= maxLogString {
		return s
	}
	cut := maxLogString
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// validAttempts is the stored attempts JSON, or [] when it is empty, too
// large or not JSON (it is embedded raw).
func validAttempts(s string) string {
	if s == "" || len(s) > 64<<10 || !json.Valid([]byte(s)) {
		return "[]"
	}
	return s
}
