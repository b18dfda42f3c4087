package api

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"omniroute/backend/httpx"
	"omniroute/backend/store"
)

// logsPageBytes caps one page of GET /api/logs: however large the stored rows,
// an answer stays small; the client follows nextBefore for more.
const logsPageBytes = 1 << 20

// maxLogString caps each free-text field of a log row in the answer.
const maxLogString = 256

// logFilter reads the filters GET /api/logs and its export share: status,
// connectionId, model, keyId, before / after (paging by id), from / to (when
// the request finished: RFC 3339 or Unix ms) and q (a case-insensitive
// substring of the model, provider, error code or its sentence, connection
// — by id or by name, in the attempts too — or key, by id or by name; "refused"
// finds the requests refused before any connection was tried).
func (a *API) logFilter(q url.Values) (store.RequestLogFilter, error) {
	f := store.RequestLogFilter{Status: q.Get("status"), ConnectionID: q.Get("connectionId"), Model: q.Get("model"), APIKeyID: q.Get("keyId"), RequestID: q.Get("requestId")}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"before", &f.Before}, {"after", &f.After}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return f, errInvalidQuery(p.name, p.name+" must be a log id (a positive integer)")
			}
			*p.dst = n
		}
	}
	if f.Before > 0 && f.After > 0 {
		return f, errInvalidQuery("after", "give before (older) or after (newer), not both")
	}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := q.Get(p.name); v != "" {
			ms, ok := parseInstant(v)
			if !ok {
				return f, errInvalidQuery(p.name, p.name+" must be an RFC 3339 time or Unix milliseconds")
			}
			*p.dst = ms
		}
	}
	if f.From > 0 && f.To > 0 && f.To <= f.From {
		return f, errInvalidQuery("to", "to must be after from")
	}
	if f.Status != "" && f.Status != "ok" && f.Status != "error" {
		if n, err := strconv.Atoi(f.Status); err != nil || n < 100 || n > 599 {
			return f, errInvalidQuery("status", "status must be ok, error or an HTTP status code")
		}
	}
	if t := strings.TrimSpace(q.Get("q")); t != "" {
		if len(t) > maxLogString {
			return f, errInvalidQuery("q", "q must be at most 256 bytes")
		}
		f.Text = t
		lower := strings.ToLower(t)
		for _, c := range a.Engine.Registry().All() {
			if strings.Contains(strings.ToLower(c.Name), lower) || strings.Contains(strings.ToLower(providerDisplayName(c)), lower) {
				f.ConnectionIDs = append(f.ConnectionIDs, c.ID)
			}
		}
		for code, sentence := range a.words().Codes {
			if strings.Contains(strings.ToLower(sentence), lower) {
				f.ErrorCodes = append(f.ErrorCodes, code)
			}
		}
		slices.Sort(f.ErrorCodes) // one query text for one search
		f.Refused = strings.Contains(refusedWords, lower)
		if keys, err := a.Store.APIKeys(); err == nil {
			for _, k := range keys {
				if strings.Contains(strings.ToLower(k.Name), lower) {
					f.APIKeyIDs = append(f.APIKeyIDs, k.ID)
				}
			}
		}
	}
	return f, nil
}

// refusedWords is what Logs shows for a request refused before any
// connection was tried; a search within them finds those rows.
const refusedWords = "not sent (refused)"

// parseInstant reads an RFC 3339 time or Unix milliseconds.
func parseInstant(v string) (int64, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, n > 0
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || t.UnixMilli() <= 0 {
		return 0, false
	}
	return t.UnixMilli(), true
}

// logRowJSON is one log row as GET /api/logs answers it. finishedAt is the
// time the dashboard shows and the log is ordered by (rows are written as
// requests finish).
func logRowJSON(l store.RequestLog) map[string]any {
	return map[string]any{"id": l.ID, "requestId": l.RequestID, "createdAt": rfc3339(l.CreatedAt), "finishedAt": rfc3339(l.CreatedAt + l.LatencyMs),
		"model": capString(l.Model), "provider": capString(l.Provider), "connectionId": l.ConnectionID, "apiKeyId": l.APIKeyID, "status": l.Status,
		"stream": l.Stream, "attemptCount": l.AttemptCount, "attempts": json.RawMessage(validAttempts(l.Attempts)),
		"latencyMs": l.LatencyMs, "errorCode": capString(l.ErrorCode), "promptTokens": l.PromptTokens, "completionTokens": l.CompletionTokens, "cachedTokens": l.CachedTokens,
		"queueMs": l.QueueMs, "upstreamMs": max(l.LatencyMs-l.QueueMs, 0), "queueReason": capString(l.QueueReason),
		"costUsd": nullUSD(l.CostUSD), "savedUsd": l.SavedUSD}
}

// listLogs serves GET /api/logs?limit=N&before=ID|after=ID&from=&to=&q=&…:
// the newest matching rows first, at most limit rows (default 100, max 1000)
// and about logsPageBytes bytes. nextBefore, when present, is the before= of
// the next (older) page; newerAfter, on a page that is not the newest, the
// after= of the next newer one.
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
	f, err := a.logFilter(q)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	rows, skipped, err := a.Store.FilteredRequestLogs(f, limit)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	oldest := int64(0) // the oldest id this page saw, skipped rows included
	for _, id := range skipped {
		if id > 0 && (oldest == 0 || id < oldest) {
			oldest = id
		}
	}
	out := make([]json.RawMessage, 0, len(rows))
	size, truncated := 0, false
	var lastID int64
	withBodies := a.rowsWithBodies(rows)
	for _, l := range rows {
		fields := logRowJSON(l)
		if withBodies[l.RequestID] {
			fields["hasBodies"] = true
		}
		row, err := json.Marshal(fields)
		if err != nil {
			continue
		}
		if len(out) > 0 && size+len(row) > logsPageBytes {
			truncated = true
			break
		}
		size += len(row)
		out = append(out, row)
		lastID = l.ID
	}
	body := map[string]any{"logs": out}
	if !truncated && oldest > 0 && (lastID == 0 || oldest < lastID) {
		lastID = oldest // the next page starts below the skipped rows too
	}
	// An after= page that came back full may have still newer rows; a
	// before= page always has newer ones (the page it came from).
	if lastID > 0 && (truncated || len(rows)+len(skipped) == limit || f.After > 0) {
		body["nextBefore"] = lastID
	}
	if len(skipped) > 0 {
		// Rows that do not read as log rows (a damaged database) are left
		// out and counted, never a 500.
		body["skippedRows"] = len(skipped)
		w.Header().Set("X-OmniRoute-Skipped-Rows", strconv.Itoa(len(skipped)))
	}
	if len(rows) > 0 && (f.Before > 0 || (f.After > 0 && len(rows) == limit)) {
		body["newerAfter"] = rows[0].ID
	}
	if truncated {
		body["truncated"] = true
	}
	httpx.WriteJSON(w, http.StatusOK, body)
}

// maxExportRows bounds one export of the request log.
const maxExportRows = 100_000

// exportLogs serves GET /api/logs/export?format=csv|json&<the filters of
// GET /api/logs>: every matching row (newest first, at most maxExportRows) as
// a download, read from the store a page at a time.
func (a *API) exportLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "csv"
	}
	if format != "csv" && format != "json" {
		httpx.WriteError(w, errInvalidQuery("format", "format must be csv or json"))
		return
	}
	f, err := a.logFilter(q)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	if f.After > 0 {
		httpx.WriteError(w, errInvalidQuery("after", "an export pages by itself: give from / to or before, not after"))
		return
	}
	name := "omniroute-logs-" + a.Clock.Now().UTC().Format("20060102-150405") + "." + format
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	var cw *csv.Writer
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		cw = csv.NewWriter(w)
		_ = cw.Write([]string{"id", "finishedAt", "createdAt", "requestId", "key", "model", "provider", "connection", "status", "errorCode",
			"attempts", "latencyMs", "queueMs", "promptTokens", "completionTokens", "cachedTokens", "stream", "costUsd", "savedUsd"})
	} else {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("["))
	}
	conns := map[string]string{}
	for _, c := range a.Engine.Registry().All() {
		conns[c.ID] = c.Name
	}
	keys := map[string]string{}
	if rows, err := a.Store.APIKeys(); err == nil {
		for _, k := range rows {
			keys[k.ID] = k.Name
		}
	}
	n := 0
	for n < maxExportRows {
		rows, skipped, err := a.Store.FilteredRequestLogs(f, min(1000, maxExportRows-n))
		if err != nil || len(rows)+len(skipped) == 0 {
			break
		}
		oldest := int64(0) // rows that do not read as log rows are left out
		for _, id := range skipped {
			if id > 0 && (oldest == 0 || id < oldest) {
				oldest = id
			}
		}
		if len(rows) == 0 {
			if oldest == 0 {
				break
			}
			f.Before = oldest
			continue
		}
		for _, l := range rows {
			if cw != nil {
				_ = cw.Write([]string{strconv.FormatInt(l.ID, 10), msTime(l.CreatedAt + l.LatencyMs), msTime(l.CreatedAt), l.RequestID,
					orID(keys[l.APIKeyID], l.APIKeyID), l.Model, l.Provider, orID(conns[l.ConnectionID], l.ConnectionID), strconv.Itoa(l.Status),
					l.ErrorCode, strconv.Itoa(l.AttemptCount), strconv.FormatInt(l.LatencyMs, 10), strconv.FormatInt(l.QueueMs, 10),
					strconv.Itoa(l.PromptTokens), strconv.Itoa(l.CompletionTokens), strconv.Itoa(l.CachedTokens), strconv.FormatBool(l.Stream),
					csvUSD(l.CostUSD), usd(l.SavedUSD)})
			} else {
				row := logRowJSON(l)
				row["keyName"], row["connectionName"] = keys[l.APIKeyID], conns[l.ConnectionID]
				b, err := json.Marshal(row)
				if err != nil {
					continue
				}
				if n > 0 {
					_, _ = w.Write([]byte(",\n"))
				}
				_, _ = w.Write(b)
			}
			n++
		}
		f.Before = rows[len(rows)-1].ID
		if oldest > 0 && oldest < f.Before {
			f.Before = oldest
		}
	}
	if cw != nil {
		cw.Flush()
	} else {
		_, _ = w.Write([]byte("]\n"))
	}
}

// orID is a name, or the id when the name is unknown (a deleted key or connection).
func orID(name, id string) string {
	if name != "" {
		return name
	}
	return id
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

// msTime is Unix ms as RFC 3339 in UTC ("" for none), for the CSV export.
func msTime(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// rowsWithBodies is which of rows' requests have captured bodies (none
// without body capture).
func (a *API) rowsWithBodies(rows []store.RequestLog) map[string]bool {
	if a.Capture == nil || len(rows) == 0 {
		return nil
	}
	ids := make([]string, 0, len(rows))
	for _, l := range rows {
		if l.RequestID != "" {
			ids = append(ids, l.RequestID)
		}
	}
	m, _ := a.Store.RequestIDsWithBodies(ids, a.Capture.ExpiredBefore()) // expired bodies are not offered
	return m
}
