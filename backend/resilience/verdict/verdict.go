package verdict

import (
	"net/http"
	"time"
)

// Kind is the failure class of an outcome.
type Kind string

// Failure classes, one vocabulary for retry, rotation, cooldown and breaker.
const (
	KindSuccess          Kind = "success"
	KindRateLimit        Kind = "rate_limit"        // 429 burst limit on the account
	KindConcurrencyLimit Kind = "concurrency_limit" // 429 "too many concurrent requests": account healthy but busy
	KindQuota            Kind = "quota"             // quota / credits exhausted for a window
	KindAuth             Kind = "auth"              // 401, invalid key, token expired
	KindForbidden        Kind = "forbidden"         // 403 not an auth or ban case
	KindRequestRejected  Kind = "request_rejected"  // upstream refuses this request ("Request not allowed")
	KindBanned           Kind = "banned"            // account banned / suspended / deactivated
	KindCreditsExhausted Kind = "credits_exhausted" // billing: no credits left, payment required
	KindNotFound         Kind = "not_found"         // 404 model or route not found
	KindBadRequest       Kind = "bad_request"       // client error the next target would repeat
	KindContextLength    Kind = "context_length"    // prompt too long for the model
	KindContentPolicy    Kind = "content_policy"    // refused by safety filter
	KindServer           Kind = "server"            // 408/500/502/503/504/529 provider-level failure
	KindTransport        Kind = "transport"         // reset, refused, DNS, TLS: nothing usable received
	KindTimeout          Kind = "timeout"           // no first byte within the deadline
	KindStall            Kind = "stall"             // stream stopped producing content
	KindClientCanceled   Kind = "client_canceled"   // the caller went away: blames nobody
)

// Scope is the narrowest thing the evidence blames.
type Scope string

// Blame scopes, narrowest first.
const (
	ScopeNone        Scope = ""
	ScopeExact       Scope = "exact"        // this provider/connection/model tuple
	ScopeModel       Scope = "model"        // this model on this connection
	ScopeQuotaFamily Scope = "quota_family" // every model sharing the quota on this connection
	ScopeConnection  Scope = "connection"   // the account / key
	ScopeProvider    Scope = "provider"     // the whole provider
)

// Terminal states a connection can enter; they are not cooldowns.
const (
	TerminalBanned           = "banned"
	TerminalExpired          = "expired"
	TerminalCreditsExhausted = "credits_exhausted"
)

// Outcome is what one attempt against one upstream produced.
type Outcome struct {
	Status   int         // HTTP status; 0 when Err is set before any response
	Header   http.Header // response headers (may be nil)
	Body     []byte      // at most the first few KiB of the response body
	Err      error       // transport error, timeout or stall; nil when a response arrived
	Provider string      // provider id, for provider-specific shapes
	Now      time.Time   // when the outcome was observed; hint dates are relative to it
	// Secrets are the credentials of the call (the connection's, the
	// client's): removed by value from the upstream's words before any
	// credential shape is (a shape would cut a key and leave its tail).
	Secrets []string
}

// Verdict is everything the layers need to know about one outcome.
type Verdict struct {
	Kind   Kind
	Scope  Scope
	Status int    // upstream status (0 for transport failures)
	Code   string // stable UPPER_SNAKE code, e.g. UPSTREAM_RATE_LIMITED
	// Message is a short human sentence safe to show to the client (no secrets).
	Message string

	// Failover: another target may succeed, so the attempt loop moves on.
	// False means the upstream answer is returned to the client as is.
	Failover bool
	// CountsForBreaker: provider-level failure (408/500/502/503/504, transport, timeout).
	CountsForBreaker bool
	// SkipProviderBreaker: never feed this outcome to the provider breaker.
	SkipProviderBreaker bool
	// CoolConnection: the connection should leave routing for a cooldown.
	CoolConnection bool
	// FixedCooldown, when > 0, replaces the exponential backoff and keeps backoffLevel.
	FixedCooldown time.Duration
	// RetryAfter is the upstream's own hint (Retry-After, reset headers, body text), 0 if none.
	RetryAfter time.Duration
	// HintSource names where RetryAfter came from ("retry-after", "x-ratelimit-reset-requests",
	// "anthropic-ratelimit-reset", "body", "google_rpc_retry_info"; see the Hint* constants).
	HintSource string
	// Terminal is "", TerminalBanned, TerminalExpired or TerminalCreditsExhausted.
	Terminal string

	// Rule names the provider error rule (and restatement, "restatement>rule")
	// that shaped this verdict; "" when the built-in classifier alone decided.
	Rule string
	// RestatedFrom is the upstream's original status when a restatement rule
	// corrected it (Status then holds the corrected one); 0 otherwise.
	RestatedFrom int
	// ClientRetryAfter is the Retry-After a restated error announces to the
	// client (the rule's default when the upstream gave none). It is what the
	// client is told, not the connection's cooldown.
	ClientRetryAfter time.Duration
	// ModelLock, when > 0, takes this model alone on this connection out of
	// routing for that long (a rule with scope "model"); the connection and
	// its other models keep serving.
	ModelLock time.Duration
}

// OK reports whether the verdict is a success.
func (v Verdict) OK() bool { return v.Kind == KindSuccess }
