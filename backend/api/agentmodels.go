package api

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"omniroute/backend/agents"
	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/httpx"
	"omniroute/backend/routing"
)

// AgentModels are the routable names setup writes for an agent.
type AgentModels struct {
	// Model is the agent's main model (Claude Code's ANTHROPIC_MODEL, Codex's
	// model, the others' model).
	Model string `json:"model"`
	// Opus, Sonnet and Haiku are Claude Code's family models; Haiku is also
	// its small-fast model. Empty for other agents.
	Opus   string `json:"opus,omitempty"`
	Sonnet string `json:"sonnet,omitempty"`
	Haiku  string `json:"haiku,omitempty"`
	// Source says where Model came from: "requested", "setting" (the agent
	// model map) or "default" (the first healthy combo, else the first served model).
	Source string `json:"source"`
	// Warning is set when every connection that could serve Model is
	// unreachable or has its key rejected: the agent would get nothing but
	// errors. `omniroute setup` refuses to write then (unless --force).
	Warning string `json:"warning,omitempty"`
}

// Manager returns base configured to write these names.
func (m AgentModels) Manager(base *agents.Manager) *agents.Manager {
	return base.WithModels(m.Model, m.Opus, m.Sonnet, m.Haiku)
}

// AgentModels decides which model names setup writes for an agent: the
// requested one (which a connection or combo must serve as named), else the
// agent model map's choice for the agent's family, else the automatic
// default. Claude Code's families take the map's targets where they are set,
// so its haiku / background requests can go to a cheaper model even with an
// explicit main model. It fails with a 4xx when nothing can serve the model.
func (a *API) AgentModels(agentID, requested string) (AgentModels, error) {
	requested = strings.TrimSpace(requested)
	if requested != "" {
		if err := a.Engine.Served(requested); err != nil {
			e := errs.As(err)
			if e.Class == errs.Internal {
				return AgentModels{}, err
			}
			why := ""
			if e.Code != "MODEL_NOT_FOUND" {
				why = " (" + e.Message + ")"
			}
			return AgentModels{}, errs.New(errs.Invalid, "AGENT_MODEL_NOT_SERVED",
				"no connection can serve %q%s: add a connection that serves it, or pick a name from GET /v1/models", requested, why).WithParam("model")
		}
	}
	amap := a.Settings.General().AgentModelMap
	setting := func(family string) string {
		t, on := amap.Target(family)
		if !on || t == "" || a.Engine.Served(t) != nil {
			return ""
		}
		return t
	}
	main := AgentModels{Model: requested, Source: "requested"}
	if main.Model == "" {
		family := routing.FamilySonnet
		if agentID == "codex" {
			family = routing.FamilyCodex
		}
		if t := setting(family); t != "" {
			main.Model, main.Source = t, routing.MapSetting
		} else if d := a.Engine.DefaultModel(); d != "" {
			main.Model, main.Source = d, routing.MapDefault
		}
	}
	if main.Model == "" {
		return AgentModels{}, errs.New(errs.Conflict, "NO_MODEL_SERVED",
			"no connection serves any model yet: add a provider connection (dashboard Connections page or POST /api/providers), then run setup again")
	}
	main.Warning = a.unservable(main.Model)
	if agentID != "claude-code" {
		return main, nil
	}
	pick := func(family string) string {
		if requested != "" && family != routing.FamilyHaiku {
			return requested
		}
		if t := setting(family); t != "" {
			return t
		}
		return main.Model
	}
	main.Opus, main.Sonnet, main.Haiku = pick(routing.FamilyOpus), pick(routing.FamilySonnet), pick(routing.FamilyHaiku)
	return main, nil
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

// unservable says why model cannot be served when every connection it could
// go to (through a combo's targets too) is unreachable or has its key
// rejected in the health model; "" when one of them could answer.
func (a *API) unservable(model string) string {
	names := []string{model}
	if co, ok := a.Engine.Combos().Lookup(model); ok {
		names = names[:0]
		for _, t := range co.Targets {
			names = append(names, t.Model)
		}
	}
	seen := map[string]bool{}
	reg := a.Engine.Registry()
	for _, n := range names {
		cands, _ := reg.Resolve(n, routing.Access{})
		for _, c := range cands {
			seen[c.Conn.ID] = true
		}
	}
	if len(seen) == 0 {
		return ""
	}
	var why []string
	for _, ch := range a.HealthReport().Connections {
		if !seen[ch.ID] {
			continue
		}
		if ch.State != health.Unreachable && ch.State != health.KeyRejected {
			return ""
		}
		why = append(why, ch.Name+": "+ch.Reason)
	}
	if len(why) == 0 {
		return ""
	}
	return "every connection serving " + model + " is out of service (" + strings.Join(why, "; ") +
		"): the agent would get only errors until it is fixed"
}
