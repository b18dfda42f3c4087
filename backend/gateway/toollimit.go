package gateway

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/tidwall/gjson"

	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// toolLimitNumber finds the limit an upstream states in its "too many tools"
// refusal ("at most 128 items", "maximum length 128", "up to 64 tools").
var toolLimitNumber = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:at most|maximum length|maximum of|max(?:imum)?|limit(?: is| of)?|up to|不超过|最多)\s*:?\s*(\d{1,5})`)
})

// toolCount is how many tools the client's request carries (every client
// format names the array "tools").
func (r *request) toolCount() int {
	if r.tools < 0 {
		r.tools = int(gjson.GetBytes(r.body, "tools.#").Int())
	}
	return r.tools
}

// learnToolLimit remembers a target's tool limit after a "too many tools"
// refusal: the number the upstream stated, or one less than was sent.
func (g *Gateway) learnToolLimit(v verdict.Verdict, body []byte, cand routing.Candidate, req *request) {
	if v.Code != rules.CodeToolCountLimit {
		return
	}
	sent := req.toolCount()
	limit := sent - 1
	if m := toolLimitNumber().FindSubmatch(body); m != nil {
		if n, err := strconv.Atoi(string(m[1])); err == nil && n < sent {
			limit = n
		}
	}
	g.engine.RecordToolLimit(cand.Conn.ID, cand.Model, limit)
}

// toolLimitExclusion routes around a target known to take fewer tools than
// the request carries.
func (g *Gateway) toolLimitExclusion(cand routing.Candidate, req *request) *routing.Exclusion {
	limit, ok := g.engine.ToolLimit(cand.Conn.ID, cand.Model)
	if !ok {
		return nil
	}
	n := req.toolCount()
	if n <= limit {
		return nil
	}
	return &routing.Exclusion{ConnectionID: cand.Conn.ID, Provider: cand.Conn.BreakerKey, Model: cand.Model,
		Reason: "tool_limit", Detail: fmt.Sprintf("%d tools > limit %d", n, limit)}
}
