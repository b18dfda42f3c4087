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
