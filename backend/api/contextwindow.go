package api

import "omniroute/backend/agents"

// contextWindow is the context window the gateway knows for model: for a
// combo the smallest its targets declare or are known for (a request may
// land on any of them), else agents.KnownWindow; 0 when unknown.
func (a *API) contextWindow(model string) int {
	if co, ok := a.Engine.Combos().Lookup(model); ok {
		least := 0
		for _, t := range co.Targets {
			w := t.ContextWindow
			if w <= 0 {
				w = agents.KnownWindow(t.Model)
			}
			if w <= 0 {
				return 0 // one target unknown: the combo's window is unknown
			}
			if least == 0 || w < least {
				least = w
			}
		}
		return least
	}
	return agents.KnownWindow(model)
}
