package gateway

import (
	"fmt"
	"log/slog"
	"strings"

	"omniroute/backend/routing"
)

// logAllExcluded writes the guide's "Depuração" warning when a combo request
// found every target excluded before anything was dispatched:
//
//	[COMBO] Weighted selection: every target excluded before dispatch — openai/gpt-4o (connection_cooldown, 12s), …
//
// so an operator sees at once that the pool is wired and only timers block it.
func (g *Gateway) logAllExcluded(plan routing.Plan, req *request) {
	if g.log == nil || plan.Combo == nil || len(req.attempts) > 0 || len(plan.Excluded) == 0 {
		return
	}
	g.log.Warn(allExcludedLine(plan), slog.String("combo", plan.Combo.Name), slog.String("model", req.model))
}

// allExcludedLine formats the warning: each target with its reason (and
// detail) and, for timers, the whole seconds left.
func allExcludedLine(plan routing.Plan) string {
	name := plan.Combo.Strategy
	if name == "" {
		name = "priority"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[COMBO] %s%s selection: every target excluded before dispatch — ", strings.ToUpper(name[:1]), name[1:])
	for i, x := range plan.Excluded {
		if i > 0 {
			b.WriteString(", ")
		}
		reason := x.Reason
		if x.Detail != "" {
			reason += ":" + x.Detail
		}
		if x.Timed() {
			fmt.Fprintf(&b, "%s/%s (%s, %ds)", x.Provider, x.Model, reason, seconds(x.Remaining))
		} else {
			fmt.Fprintf(&b, "%s/%s (%s)", x.Provider, x.Model, reason)
		}
	}
	return b.String()
}
