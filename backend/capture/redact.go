package capture

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// Redacted replaces every secret found in a captured body.
const Redacted = "[redacted]"

// minSecretLen is the shortest credential removed by value: shorter ones
// would blank ordinary words.
const minSecretLen = 4

// secretPatterns are the credential shapes removed wherever they appear, in
// JSON strings and SSE data lines alike: bearer tokens, the gateway's own
// client keys and management tokens, OpenAI/Anthropic-style sk- keys and
// Google API keys.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`),
	regexp.MustCompile(`sk-[A-Za-z0-9_-]{12,}`),
	regexp.MustCompile(`omt_[A-Za-z0-9_-]{8,}`),
	regexp.MustCompile(`AIza[0-9A-Za-z_-]{20,}`),
}

// secretFields are JSON members whose string value is a credential whatever
// its shape ("api_key": "…"), matched case-insensitively.
var secretFields = regexp.MustCompile(`(?i)("(?:api[_-]?key|x-api-key|x-goog-api-key|authorization|access[_-]?token|refresh[_-]?token|client[_-]?secret|password|secret)"\s*:\s*)"(?:[^"\\]|\\.)*"`)

// Redact returns body without credentials: the given secrets by value (as
// sent, JSON-escaped and URL-encoded: a connection's key of any shape), then
// every known credential shape and every credential-named JSON member.
func Redact(body []byte, secrets []string) []byte {
	if len(body) == 0 {
		return body
	}
	s := string(body)
	for _, sec := range secrets {
		if len(sec) < minSecretLen {
			continue
		}
		s = strings.ReplaceAll(s, sec, Redacted)
		if esc := jsonEscaped(sec); esc != sec {
			s = strings.ReplaceAll(s, esc, Redacted)
		}
		if q := url.QueryEscape(sec); q != sec {
			s = strings.ReplaceAll(s, q, Redacted)
		}
	}
	s = secretPatterns[0].ReplaceAllString(s, "${1}"+Redacted)
	for _, p := range secretPatterns[1:] {
		s = p.ReplaceAllString(s, Redacted)
	}
	s = secretFields.ReplaceAllString(s, `${1}"`+Redacted+`"`)
	return []byte(s)
}

// jsonEscaped is sec as it appears inside a JSON string.
func jsonEscaped(sec string) string {
	b, _ := json.Marshal(sec)
	return string(b[1 : len(b)-1])
}
