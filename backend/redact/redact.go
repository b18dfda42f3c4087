// Package redact removes credentials from text the gateway keeps or shows
// (captured bodies, upstream error messages, request-log details). Known
// credentials go first, by value, in every spelling an upstream may echo them
// (a pattern would cut a key of an unknown shape and leave its tail); then
// every common credential shape; then, for JSON, the value of every member
// whose name, read after unescaping, names a credential.
package redact

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// Mark replaces every credential found.
const Mark = "[redacted]"

// MinSecretLen is the shortest credential removed by value: shorter ones
// would blank ordinary words.
const MinSecretLen = 4

// All is s without the known secrets, any credential shape and, in JSON, any
// credential-named member's value.
func All(s string, secrets []string) string {
	return Members(Shapes(Known(s, secrets)))
}

// Known removes each secret from s by value: as sent, JSON-escaped (with and
// without HTML escaping: a Go upstream writes & as \u0026) and URL-encoded
// (query and path spellings). Secrets shorter than MinSecretLen are kept.
func Known(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) < MinSecretLen || s == "" {
			continue
		}
		for _, v := range spellings(sec) {
			s = strings.ReplaceAll(s, v, Mark)
		}
	}
	return s
}

// spellings are the forms in which sec may appear in a body or a message,
// longest first, each once.
func spellings(sec string) []string {
	out := []string{sec}
	add := func(v string) {
		for _, o := range out {
			if o == v {
				return
			}
		}
		out = append(out, v)
	}
	add(jsonEscaped(sec, true))
	add(jsonEscaped(sec, false))
	add(url.QueryEscape(sec))
	add(url.PathEscape(sec))
	// Longest first: a shorter spelling inside a longer one would otherwise
	// cut it and leave its remainder.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// jsonEscaped is sec as it appears inside a JSON string.
func jsonEscaped(sec string, html bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	_ = e.Encode(sec)
	v := bytes.TrimRight(b.Bytes(), "\n")
	return string(v[1 : len(v)-1])
}

// shape is one credential shape: marker is a lower-case literal every match
// contains ("" when none), keep whether the first group (a label) stays.
type shape struct {
	marker string
	re     *regexp.Regexp
	keep   bool
}

// shapes are the credential shapes removed wherever they appear, in JSON
// strings, SSE data lines and plain text alike. None matches across a
// backslash or a quote, so JSON stays valid.
var shapes = []shape{
	{"bearer", regexp.MustCompile(`(?i)(\bbearer\s+)[^\s"'\\<>,;()]{8,}`), true},
	{"basic", regexp.MustCompile(`(?i)(\bbasic\s+)[A-Za-z0-9+/]{12,}={0,2}`), true},
	{"sk-", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{12,}`), false},                                                 // OpenAI, Anthropic, OpenRouter, DeepSeek, the gateway's sk-omni-
	{"k_", regexp.MustCompile(`\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`), false},                                   // Stripe
	{"omt_", regexp.MustCompile(`\bomt_[A-Za-z0-9_-]{8,}`), false},                                                // the gateway's management tokens
	{"aiza", regexp.MustCompile(`AIza[0-9A-Za-z_-]{20,}`), false},                                                 // Google API keys
	{"ya29.", regexp.MustCompile(`ya29\.[0-9A-Za-z_-]{16,}`), false},                                              // Google OAuth access tokens
	{"1//", regexp.MustCompile(`\b1//0[0-9A-Za-z_-]{20,}`), false},                                                // Google OAuth refresh tokens
	{"gh", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`), false},                                             // GitHub tokens
	{"github_pat_", regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,}`), false},                                    // GitHub fine-grained tokens
	{"glpat-", regexp.MustCompile(`glpat-[A-Za-z0-9_-]{20,}`), false},                                             // GitLab
	{"xox", regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`), false},                                        // Slack
	{"hf_", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), false},                                                   // Hugging Face
	{"gsk_", regexp.MustCompile(`\bgsk_[A-Za-z0-9]{20,}`), false},                                                 // Groq
	{"xai-", regexp.MustCompile(`\bxai-[A-Za-z0-9]{20,}`), false},                                                 // xAI
	{"eyj", regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`), false},                 // JWTs
	{"", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b`), false}, // AWS key ids
	{"=", regexp.MustCompile(`(?i)(\b(?:api[_-]?key|key|token|access[_-]?token|auth|password|passwd|secret|client[_-]?secret|sig|signature)=)[^&\s"'\\<>]+`), true},
}

// Shapes removes every credential shape from s: private key blocks, AWS
// secret keys near an AWS or secret word, then the shapes above.
func Shapes(s string) string {
	if s == "" {
		return s
	}
	s = privateKeys(s)
	s = awsSecrets(s)
	lower := strings.ToLower(s)
	for _, p := range shapes {
		if p.marker != "" && !strings.Contains(lower, p.marker) {
			continue
		}
		if p.keep {
			s = p.re.ReplaceAllString(s, "${1}"+Mark)
		} else {
			s = p.re.ReplaceAllString(s, Mark)
		}
	}
	return s
}

var (
	pemBegin = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	pemEnd   = regexp.MustCompile(`-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
)

// privateKeys replaces each PEM (or PGP) private key block, from its BEGIN
// line through its END line; with no END (a body cut short), or a quote
// before it (the JSON string holding the key ends), through there.
func privateKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY") {
		return s
	}
	var b strings.Builder
	for {
		loc := pemBegin.FindStringIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		end := len(s)
		if e := pemEnd.FindStringIndex(s[loc[1]:]); e != nil {
			end = loc[1] + e[1]
		}
		if q := strings.IndexByte(s[loc[1]:], '"'); q >= 0 && loc[1]+q < end {
			end = loc[1] + q
		}
		b.WriteString(s[:loc[0]])
		b.WriteString(Mark)
		s = s[end:]
	}
}

// awsSecretRun is a 40-character run of AWS's secret key alphabet with its
// neighbours (not of that alphabet, or the text's ends).
var awsSecretRun = regexp.MustCompile(`(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)

// awsContext are the words (lower case) that make a 40-character run an AWS
// secret key when they appear within awsContextBytes before it.
var awsContext = []string{"aws", "secret", "akia", "asia"}

const awsContextBytes = 120

// awsSecrets replaces AWS secret access keys: 40 characters of base64
// following an AWS-ish word (an access key id, "aws", "secret").
func awsSecrets(s string) string {
	if len(s) < 40 {
		return s
	}
	locs := awsSecretRun.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		start, end := l[2], l[3]
		ctx := strings.ToLower(s[max(0, start-awsContextBytes):start])
		hit := false
		for _, w := range awsContext {
			hit = hit || strings.Contains(ctx, w)
		}
		if !hit {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Mark)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
