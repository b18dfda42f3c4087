package verdict

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// maxHint is the largest hint accepted. Anything further away is treated as
// garbage (a misparsed epoch, a bogus date), not as a real instruction.
// Capping sane values is the cooldown package's job, not ours.
const maxHint = 400 * 24 * time.Hour

// bodyScanLimit bounds how much of a body is lower-cased and searched.
const bodyScanLimit = 4 << 10

// Hint sources reported in Verdict.HintSource.
const (
	HintRetryAfter         = "retry-after"
	HintRetryAfterMs       = "retry-after-ms"
	HintResetRequests      = "x-ratelimit-reset-requests"
	HintResetTokens        = "x-ratelimit-reset-tokens"
	HintAnthropicReset     = "anthropic-ratelimit-reset"
	HintBody               = "body"
	HintGoogleRPCRetryInfo = "google_rpc_retry_info"
)

// ParseRetryAfter parses a Retry-After value: delta-seconds (integer or
// decimal) or an HTTP date relative to now. A past date, a negative or
// unparsable value, or one beyond 400 days yields (0, false).
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, ok := parseDecimal(v, time.Second); ok {
		return d, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return untilTime(t, now)
}

// ParseResetDuration parses OpenAI-style x-ratelimit-reset-requests/-tokens
// values ("1s", "6m0s", "20ms", "1h2m3.5s"); a bare number is taken as
// seconds. Signed, unparsable or over-400-day values yield (0, false).
func ParseResetDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, ok := parseDecimal(v, time.Second); ok {
		return d, true
	}
	if c := v[0]; c != '.' && (c < '0' || c > '9') {
		return 0, false // rejects signs, "inf" and friends
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > maxHint {
		return 0, false
	}
	return d, true
}

// ParseResetTimestamp parses an absolute reset time (Anthropic
// anthropic-ratelimit-*-reset RFC 3339 values, or unix epochs in seconds,
// milliseconds, microseconds or nanoseconds) into the time left after now.
// Past, unparsable or over-400-day values yield (0, false).
func ParseResetTimestamp(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if t, ok := parseEpoch(v); ok {
		return untilTime(t, now)
	}
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, v); err == nil {
			return untilTime(t, now)
		}
	}
	if t, err := http.ParseTime(v); err == nil {
		return untilTime(t, now)
	}
	return 0, false
}

// ParseBodyRetry finds a retry hint inside an error body: a Google RPC
// RetryInfo retryDelay (source "google_rpc_retry_info") or prose such as
// "try again in 1m30s", "retry after 20 seconds" or "reset at <RFC 3339>"
// (source "body"). Only the first 4 KiB are searched.
func ParseBodyRetry(body []byte, now time.Time) (time.Duration, string, bool) {
	prefix := body
	if len(prefix) > bodyScanLimit {
		prefix = prefix[:bodyScanLimit]
	}
	return parseBodyRetry(prefix, strings.ToLower(string(prefix)), now)
}

// HintFromResponse picks the upstream's retry hint in priority order:
// Retry-After, retry-after-ms, x-ratelimit-reset-requests/-tokens (the
// larger), anthropic-ratelimit-unified-reset then -requests/-tokens-reset,
// then the body. Zero hints are skipped because a zero Verdict.RetryAfter
// means "no hint". It returns (0, "") when nothing usable is found.
func HintFromResponse(h http.Header, body []byte, now time.Time) (time.Duration, string) {
	prefix := body
	if len(prefix) > bodyScanLimit {
		prefix = prefix[:bodyScanLimit]
	}
	return hintFrom(h, prefix, strings.ToLower(string(prefix)), now, true)
}

// hintFrom is HintFromResponse on an already cut and lower-cased body.
// Without windowHeaders only Retry-After style headers and the body count:
// rate-limit window headers ride on every response and say nothing about
// when an overloaded server recovers.
func hintFrom(h http.Header, prefix []byte, lower string, now time.Time, windowHeaders bool) (time.Duration, string) {
	if len(h) > 0 {
		if d, ok := ParseRetryAfter(h.Get("Retry-After"), now); ok && d > 0 {
			return d, HintRetryAfter
		}
		if d, ok := parseDecimal(strings.TrimSpace(h.Get("Retry-After-Ms")), time.Millisecond); ok && d > 0 {
			return d, HintRetryAfterMs
		}
		if windowHeaders {
			if d, src := resetHeaders(h, now); d > 0 {
				return d, src
			}
		}
	}
	if d, src, ok := parseBodyRetry(prefix, lower, now); ok && d > 0 {
		return d, src
	}
	return 0, ""
}

// resetHeaders reads the OpenAI and Anthropic rate-limit window headers.
func resetHeaders(h http.Header, now time.Time) (time.Duration, string) {
	req, okReq := ParseResetDuration(h.Get("X-Ratelimit-Reset-Requests"))
	tok, okTok := ParseResetDuration(h.Get("X-Ratelimit-Reset-Tokens"))
	switch {
	case okReq && okTok && tok > req:
		return tok, HintResetTokens
	case okReq && req > 0:
		return req, HintResetRequests
	case okTok && tok > 0:
		return tok, HintResetTokens
	}
	if d, ok := ParseResetTimestamp(h.Get("Anthropic-Ratelimit-Unified-Reset"), now); ok && d > 0 {
		return d, HintAnthropicReset
	}
	var best time.Duration
	for _, k := range [...]string{
		"Anthropic-Ratelimit-Requests-Reset",
		"Anthropic-Ratelimit-Tokens-Reset",
		"Anthropic-Ratelimit-Input-Tokens-Reset",
		"Anthropic-Ratelimit-Output-Tokens-Reset",
	} {
		if d, ok := ParseResetTimestamp(h.Get(k), now); ok && d > best {
			best = d
		}
	}
	if best > 0 {
		return best, HintAnthropicReset
	}
	return 0, ""
}

// maxPhraseTries bounds how many occurrences of one phrase are parsed, so a
// hostile body cannot make hint parsing expensive.
const maxPhraseTries = 8

// bodyRetryPhrases introduce a relative retry delay in error prose.
var bodyRetryPhrases = [...]string{
	"retry after ",
	"try again in ",
	"try again after ",
	"retry in ",
	"reset after ", // Code Assist: "Your quota will reset after 2h36m24s."
}

// bodyResetPhrases introduce an absolute reset time in error prose.
var bodyResetPhrases = [...]string{"reset at ", "resets at ", "reset_at: "}

// parseBodyRetry implements ParseBodyRetry on a cut prefix and its lower-cased copy.
func parseBodyRetry(prefix []byte, lower string, now time.Time) (time.Duration, string, bool) {
	if d, ok := googleRetryInfo(prefix); ok {
		return d, HintGoogleRPCRetryInfo, true
	}
	if d, ok := codexUsageReset(prefix, now); ok {
		return d, HintBody, true
	}
	for _, p := range bodyRetryPhrases {
		for rest, i, n := lower, 0, 0; n < maxPhraseTries; rest, n = rest[i+len(p):], n+1 {
			if i = strings.Index(rest, p); i < 0 {
				break
			}
			if d, ok := parseProseDuration(rest[i+len(p):]); ok {
				return d, HintBody, true
			}
		}
	}
	for _, p := range bodyResetPhrases {
		for rest, i, n := lower, 0, 0; n < maxPhraseTries; rest, n = rest[i+len(p):], n+1 {
			if i = strings.Index(rest, p); i < 0 {
				break
			}
			if d, ok := ParseResetTimestamp(proseToken(rest[i+len(p):], false), now); ok {
				return d, HintBody, true
			}
		}
	}
	return 0, "", false
}

// codexUsageReset reads the ChatGPT Codex backend's usage-limit error
// ({"error":{"type":"usage_limit_reached","resets_in_seconds":N,"resets_at":epoch}}).
func codexUsageReset(prefix []byte, now time.Time) (time.Duration, bool) {
	if !looksLikeJSON(prefix) || !gjson.ValidBytes(prefix) {
		return 0, false
	}
	e := gjson.GetBytes(prefix, "error")
	if s := e.Get("resets_in_seconds"); s.Type == gjson.Number && s.Float() > 0 {
		return time.Duration(s.Float() * float64(time.Second)), true
	}
	if at := e.Get("resets_at"); at.Type == gjson.Number && at.Int() > 0 {
		return untilTime(time.Unix(at.Int(), 0), now)
	}
	return 0, false
}

// googleRetryInfo extracts google.rpc.RetryInfo.retryDelay from a Google
// error body ({"error":{"details":[...]}} or the streaming [{"error":...}] form).
func googleRetryInfo(prefix []byte) (time.Duration, bool) {
	if !looksLikeJSON(prefix) || !bytes.Contains(prefix, []byte("RetryInfo")) {
		return 0, false
	}
	var (
		d     time.Duration
		found bool
	)
	for _, path := range [...]string{"error.details", "0.error.details", "details"} {
		details := gjson.GetBytes(prefix, path)
		if !details.IsArray() {
			continue
		}
		details.ForEach(func(_, item gjson.Result) bool {
			if !strings.HasSuffix(item.Get(`\@type`).String(), "RetryInfo") {
				return true
			}
			delay := item.Get("retryDelay")
			switch {
			case delay.Type == gjson.String:
				d, found = ParseResetDuration(delay.Str)
			case delay.IsObject():
				d, found = protoDuration(delay)
			}
			return !found
		})
		if found {
			return d, true
		}
	}
	return 0, false
}

// protoDuration reads the {"seconds":N,"nanos":M} form of a protobuf Duration.
func protoDuration(r gjson.Result) (time.Duration, bool) {
	s, n := r.Get("seconds"), r.Get("nanos")
	sec, err := strconv.ParseInt(strings.TrimSpace(s.String()), 10, 64)
	if !s.Exists() || err != nil || sec < 0 || sec > int64(maxHint/time.Second) {
		return 0, false
	}
	nanos := n.Int()
	if nanos < 0 || nanos >= int64(time.Second) {
		nanos = 0
	}
	return time.Duration(sec)*time.Second + time.Duration(nanos), true
}

// looksLikeJSON reports whether b starts, after blanks, with an object or array.
func looksLikeJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// proseUnits maps a unit word following a bare number to its size.
var proseUnits = [...]struct {
	word string
	unit time.Duration
}{
	{"milliseconds", time.Millisecond},
	{"millisecond", time.Millisecond},
	{"ms", time.Millisecond},
	{"seconds", time.Second},
	{"second", time.Second},
	{"secs", time.Second},
	{"sec", time.Second},
	{"s", time.Second},
	{"minutes", time.Minute},
	{"minute", time.Minute},
	{"mins", time.Minute},
	{"min", time.Minute},
	{"hours", time.Hour},
	{"hour", time.Hour},
	{"hrs", time.Hour},
	{"hr", time.Hour},
	{"h", time.Hour},
	{"days", 24 * time.Hour},
	{"day", 24 * time.Hour},
}

// parseProseDuration reads "20 seconds", "1m30s", "2.5s", "20ms" or a bare
// "20" (seconds) at the start of s.
func parseProseDuration(s string) (time.Duration, bool) {
	tok := proseToken(s, true)
	if tok == "" {
		return 0, false
	}
	if rest := s[len(tok):]; rest != "" && strings.IndexByte("-:/", rest[0]) >= 0 {
		return 0, false // a date or a ratio, not a delay
	}
	if d, ok := parseDecimal(tok, time.Second); ok {
		// A bare number: look for a unit word after it.
		rest := strings.TrimLeft(s[len(tok):], " ")
		word := rest
		for i := 0; i < len(word); i++ {
			if c := word[i]; c < 'a' || c > 'z' {
				word = word[:i]
				break
			}
		}
		for _, u := range proseUnits {
			if word == u.word {
				return parseDecimal(tok, u.unit)
			}
		}
		return d, true
	}
	return ParseResetDuration(tok)
}

// proseToken returns the leading run of duration (or, when !duration,
// timestamp) characters of s, without a sentence-ending dot.
func proseToken(s string, duration bool) string {
	end := 0
	for end < len(s) {
		c := s[end]
		ok := c >= '0' && c <= '9' || c == '.'
		if duration {
			ok = ok || c == 'h' || c == 'm' || c == 's' || c == 'u' || c == 'n'
		} else {
			ok = ok || c == '-' || c == ':' || c == '+' || c == 't' || c == 'z'
		}
		if !ok {
			break
		}
		end++
	}
	tok := strings.TrimRight(s[:end], ".")
	if !duration {
		tok = strings.ToUpper(tok) // RFC 3339 wants upper-case T and Z
	}
	return tok
}

// parseDecimal parses an unsigned decimal number ("20", "1.5") of unit.
// It rejects signs, exponents, and values beyond maxHint.
func parseDecimal(s string, unit time.Duration) (time.Duration, bool) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || (hasDot && frac == "") {
		return 0, false
	}
	limit := uint64(maxHint / unit)
	var n uint64
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
		if n > limit {
			return 0, false
		}
	}
	var f, scale float64 = 0, 1
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if i < 9 {
			f = f*10 + float64(c-'0')
			scale *= 10
		}
	}
	d := time.Duration(n)*unit + time.Duration(f/scale*float64(unit))
	if d > maxHint {
		return 0, false
	}
	return d, true
}

// parseEpoch parses an unsigned unix epoch, guessing its unit from its
// magnitude (seconds until year 5138, then ms, µs, ns).
func parseEpoch(s string) (time.Time, bool) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || len(intPart) > 19 || (hasDot && frac == "") {
		return time.Time{}, false
	}
	if !allDigits(intPart) || !allDigits(frac) {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	switch {
	case n >= 1e17:
		return time.Unix(0, n), true
	case n >= 1e14:
		return time.UnixMicro(n), true
	case n >= 1e11:
		return time.UnixMilli(n), true
	}
	var nanos int64
	for i, scale := 0, int64(1e8); i < len(frac) && i < 9; i, scale = i+1, scale/10 {
		nanos += int64(frac[i]-'0') * scale
	}
	return time.Unix(n, nanos), true
}

// allDigits reports whether s holds only ASCII digits (true for "").
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// untilTime is t-now when that lies in [0, maxHint].
func untilTime(t, now time.Time) (time.Duration, bool) {
	d := t.Sub(now)
	if d < 0 || d > maxHint {
		return 0, false
	}
	return d, true
}
