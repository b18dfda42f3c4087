package api

import (
	"net/http"

	"github.com/gorilla/mux"

	"omniroute/backend/agentmodels"
	"omniroute/backend/httpx"
	"omniroute/backend/routing"
	"omniroute/backend/store"
	"omniroute/backend/usagestats"
)

// AgentModels are the routable names setup writes for an agent (agentmodels).
type AgentModels = agentmodels.Models

// AgentChoice is one name Configure offers for an agent (agentmodels).
type AgentChoice = agentmodels.Choice

// agentPicker is the agent model choice over the gateway's current state.
func (a *API) agentPicker() agentmodels.Picker {
	return agentmodels.Picker{Gateway: agentGateway{a}, Map: a.Settings.General().AgentModelMap.Target,
		Health: a.HealthReport, Uses: a.weekUses}
}

// AgentModels decides which model names setup writes for an agent
// (agentmodels.Picker.Models); it fails with a 4xx when nothing can serve the model.
func (a *API) AgentModels(agentID, requested string) (AgentModels, error) {
	return a.agentPicker().Models(agentID, requested)
}

// AgentChoices lists the names Configure offers for an agent, the
// recommended one first (agentmodels.Picker.Choices).
func (a *API) AgentChoices(agentID string) []AgentChoice {
	return a.agentPicker().Choices(agentID)
}

// weekUses is how many requests named each model or combo in the last 7 days
// (none when the store cannot tell).
func (a *API) weekUses() map[string]int64 {
	uses := map[string]int64{}
	week, _ := usagestats.RangeNamed("week")
	win := week.At(a.Clock.Now())
	if cells, err := a.Store.Usage(store.UsageQuery{From: win.From.UnixMilli(), To: win.To.UnixMilli(),
		BucketMs: week.Bucket.Milliseconds(), Dim: store.ByModel}); err == nil {
		for _, c := range cells {
			uses[c.Key] += c.Requests
		}
	}
	return uses
}

// agentGateway is agentmodels.Gateway over the routing engine.
type agentGateway struct{ a *API }

func (g agentGateway) Served(name string) error          { return g.a.Engine.Served(name) }
func (g agentGateway) DefaultModel() string              { return g.a.Engine.DefaultModel() }
func (g agentGateway) ContextWindow(name string) int     { return g.a.contextWindow(name) }
func (g agentGateway) ClaudeFamilyModel(f string) string { return g.a.Engine.ClaudeFamilyModel(f) }
func (g agentGateway) ServedMatching(match func(string) bool) string {
	return g.a.Engine.ServedMatching(match)
}

// Connections lists the connections a request for name could go to: a
// combo's targets', else the model's.
func (g agentGateway) Connections(name string) []string {
	names := []string{name}
	if co, ok := g.a.Engine.Combos().Lookup(name); ok {
		names = names[:0]
		for _, t := range co.Targets {
			names = append(names, t.Model)
		}
	}
	var ids []string
	reg := g.a.Engine.Registry()
	for _, n := range names {
		cands, _ := reg.Resolve(n, routing.Access{})
		for _, c := range cands {
			ids = append(ids, c.Conn.ID)
		}
	}
	return ids
}

// Offers lists the combos, then the active connections' models.
func (g agentGateway) Offers() []agentmodels.Offer {
	var out []agentmodels.Offer
	for _, co := range g.a.Engine.Combos().All() {
		out = append(out, agentmodels.Offer{Name: co.Name, Kind: agentmodels.KindCombo})
	}
	for _, c := range g.a.Engine.Registry().All() {
		if !c.Active {
			continue
		}
		for _, m := range c.Models {
			out = append(out, agentmodels.Offer{Name: m, Kind: agentmodels.KindModel})
		}
	}
	return out
}

// agentModelsRoute serves GET /api/agents/{id}/models?model=: the names setup
// would write, for the CLI (which writes the files itself, in its own HOME).
func (a *API) agentModelsRoute(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if _, err := a.Agents().Instructions(id); err != nil {
		httpx.WriteError(w, agentError(err))
		return
	}
	m, err := a.AgentModels(id, r.URL.Query().Get("model"))
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"agent": id, "models": m})
}

// agentChoicesRoute serves GET /api/agents/{id}/choices: the models and
// combos Configure offers, the recommended one first.
func (a *API) agentChoicesRoute(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if _, err := a.Agents().Instructions(id); err != nil {
		httpx.WriteError(w, agentError(err))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"agent": id, "choices": a.AgentChoices(id)})
}
