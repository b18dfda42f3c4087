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
	"sync"
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

// shape is one credential shape: the literals one of which starts every
// match (lower case when fold: matched ignoring ASCII case), whether a match
// must not follow a word character, the pattern anchored at the literal, and
// whether its first group (a label) stays. Only the literals are searched
// for; the pattern runs where one is found, so a body costs one pass per
// literal however many look-alikes it holds.
type shape struct {
	lits []string
	fold bool
	word bool
	re   func() *regexp.Regexp // compiled on first use (lazyRE)
	keep bool
	// opaque: the token (after the label) must hold a digit or one of
	// -._~+/= — "Bearer" and "Basic" also start English words
	// ("basic authentication" is no credential).
	opaque bool
}

func lits(l ...string) []string { return l }

// lazyRE compiles expr on its first use, not at start-up: the shapes' and
// the other packages' patterns were ≈ 0.5 MB of heap compiled by package
// initialisers before the gateway served anything (docs/BENCHMARKS.md,
// idle RSS).
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// shapes are the credential shapes removed wherever they appear, in JSON
// strings, SSE data lines and plain text alike. None matches across a
// backslash or a quote, so JSON stays valid.
var shapes = []shape{
	{lits("bearer"), true, true, lazyRE(`^(?i)(bearer\s+)[^\s"'\\<>,;()]{8,}`), true, true},
	{lits("basic"), true, true, lazyRE(`^(?i)(basic\s+)[A-Za-z0-9+/]{12,}={0,2}`), true, true},
	{lits("sk-"), false, true, lazyRE(`^sk-[A-Za-z0-9_-]{12,}`), false, false},                                                                  // OpenAI, Anthropic, OpenRouter, DeepSeek, the gateway's sk-omni-
	{lits("sk_live_", "sk_test_", "rk_live_", "rk_test_"), false, true, lazyRE(`^[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`), false, false},          // Stripe
	{lits("omt_"), false, true, lazyRE(`^omt_[A-Za-z0-9_-]{8,}`), false, false},                                                                 // the gateway's management tokens
	{lits("AIza"), false, false, lazyRE(`^AIza[0-9A-Za-z_-]{20,}`), false, false},                                                               // Google API keys
	{lits("ya29."), false, false, lazyRE(`^ya29\.[0-9A-Za-z_-]{16,}`), false, false},                                                            // Google OAuth access tokens
	{lits("1//0"), false, true, lazyRE(`^1//0[0-9A-Za-z_-]{20,}`), false, false},                                                                // Google OAuth refresh tokens
	{lits("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), false, true, lazyRE(`^gh[pousr]_[A-Za-z0-9]{20,}`), false, false},                            // GitHub tokens
	{lits("github_pat_"), false, false, lazyRE(`^github_pat_[A-Za-z0-9_]{20,}`), false, false},                                                  // GitHub fine-grained tokens
	{lits("glpat-"), false, false, lazyRE(`^glpat-[A-Za-z0-9_-]{20,}`), false, false},                                                           // GitLab
	{lits("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"), false, true, lazyRE(`^xox[abposre]-[A-Za-z0-9-]{10,}`), false, false}, // Slack
	{lits("hf_"), false, true, lazyRE(`^hf_[A-Za-z0-9]{30,}`), false, false},                                                                    // Hugging Face
	{lits("gsk_"), false, true, lazyRE(`^gsk_[A-Za-z0-9]{20,}`), false, false},                                                                  // Groq
	{lits("xai-"), false, true, lazyRE(`^xai-[A-Za-z0-9]{20,}`), false, false},                                                                  // xAI
	{lits("eyJ"), false, false, lazyRE(`^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`), false, false},                               // JWTs
	{lits("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA"), false, true,
		lazyRE(`^(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b`), false, false}, // AWS key ids
	{lits("api", "key", "token", "access", "auth", "pass", "secret", "client", "sig"), true, true,
		lazyRE(`^(?i)((?:api[_-]?key|key|token|access[_-]?token|auth|password|passwd|secret|client[_-]?secret|sig|signature)=)[^&\s"'\\<>]+`), true, false},
}

// Shapes removes every credential shape from s: private key blocks, AWS
// secret keys near an AWS or secret word, then the shapes above.
func Shapes(s string) string {
	if s == "" {
		return s
	}
	s = privateKeys(s)
	s = awsSecrets(s)
	for i := range shapes {
		s = shapes[i].replace(s)
	}
	return s
}

// replace replaces every match of p in s.
func (p *shape) replace(s string) string {
	hay := s
	if p.fold {
		hay = asciiLower(s)
	}
	next := make([]int, len(p.lits)) // the next occurrence of each literal at or after i (-1: none left)
	for k, l := range p.lits {
		next[k] = strings.Index(hay, l)
	}
	var b strings.Builder
	last := 0
	for i := 0; ; {
		pos := -1
		for k, l := range p.lits {
			if next[k] >= 0 && next[k] < i {
				if n := strings.Index(hay[i:], l); n >= 0 {
					next[k] = i + n
				} else {
					next[k] = -1
				}
			}
			if next[k] >= 0 && (pos < 0 || next[k] < pos) {
				pos = next[k]
			}
		}
		if pos < 0 {
			break
		}
		if p.word && pos > 0 && wordByte(s[pos-1]) {
			i = pos + 1
			continue
		}
		win := s[pos:min(len(s), pos+matchWindow)]
		loc := p.re().FindStringSubmatchIndex(win)
		if loc == nil {
			i = pos + 1
			continue
		}
		if p.opaque && !opaqueToken(win[loc[3]:loc[1]]) {
			i = pos + 1
			continue
		}
		end := pos + loc[1]
		if loc[1] == len(win) { // a token longer than the window: through its end
			for end < len(s) && !delimiter(s[end]) {
				end++
			}
		}
		b.WriteString(s[last:pos])
		if p.keep {
			b.WriteString(s[pos : pos+loc[3]])
		}
		b.WriteString(Mark)
		last = end
		i = last
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchWindow is how much of the text a shape's pattern reads at a literal:
// small enough for the fast matcher; a longer token is replaced through its
// end.
const matchWindow = 512

// delimiter reports whether c ends a token (no credential shape holds it).
func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '\\', '<', '>', ',', ';', '(', ')', '&':
		return true
	}
	return false
}

// opaqueToken reports whether tok holds a digit or a token symbol.
func opaqueToken(tok string) bool {
	return strings.ContainsAny(tok, "0123456789-._~+/=")
}

// asciiLower is s with ASCII letters in lower case, byte for byte (indices
// into it are indices into s).
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// wordByte reports whether c is an ASCII word character (as \b reads one).
func wordByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_'
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

var (
	pemBegin = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`) })
	pemEnd   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`) })
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
		loc := pemBegin().FindStringIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		end := len(s)
		if e := pemEnd().FindStringIndex(s[loc[1]:]); e != nil {
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

// awsContext are the words (lower case) that make a 40-character run an AWS
// secret key when they appear within awsContextBytes before it.
var awsContext = []string{"aws", "secret", "akia", "asia"}

const awsContextBytes = 120

// awsSecrets replaces AWS secret access keys: a run of exactly 40
// characters of base64 (not followed by '=' padding) after an AWS-ish word
// (an access key id, "aws", "secret") within awsContextBytes.
func awsSecrets(s string) string {
	if len(s) < 40 || !containsAny(strings.ToLower(s), awsContext) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !awsAlphabet(s[i]) {
			i++
			continue
		}
		start := i
		for i < len(s) && awsAlphabet(s[i]) {
			i++
		}
		if i-start != 40 || i < len(s) && s[i] == '=' {
			continue
		}
		ctx := strings.ToLower(s[max(0, start-awsContextBytes):start])
		if !containsAny(ctx, awsContext) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Mark)
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// awsAlphabet reports whether c is of an AWS secret key's alphabet.
func awsAlphabet(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '/' || c == '+'
}
