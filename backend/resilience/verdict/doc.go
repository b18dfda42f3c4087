// Package verdict turns one upstream outcome (status, headers, body prefix or
// transport error) into a single Verdict that every resilience layer reads.
// Classification is a pure function: same outcome and same now, same verdict.
//
// # Scope from evidence
//
// A Verdict names the narrowest scope its evidence supports, and nothing wider
// is excluded, neither within the request (the attempt loop skips only that
// scope) nor afterwards (cooldowns and locks are written at that scope):
//
//	outcome                                        Scope            afterwards
//	---------------------------------------------  ---------------  -------------------------------------------
//	429 rate limit (no account-wide evidence)      model            model cooldown until the hint (or the
//	                                                                ladder); model lockout when enabled
//	429 with account-wide evidence: X-RateLimit-   connection       connection cooldown (hint or ladder)
//	  Scope account/org/key/subscription,
//	  anthropic-ratelimit-unified-*, body naming
//	  the account / subscription
//	429 concurrency limit                          connection       fixed 1 s (or hint), ladder not climbed
//	quota / insufficient_quota                     quota family +   connection cooldown until the announced
//	                                               connection       reset, or a long default without one
//	401 / auth, 403 request rejected               connection       cooldown, then terminal after a streak
//	ban, 402 / credits exhausted                   connection       terminal state
//	404 model not found                            model            model lockout when enabled
//	5xx before the first byte                      exact (model)    none by itself; a streak of them cools
//	reset, refused, first-byte timeout             exact (model)    the model and, across models, the
//	                                                                connection (exponential ladder)
//	408/500/502-504/52x, transport, timeout        provider         one breaker failure (CountsForBreaker)
//	400 bad request, context length, policy        none             returned to the client, no failover
//
// The breaker is the only provider-wide scope: it opens on repeated provider
// failures counted across all connections of the provider.
package verdict
