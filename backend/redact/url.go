package redact

import (
	"net/url"
	"strings"
)

// URLCredentials reports whether the URL raw carries a credential: user
// information (user:password@), a query parameter named as a credential
// (key, api-key, token, sig, password, …) or a credential shape in its path
// or query. A URL that cannot be parsed carries none (the caller refuses it
// for that).
func URLCredentials(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.User != nil {
		return true
	}
	for k := range u.Query() {
		if credentialParam(k) {
			return true
		}
	}
	rest := u.EscapedPath() + "?" + u.RawQuery
	return Shapes(rest) != rest
}

// URL is raw with its credentials masked: user information becomes
// [redacted]@, a credential-named query parameter's value [redacted], and
// any credential shape [redacted]. A URL that cannot be parsed is masked whole
// when it holds "@" (it may hold a password), else kept.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			return Mark
		}
		return Shapes(raw)
	}
	if u.User == nil && !URLCredentials(raw) {
		return raw
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			k, _, ok := strings.Cut(p, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if ok && credentialParam(name) {
				parts[i] = k + "=" + Mark
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	s := u.String()
	if hadUser {
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[:i+3] + Mark + "@" + s[i+3:]
		}
	}
	return Shapes(s)
}

// credentialParams are query parameter names (lower case, no separators)
// that carry a credential besides every credential member name.
var credentialParams = map[string]bool{
	"key": true, "auth": true, "sig": true, "signature": true, "pass": true, "pwd": true,
}

// credentialParam reports whether a query parameter named name carries a
// credential (case and separators ignored).
func credentialParam(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(name))
	return credentialParams[n] || n == "token" || SecretName(name)
}
