package gateway

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// upstreamVerdict is the one place an upstream HTTP error becomes a Verdict:
// the status restatement and provider error rules (built-in and operator)
// run before and around the classifier, so every consumer (cooldown,
// lockout, combo exhaustion, the client's answer) reads the same Verdict.
func (g *Gateway) upstreamVerdict(status int, h http.Header, body []byte, r *http.Request, cand routing.Candidate) verdict.Verdict {
	secrets := knownSecrets(r, cand)
	o := verdict.Outcome{Status: status, Header: h, Body: scrubbed(body, secrets), Provider: cand.Conn.Provider.ID, Now: g.clk.Now(), Secrets: secrets}
	if g.rules == nil {
		return verdict.Classify(o)
	}
	return g.rules.Classify(o, ruleTraits(cand))
}

// streamErrorVerdict judges an error event inside a 200 stream through the
// same rules; ok is false when no rule matched.
func (g *Gateway) streamErrorVerdict(data []byte, r *http.Request, cand routing.Candidate) (verdict.Verdict, bool) {
	if g.rules == nil {
		return verdict.Verdict{}, false
	}
	return g.rules.ClassifyStreamError(cand.Conn.Provider.ID, scrubbed(data, knownSecrets(r, cand)), g.clk.Now(), ruleTraits(cand))
}

func ruleTraits(cand routing.Candidate) rules.Traits {
	p := cand.Conn.Provider
	return rules.Traits{FullText: p.RuleFullText, HonorsScope: p.HonorsRuleScope}
}

// egressContext makes the call leave from the connection's configured local
// address and, for IP-bucketed providers, records the local IP the transport
// actually used: the connection's last known egress IP for the egress lock.
//
//go:noinline
func (g *Gateway) egressContext(ctx context.Context, cand routing.Candidate) context.Context {
	ctx = providers.WithLocalAddr(ctx, cand.Conn.LocalAddress)
	if !cand.Conn.Provider.EgressBucketed {
		return ctx
	}
	id := cand.Conn.ID
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if a, ok := info.Conn.LocalAddr().(*net.TCPAddr); ok {
			g.engine.RecordEgress(id, a.IP.String())
		}
	}})
}
