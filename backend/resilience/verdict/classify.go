package verdict

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"omniroute/backend/redact"
)

// ErrStall marks a stream that stopped producing content. Stall detectors
// wrap it so Classify can tell a stall from a plain transport failure.
var ErrStall = errors.New("stream stalled")

// Stable verdict codes, one per Kind, safe to expose to clients and logs.
const (
	CodeRateLimited        = "UPSTREAM_RATE_LIMITED"
	CodeConcurrencyLimited = "UPSTREAM_CONCURRENCY_LIMITED"
	CodeQuotaExhausted     = "UPSTREAM_QUOTA_EXHAUSTED"
	CodeAuthFailed         = "UPSTREAM_AUTH_FAILED"
	CodeForbidden          = "UPSTREAM_FORBIDDEN"
	CodeRequestRejected    = "UPSTREAM_REQUEST_REJECTED"
	CodeAccountBanned      = "ACCOUNT_BANNED"
	CodeCreditsExhausted   = "CREDITS_EXHAUSTED"
	CodeModelNotFound      = "MODEL_NOT_FOUND"
	CodeBadRequest         = "UPSTREAM_BAD_REQUEST"
	CodeContextLength      = "CONTEXT_LENGTH_EXCEEDED"
	CodeContentPolicy      = "CONTENT_POLICY_VIOLATION"
	CodeServerError        = "UPSTREAM_SERVER_ERROR"
	CodeTransportError     = "UPSTREAM_TRANSPORT_ERROR"
	CodeTimeout            = "UPSTREAM_TIMEOUT"
	CodeStreamStalled      = "STREAM_STALLED"
	CodeClientCanceled     = "CLIENT_CANCELED"
)

// CodeForbiddenLocked is the reason of a model lockout an ordinary 403
// wrote (no rule naming a permanent denial): a lock for a while, answered
// as transient (503 with Retry-After), unlike a rule's model-scoped
// UPSTREAM_FORBIDDEN, which clients must not retry (issue 40 D).
const CodeForbiddenLocked = "UPSTREAM_FORBIDDEN_LOCKED"

const (
	// concurrencyDefaultDelay is the fixed cooldown of a concurrency limit
	// without an upstream hint: a slot usually frees up within a second.
	concurrencyDefaultDelay = time.Second
	// maxUpstreamMessage bounds the upstream text quoted in Verdict.Message, in runes.
	maxUpstreamMessage = 300
	// maxCleanedText bounds the upstream text redacted for a message (the
	// message is cut to maxUpstreamMessage runes after redaction).
	maxCleanedText = 16 << 10
)

// Body patterns. All are lower case: they are matched against the
// lower-cased first 4 KiB of the body.
var (
	// concurrencyPatterns: the account is healthy but has too many requests in flight.
	concurrencyPatterns = []string{
		"too many concurrent requests", "concurrency limit", "parallel request limit",
		"concurrent request", "并发数过高",
	}
	// quotaPatterns: a quota / credit window is used up. Checked on 429 before
	// concurrency, so an explicit quota body wins.
	quotaPatterns = []string{
		"quota", "insufficient_quota", "usage limit", "usage_limit", "daily limit",
		"monthly limit", "weekly limit", "per day", "per-day", "billing details",
		"billing_hard_limit", "billing hard limit", "billing_not_active", "credits",
		"payment required", "余额不足", "资源包", "使用上限",
	}
	// strictLimitPatterns: a 400 or 500 that clearly restates a quota or rate limit.
	strictLimitPatterns = []string{
		"rate limit exceeded", "rate_limit_exceeded", "resource_exhausted",
		"insufficient_quota", "exceeded your current quota", "quota exceeded",
		"quota_exceeded", "quota exhausted", "too many requests",
	}
	// creditPatterns: billing says there is no money left.
	creditPatterns = []string{
		"credit balance is too low", "insufficient credits", "insufficient_credits",
		"insufficient balance", "insufficient_balance", "payment required",
		"out of credits", "余额不足",
	}
	// authPatterns: the key or token is not (or no longer) valid.
	authPatterns = []string{
		"invalid api key", "invalid_api_key", "invalid x-api-key", "incorrect api key",
		"api key not valid", "api_key_invalid", "authentication_error", "token expired",
		"token has expired", "expired_token", "invalid_token", "token has been revoked",
		"reported as leaked", "invalid authentication", "no auth credentials",
	}
	// banPatterns: the account itself is suspended; any 401/403/400 body.
	banPatterns = []string{
		"account has been suspended", "account suspended", "account has been disabled",
		"account is disabled", "account_disabled", "account has been banned",
		"account banned", "account has been deactivated", "account_deactivated",
		"organization has been disabled", "organization_disabled",
		"this account has been blocked", "account has been blocked",
		"has been suspended", "consumer_suspended", "已被封禁", "已被禁用",
	}
	// banWords are bare ban words; on a 400 they also need an account context
	// so that "banned words" in a content-policy message does not ban a key.
	banWords       = []string{"banned", "deactivated", "suspended"}
	accountContext = []string{"account", "organization", "organisation"}
	// rejectedPatterns: Anthropic OAuth refusing this request, not the account.
	rejectedPatterns = []string{"request not allowed", "request_rejected"}
	// contextPatterns: the prompt does not fit the model.
	contextPatterns = []string{
		"context_length_exceeded", "maximum context length", "prompt is too long",
		"input is too long", "too many tokens", "exceeds the context window",
		"context window", "exceeds the maximum number of tokens", "request_too_large",
		"request entity too large", "prompt exceeds max length", "超过最大长度",
	}
	// contentPatterns: a safety / moderation filter refused the request.
	contentPatterns = []string{
		"content_policy", "content policy", "content_filter", "content management policy",
		"safety", "responsible ai", "responsibleai", "flagged", "moderation", "敏感内容",
	}
)

// GLM (Zhipu) business error codes that name their class unambiguously.
const (
	glmQuota         = "1113"
	glmContentPolicy = "1301"
	glmConcurrency   = "1302"
	glmContextLength = "1261"
)

// secretPattern matches things that look like credentials in upstream text.
var secretPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(
		`(?i)(\bsk-[a-z0-9_\-*]{3,}|bearer\s+[a-z0-9_\-.=:/+~]+|AIza[0-9a-z_\-]{10,}|` +
			`eyJ[a-z0-9_\-]{8,}(\.[a-z0-9_\-]+)*|(api[_-]?key|key|token|access_token)=[^&\s"']+)`)
})

// secretMarkers are lower-case literals every secretPattern match contains;
// checking them first keeps the slow regexp off the common path.
var secretMarkers = []string{"sk-", "bearer", "aiza", "eyj", "key=", "token="}

// mayHoldSecret reports whether s contains any secret marker, ignoring ASCII case.
func mayHoldSecret(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] | 0x20 { // ASCII lower case; cheap first-byte filter
		case 's', 'b', 'a', 'e', 'k', 't':
			for _, m := range secretMarkers {
				if len(s)-i >= len(m) && hasPrefixFold(s[i:], m) {
					return true
				}
			}
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix p, ignoring case.
func hasPrefixFold(s, p string) bool {
	for j := 0; j < len(p); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[j] {
			return false
		}
	}
	return true
}

// collapseSpace trims s and turns every run of white space into one blank.
func collapseSpace(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		switch c := s[i]; {
		case c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			clean = false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			clean = false
		case c >= 0x80:
			clean = false // possibly a Unicode space: take the slow path
		}
	}
	if clean {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// Classify turns one upstream outcome into the verdict every resilience
// layer reads. It is pure; o.Now must be set for date-based retry hints
// (with a zero Now they are ignored).
func Classify(o Outcome) Verdict {
	if o.Err != nil {
		return classifyErr(o)
	}
	if o.Status >= 200 && o.Status < 300 {
		return Verdict{Kind: KindSuccess, Status: o.Status}
	}
	b := newBody(o.Body)
	b.secrets = o.Secrets
	v := classifyStatus(o.Status, &b)
	v.Status = o.Status
	if v.Kind == KindQuota || v.Kind == KindRateLimit || v.Kind == KindConcurrencyLimit ||
		o.Status == 429 || o.Status == 503 || o.Status == 529 {
		v.RetryAfter, v.HintSource = hintFrom(o.Header, b.raw, b.lower, o.Now, v.Kind != KindServer)
	}
	if v.Kind == KindRateLimit && accountWide(o.Header, &b) {
		v.Scope, v.CoolConnection = ScopeConnection, true
	}
	if v.Kind == KindConcurrencyLimit {
		v.FixedCooldown = ConcurrencyCooldown(v.RetryAfter)
	}
	v.Message = message(v.Kind, o.Status, b.upstreamMessage())
	return v
}

// accountWidePatterns: 429 wording that names the account, key or subscription
// rather than one model.
var accountWidePatterns = []string{
	"subscription", "account's rate limit", "rate limit for your account", "account rate limit",
	"account-level", "account level",
	"per account", "all models", "api key rate limit", "organization rate limit",
}

// accountWide reports a rate limit the upstream applies to the whole
// connection: an Anthropic unified (subscription) limit header, an explicit
// X-RateLimit-Scope of account / organization / key / subscription, or body
// wording that names the account rather than a model.
func accountWide(h http.Header, b *body) bool {
	if h != nil {
		switch strings.ToLower(strings.TrimSpace(h.Get("X-Ratelimit-Scope"))) {
		case "account", "organization", "org", "key", "api_key", "subscription", "user":
			return true
		}
		if h.Get("Anthropic-Ratelimit-Unified-Status") != "" || h.Get("Anthropic-Ratelimit-Unified-Reset") != "" {
			return true
		}
	}
	return b.has(accountWidePatterns)
}

// classifyStatus applies the HTTP status and body rules.
func classifyStatus(status int, b *body) Verdict {
	switch {
	case status == 429:
		return limitVerdict(b)
	case status == 402:
		return verdictFor(KindCreditsExhausted)
	case status == 500 && b.strictLimit():
		return limitVerdict(b)
	case isProviderFailure(status): // before the 4xx branch: 408 is a provider failure
		v := verdictFor(KindServer)
		v.CountsForBreaker = true
		return v
	case status >= 400 && status < 500:
		return classifyClientError(status, b)
	case status == 0: // no status and no error: nothing usable arrived
		v := verdictFor(KindTransport)
		v.CountsForBreaker = true
		return v
	default:
		// Other 5xx (501, 505, ...), 1xx and 3xx: this target cannot serve
		// the request but the provider as a whole is not shown to be down.
		return verdictFor(KindServer)
	}
}

// classifyClientError handles every 4xx except 402, 408 and 429.
func classifyClientError(status int, b *body) Verdict {
	if (status == 400 || status == 401 || status == 403) && b.banned(status == 400) {
		return verdictFor(KindBanned)
	}
	if status == 400 && b.strictLimit() {
		return limitVerdict(b)
	}
	if b.has(creditPatterns) {
		return verdictFor(KindCreditsExhausted)
	}
	if status == 403 && b.has(rejectedPatterns) {
		return verdictFor(KindRequestRejected)
	}
	if status == 401 || b.has(authPatterns) {
		return verdictFor(KindAuth)
	}
	if status == 404 {
		return verdictFor(KindNotFound)
	}
	if b.has(contextPatterns) || b.code() == glmContextLength {
		return verdictFor(KindContextLength)
	}
	if b.has(contentPatterns) || b.code() == glmContentPolicy {
		return verdictFor(KindContentPolicy)
	}
	if status == 403 {
		return verdictFor(KindForbidden)
	}
	return verdictFor(KindBadRequest)
}

// limitVerdict splits a rate-limit answer into quota, concurrency or burst limit.
// An explicit quota body wins over a concurrency one.
func limitVerdict(b *body) Verdict {
	switch code := b.code(); {
	case code == glmQuota || b.quota():
		return verdictFor(KindQuota)
	case code == glmConcurrency || b.has(concurrencyPatterns):
		return verdictFor(KindConcurrencyLimit)
	}
	return verdictFor(KindRateLimit)
}

// isProviderFailure reports the statuses that are evidence against the
// provider: 408, 500, 502-504, Cloudflare 520-524 and Anthropic 529.
func isProviderFailure(status int) bool {
	switch status {
	case 408, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529:
		return true
	}
	return false
}

// classifyErr handles outcomes where no usable response arrived.
func classifyErr(o Outcome) Verdict {
	var (
		v  Verdict
		ne net.Error
	)
	switch err := o.Err; {
	case errors.Is(err, ErrStall):
		v = verdictFor(KindStall)
	case errors.Is(err, context.Canceled):
		v = verdictFor(KindClientCanceled)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		v = verdictFor(KindTimeout)
		v.CountsForBreaker = true
	default:
		v = verdictFor(KindTransport)
		v.CountsForBreaker = true
	}
	v.Status = o.Status
	v.Message = message(v.Kind, o.Status, cleanUpstream(o.Err.Error(), o.Secrets))
	return v
}

// verdictFor returns the fixed routing flags of a kind. CountsForBreaker
// depends on the status, so callers set it.
func verdictFor(k Kind) Verdict {
	v := Verdict{Kind: k}
	v.Code, _ = describe(k)
	switch k {
	case KindRateLimit:
		// A plain 429 is evidence against this model on this connection only;
		// accountWide widens it when the upstream says the whole account is limited.
		v.Scope, v.Failover, v.SkipProviderBreaker = ScopeModel, true, true
	case KindConcurrencyLimit, KindAuth, KindRequestRejected:
		v.Scope, v.Failover, v.CoolConnection, v.SkipProviderBreaker = ScopeConnection, true, true, true
	case KindQuota, KindForbidden:
		v.Scope, v.Failover, v.CoolConnection, v.SkipProviderBreaker = ScopeQuotaFamily, true, true, true
	case KindBanned:
		v.Scope, v.Failover, v.CoolConnection, v.SkipProviderBreaker = ScopeConnection, true, true, true
		v.Terminal = TerminalBanned
	case KindCreditsExhausted:
		v.Scope, v.Failover, v.CoolConnection, v.SkipProviderBreaker = ScopeConnection, true, true, true
		v.Terminal = TerminalCreditsExhausted
	case KindNotFound:
		v.Scope, v.Failover = ScopeModel, true
	case KindServer, KindStall:
		v.Scope, v.Failover = ScopeExact, true
	case KindTransport, KindTimeout:
		// One reset or first-byte timeout blames the target it happened on; the
		// connection is cooled only by a streak of them (cooldown.Options.FailureStreak).
		v.Scope, v.Failover = ScopeExact, true
	case KindClientCanceled:
		v.SkipProviderBreaker = true
	}
	// KindBadRequest, KindContextLength, KindContentPolicy: the answer goes
	// back to the client; the next target would say the same.
	return v
}

// describe maps a kind to its stable code and the fixed first half of
// Verdict.Message.
func describe(k Kind) (code, summary string) {
	switch k {
	case KindRateLimit:
		return CodeRateLimited, "Upstream rate limit reached"
	case KindConcurrencyLimit:
		return CodeConcurrencyLimited, "Upstream concurrency limit reached"
	case KindQuota:
		return CodeQuotaExhausted, "Upstream quota exhausted"
	case KindAuth:
		return CodeAuthFailed, "Upstream authentication failed"
	case KindForbidden:
		return CodeForbidden, "Upstream denied access"
	case KindRequestRejected:
		return CodeRequestRejected, "Upstream rejected the request"
	case KindBanned:
		return CodeAccountBanned, "Upstream account is banned or suspended"
	case KindCreditsExhausted:
		return CodeCreditsExhausted, "Upstream account has no credits left"
	case KindNotFound:
		return CodeModelNotFound, "Model or route not found upstream"
	case KindBadRequest:
		return CodeBadRequest, "Upstream rejected the request as invalid"
	case KindContextLength:
		return CodeContextLength, "Prompt exceeds the model's context length"
	case KindContentPolicy:
		return CodeContentPolicy, "Request refused by the upstream content policy"
	case KindServer:
		return CodeServerError, "Upstream server error"
	case KindTransport:
		return CodeTransportError, "Upstream connection failed"
	case KindTimeout:
		return CodeTimeout, "Upstream timed out"
	case KindStall:
		return CodeStreamStalled, "Upstream stream stalled"
	case KindClientCanceled:
		return CodeClientCanceled, "Client canceled the request"
	}
	return "", "Upstream request failed"
}

// message builds "Summary (HTTP 429): upstream text".
func message(k Kind, status int, upstream string) string {
	var sb strings.Builder
	sb.Grow(64 + len(upstream))
	_, summary := describe(k)
	sb.WriteString(summary)
	if status != 0 {
		sb.WriteString(" (HTTP ")
		sb.WriteString(strconv.Itoa(status))
		sb.WriteByte(')')
	}
	if upstream != "" {
		sb.WriteString(": ")
		sb.WriteString(upstream)
	}
	return sb.String()
}

// body is the cut, lower-cased view of a response body shared by all checks.
type body struct {
	raw      []byte // at most bodyScanLimit bytes
	text     string // string(raw), converted once for gjson
	lower    string // strings.ToLower(text), computed once
	isJSON   bool
	secrets  []string // the call's credentials (Outcome.Secrets)
	codeDone bool
	codeVal  string
}

// newBody cuts the body to bodyScanLimit and lower-cases it once.
func newBody(b []byte) body {
	if len(b) > bodyScanLimit {
		b = b[:bodyScanLimit]
	}
	text := string(b)
	return body{raw: b, text: text, lower: strings.ToLower(text), isJSON: looksLikeJSON(b)}
}

// has reports whether the body contains any of pats.
func (b *body) has(pats []string) bool {
	if b.lower == "" {
		return false
	}
	for _, p := range pats {
		if strings.Contains(b.lower, p) {
			return true
		}
	}
	return false
}

// code is the provider's business error code (error.code or code), as text.
func (b *body) code() string {
	if !b.codeDone {
		b.codeDone = true
		if b.isJSON {
			r := gjson.Get(b.text, "error.code")
			if r.Type != gjson.String && r.Type != gjson.Number {
				r = gjson.Get(b.text, "code")
			}
			if r.Type == gjson.String || r.Type == gjson.Number {
				b.codeVal = strings.TrimSpace(r.String())
			}
		}
	}
	return b.codeVal
}

// quota reports explicit quota wording. "limit reached for" counts unless it
// is OpenAI's "Rate limit reached for <model> ... per min", which is a burst limit.
func (b *body) quota() bool {
	if b.has(quotaPatterns) {
		return true
	}
	const p = "limit reached for"
	for rest := b.lower; ; {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		if !strings.HasSuffix(rest[:i], "rate ") {
			return true
		}
		rest = rest[i+len(p):]
	}
}

// strictLimit reports a 400/500 body that clearly means quota or rate limit.
func (b *body) strictLimit() bool {
	c := b.code()
	return c == glmQuota || c == glmConcurrency || b.has(strictLimitPatterns)
}

// banned reports ban wording; needContext demands an account-ish word next
// to the bare ban words (used for 400, where content filters say "banned").
func (b *body) banned(needContext bool) bool {
	if b.has(banPatterns) {
		return true
	}
	return b.has(banWords) && (!needContext || b.has(accountContext))
}

// upstreamMessage extracts the upstream's own error text, cleaned for clients.
func (b *body) upstreamMessage() string {
	if len(b.raw) == 0 {
		return ""
	}
	if !b.isJSON {
		if strings.HasPrefix(strings.TrimSpace(b.lower), "<") {
			return "" // an HTML error page says nothing useful
		}
		line, _, _ := strings.Cut(b.text, "\n")
		return cleanUpstream(line, b.secrets)
	}
	for _, path := range [...]string{"error.message", "message", "error", "0.error.message", "detail", "msg"} {
		if r := gjson.Get(b.text, path); r.Type == gjson.String && strings.TrimSpace(r.Str) != "" {
			return cleanUpstream(r.Str, b.secrets)
		}
	}
	return ""
}

// cleanUpstream removes the call's known secrets by value, then
// credential-looking substrings, collapses whitespace and only then
// truncates to maxUpstreamMessage runes (cut first, a secret's start would
// survive at the cut, too short for a shape).
func cleanUpstream(s string, secrets []string) string {
	if len(s) > maxCleanedText {
		s = s[:maxCleanedText]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	s = redact.Shapes(redact.Known(s, secrets))
	if mayHoldSecret(s) {
		s = secretPattern().ReplaceAllString(s, "[redacted]")
	}
	s = collapseSpace(s)
	if utf8.RuneCountInString(s) <= maxUpstreamMessage {
		return s
	}
	n := 0
	for i := range s {
		if n == maxUpstreamMessage {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
