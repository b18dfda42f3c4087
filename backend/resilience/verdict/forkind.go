package verdict

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
func Message(k Kind, status int, body []byte) string {
	b := newBody(body)
	return message(k, status, b.upstreamMessage())
}
