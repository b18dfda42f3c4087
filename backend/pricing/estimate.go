package pricing

import (
	"strings"

	"github.com/tidwall/gjson"
)

// DefaultMaxOutput is the output a request that sets no limit of its own is
// estimated at.
const DefaultMaxOutput = 4096

// EstimateUsage is an upper estimate of a request's usage before it is
// served, for holding its cost against a budget: the prompt at one token
// per four bytes of the body (rounded up) and the output at the request's
// own limit in any client format (max_tokens, max_completion_tokens,
// max_output_tokens, generationConfig.maxOutputTokens, Ollama's
// options.num_predict), DefaultMaxOutput without one.
func EstimateUsage(body []byte) Usage {
	out := 0
	for _, r := range gjson.GetManyBytes(body, "max_completion_tokens", "max_tokens", "max_output_tokens",
		"generationConfig.maxOutputTokens", "options.num_predict") {
		if n := r.Int(); r.Type == gjson.Number && n > 0 {
			out = int(min(n, 1<<30))
			break
		}
	}
	if out == 0 {
		out = DefaultMaxOutput
	}
	return Usage{Prompt: (len(body) + 3) / 4, Output: out}
}

// Estimate is the highest price the client model name may be served at:
// its name, and the part after a "provider/" prefix, looked up in every
// connection's overrides and under every provider of the catalogue (the
// connection that will serve it is not chosen yet). ok is false when no
// price is known.
func (t *Table) Estimate(model string) (Price, bool) {
	names := [2]string{model, ""}
	n := 1
	if i := strings.IndexByte(model, '/'); i >= 0 && i < len(model)-1 {
		names[1], n = model[i+1:], 2
	}
	var best Price
	found := false
	take := func(p Price) {
		found = true
		best.InputPerMTok = max(best.InputPerMTok, p.InputPerMTok, deref(p.CacheWritePerMTok))
		best.OutputPerMTok = max(best.OutputPerMTok, p.OutputPerMTok, deref(p.ReasoningPerMTok))
	}
	u := t.user()
	for _, name := range names[:n] {
		c, cn := candidates(name)
		for _, m := range c[:cn] {
			for _, p := range t.byModel[m] {
				take(p)
			}
			if u != nil {
				for _, p := range u.byModel[m] {
					take(p)
				}
			}
		}
	}
	t.mu.RLock()
	for _, o := range t.overrides {
		for _, name := range names[:n] {
			c, cn := candidates(name)
			for _, m := range c[:cn] {
				if p, ok := o.Pricing[m]; ok {
					take(p)
				}
			}
		}
	}
	t.mu.RUnlock()
	return best, found
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
