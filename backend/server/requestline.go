package server

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"omniroute/backend/store"
)

// requestLines writes the optional one-line-per-request log (--log-requests):
// time, key name, model, connection, status, attempts, latency and error
// code, for a terminal or the journal. It never writes a secret: the key's
// name, not its value; the connection's display name.
type requestLines struct {
	mu      sync.Mutex
	w       io.Writer
	keyName func(id string) string
	conn    func(id string) string
	buf     []byte
}

// line formats one row: `2026-12-04T15:30:01.250Z key="Default key"
// model=gpt-4o-mini conn="Lab box" status=200 attempts=1 latency=1.2s code=-`.
func appendRequestLine(b []byte, l *store.RequestLog, key, conn string) []byte {
	b = time.UnixMilli(l.CreatedAt+l.LatencyMs).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = appendField(b, "key", key)
	b = appendField(b, "model", l.Model)
	b = appendField(b, "conn", conn)
	b = strconv.AppendInt(append(b, " status="...), int64(l.Status), 10)
	b = strconv.AppendInt(append(b, " attempts="...), int64(l.AttemptCount), 10)
	b = append(append(b, " latency="...), humanMs(l.LatencyMs)...)
	b = appendField(b, "code", l.ErrorCode)
	return append(b, '\n')
}

// appendField appends ` name=value`, quoting a value with spaces or quotes
// and writing "-" for an empty one.
func appendField(b []byte, name, v string) []byte {
	b = append(append(append(b, ' '), name...), '=')
	switch {
	case v == "":
		return append(b, '-')
	case strings.ContainsAny(v, " \"=\t\n\r"):
		return strconv.AppendQuote(b, v)
	}
	return append(b, v...)
}

// humanMs is a latency in the dashboard's units: "850ms", "2.3s", "1m05s".
func humanMs(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// Log writes l's line.
func (r *requestLines) Log(l *store.RequestLog) {
	key, conn := "", ""
	if l.APIKeyID != "" && r.keyName != nil {
		key = r.keyName(l.APIKeyID)
		if key == "" {
			key = l.APIKeyID
		}
	}
	if l.ConnectionID != "" && r.conn != nil {
		conn = r.conn(l.ConnectionID)
	}
	r.mu.Lock()
	r.buf = appendRequestLine(r.buf[:0], l, key, conn)
	_, _ = r.w.Write(r.buf)
	r.mu.Unlock()
}
