package verdict

import "time"

// ConcurrencyCooldown is the fixed cooldown of a concurrency limit (guide §2,
// CONCURRENCY_LIMIT_COOLDOWN_MS): the upstream's retry hint, else 1 s. A
// fixed cooldown keeps the connection's backoff level: the account is
// healthy, only busy.
func ConcurrencyCooldown(hint time.Duration) time.Duration {
	if hint > 0 {
		return hint
	}
	return concurrencyDefaultDelay
}

// ForKind returns the verdict the classifier gives a kind: its code, scope and
// routing flags (Failover, CoolConnection, SkipProviderBreaker, Terminal).
// CountsForBreaker is set for the provider-level kinds (server, transport,
// timeout). Provider error rules use it to turn a reason into a Verdict that
// reads exactly like one the classifier would have produced.
func ForKind(k Kind) Verdict {
	v := verdictFor(k)
	switch k {
	case KindServer, KindTransport, KindTimeout:
		v.CountsForBreaker = true
	}
	return v
}

// Message is the client-safe sentence the classifier writes for a kind, a
// status and an upstream body (the body's own error text, cleaned of
// anything that looks like a secret).
func Message(k Kind, status int, body []byte, secrets ...string) string {
	b := newBody(body)
	b.secrets = secrets
	return message(k, status, b.upstreamMessage())
}

// CodeQuotaRestated is the code of a quota the upstream reported with a
// non-retryable status that a restatement rule corrected (agentrouter's
// "403 额度不足"). The restatement declares the window temporary, so a
// connection cooling from it is a short, transient exclusion: clients are
// answered 429 with Retry-After rather than "skipped".
const CodeQuotaRestated = "UPSTREAM_QUOTA_RESTATED"
