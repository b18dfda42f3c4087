package capture

import "omniroute/backend/redact"

// Redacted replaces every secret found in a captured body.
const Redacted = redact.Mark

// Redact returns body without credentials: the given secrets by value (as
// sent, JSON-escaped and URL-encoded: a connection's key of any shape), then
// every known credential shape and every credential-named JSON member (the
// name read after unescaping).
func Redact(body []byte, secrets []string) []byte {
	if len(body) == 0 {
		return body
	}
	return []byte(redact.All(string(body), secrets))
}
