package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Members replaces the string value of every JSON member whose name names a
// credential ("api_key", "x-goog-api-key", "private_key", "session_token",
// "secret_access_key", …), the name read after unescaping ("api\u005fkey"
// is api_key), at any depth and in every JSON text of s (SSE data lines
// included). JSON carried inside a string (a tool call's arguments) is
// redacted too. A value cut short by the end of s is replaced through the
// end. JSON stays valid.
func Members(s string) string {
	if strings.IndexByte(s, '"') < 0 {
		return s
	}
	var b strings.Builder
	last, i := 0, 0
	for i < len(s) {
		if s[i] != '"' {
			i++
			continue
		}
		end, closed := stringEnd(s, i)
		j := skipSpace(s, end)
		if closed && j < len(s) && s[j] == ':' {
			k := skipSpace(s, j+1)
			if name, _ := unquote(s[i:end]); k < len(s) && s[k] == '"' && SecretName(name) {
				vend, _ := stringEnd(s, k)
				b.WriteString(s[last:k])
				b.WriteString(`"` + Mark + `"`)
				last, i = vend, vend
				continue
			}
			i = j + 1
			continue
		}
		// A string value: JSON text inside it has escaped quotes.
		if closed && strings.Contains(s[i:end], `\"`) {
			if inner, ok := unquote(s[i:end]); ok && strings.IndexByte(inner, '"') >= 0 {
				if red := Members(inner); red != inner {
					b.WriteString(s[last:i])
					b.WriteString(quote(red))
					last = end
				}
			}
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// stringEnd is the index just after the JSON string starting at s[i] (a
// quote), and whether it is closed (else: the end of s).
func stringEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(s), false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// unquote is the content of the JSON string lit (quotes included); ok is
// false (and the content as written) when it cannot be read.
func unquote(lit string) (string, bool) {
	if !strings.Contains(lit, `\`) {
		return strings.Trim(lit, `"`), true
	}
	var v string
	if json.Unmarshal([]byte(lit), &v) != nil {
		return strings.Trim(lit, `"`), false
	}
	return v, true
}

// quote is v as a JSON string, characters kept as they are where JSON allows.
func quote(v string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}

// secretNames are credential member names, lower case without separators.
var secretNames = map[string]bool{
	"apikey": true, "xapikey": true, "xgoogapikey": true, "authorization": true, "proxyauthorization": true,
	"accesstoken": true, "refreshtoken": true, "idtoken": true, "sessiontoken": true, "securitytoken": true,
	"xamzsecuritytoken": true, "clientsecret": true, "password": true, "passwd": true, "passphrase": true,
	"secret": true, "privatekey": true, "secretkey": true, "secretaccesskey": true, "awssecretaccesskey": true,
	"bearer": true, "cookie": true, "setcookie": true, "credential": true, "credentials": true,
	"apitoken": true, "authtoken": true, "accesskey": true, "sessionkey": true,
}

// secretSuffixes mark a name as a credential's whatever precedes them
// ("openai_api_key", "githubToken", "db_password").
var secretSuffixes = []string{"apikey", "secret", "password", "passwd", "passphrase", "token", "privatekey", "secretkey", "accesskey", "sessionkey"}

// SecretName reports whether a JSON member named name holds a credential:
// case and the separators _ - . and space are ignored.
func SecretName(name string) bool {
	if len(name) > 64 {
		return false
	}
	var buf [64]byte
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	norm := string(buf[:n])
	if norm == "token" {
		return false // a logprob's "token" is a word of the answer
	}
	if secretNames[norm] {
		return true
	}
	for _, suf := range secretSuffixes {
		if strings.HasSuffix(norm, suf) {
			return true
		}
	}
	return false
}
