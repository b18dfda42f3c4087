package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"omniroute/backend/httpx"
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
	rows, err := a.Store.RecentRequestLogs(limit)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, l := range rows {
		out = append(out, map[string]any{"id": l.ID, "requestId": l.RequestID, "createdAt": rfc3339(l.CreatedAt),
			"model": l.Model, "provider": l.Provider, "connectionId": l.ConnectionID, "status": l.Status,
			"stream": l.Stream, "attemptCount": l.AttemptCount, "attempts": json.RawMessage(orEmpty(l.Attempts)),
			"latencyMs": l.LatencyMs, "errorCode": l.ErrorCode, "promptTokens": l.PromptTokens, "completionTokens": l.CompletionTokens,
			"queueMs": l.QueueMs, "upstreamMs": max(l.LatencyMs-l.QueueMs, 0), "queueReason": l.QueueReason})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"logs": out})
}

func orEmpty(s string) string {
	if s == "" {
		return "[]"
	}
	return s
}
