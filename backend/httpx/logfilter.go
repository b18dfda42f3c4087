package httpx

import (
	"context"
	"log"
	"log/slog"
	"strconv"
	"strings"
)

// PeerBytesLogger is a *log.Logger for net/http's own log lines (the
// server's ErrorLog, and the standard logger its transport writes to): each
// line goes to h at level with every quoted string in it replaced by its
// length. net/http quotes a peer's raw bytes in some of its lines ("Unsolicited
// response received on idle HTTP channel starting with %q" from the
// transport, an HTTP/2 server's "bogus greeting %q"), and a peer's bytes are
// never logged verbatim: an upstream may send anything, a credential it
// echoes included.
func PeerBytesLogger(h slog.Handler, level slog.Level) *log.Logger {
	return log.New(peerBytesWriter{log: slog.New(h), level: level}, "", 0)
}

type peerBytesWriter struct {
	log   *slog.Logger
	level slog.Level
}

func (w peerBytesWriter) Write(p []byte) (int, error) {
	w.log.Log(context.Background(), w.level, RedactQuoted(strings.TrimRight(string(p), "\n")))
	return len(p), nil
}

// RedactQuoted replaces each Go-quoted string in s ("…", as %q writes it)
// with a note of how many bytes it held; an unterminated quote redacts the
// rest of the line.
func RedactQuoted(s string) string {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		b.WriteString(s[:i])
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil { // unterminated: the rest is the peer's
			b.WriteString(`"[` + strconv.Itoa(len(s)-i-1) + ` bytes redacted]"`)
			return b.String()
		}
		n := len(q) - 2
		if u, err := strconv.Unquote(q); err == nil {
			n = len(u)
		}
		b.WriteString(`"[` + strconv.Itoa(n) + ` bytes redacted]"`)
		s = s[i+len(q):]
		i = strings.IndexByte(s, '"')
	}
	b.WriteString(s)
	return b.String()
}
