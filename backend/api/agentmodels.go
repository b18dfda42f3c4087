package api

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/gorilla/mux"

	"omniroute/backend/agents"
	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/httpx"
	"omniroute/backend/routing"
	"omniroute/backend/store"
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
	// Autocomplete and Embed are Continue's autocomplete model (a served
	// code model, else Model) and embed model (a served embedding model, else
	// empty: no embed entry). Empty for other agents.
	Autocomplete string `json:"autocomplete,omitempty"`
	Embed        string `json:"embed,omitempty"`
	// ContextWindow is Model's context window in tokens as the gateway
	// knows it (a combo's targets, else its catalogue); 0 when unknown.
	// Claude Code's setup writes it so it compacts in time.
	ContextWindow int `json:"contextWindow,omitempty"`
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
	return base.WithModels(m.Model, m.Opus, m.Sonnet, m.Haiku).WithRoles(m.Autocomplete, m.Embed).WithContextWindow(m.ContextWindow)
}

// nameHas reports whether model's name contains one of the parts, ignoring case.
func nameHas(model string, parts ...string) bool {
	lower := strings.ToLower(model)
	return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(lower, p) })
}

// isEmbedModel: an embedding model by its name (text-embedding-3-small,
// nomic-embed-text, gemini-embedding-001, bge-m3, …).
func isEmbedModel(model string) bool { return nameHas(model, "embed", "bge-", "e5-") }

// isCodeModel: a code model trained for fill-in-the-middle by its name
// (qwen2.5-coder, codestral, deepseek-coder, starcoder2, codegemma, …).
func isCodeModel(model string) bool {
	return !isEmbedModel(model) && nameHas(model, "coder", "codestral", "codegemma", "codellama", "-fim")
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
		if agentID == agents.CodexID {
			family = routing.FamilyCodex
		}
		if t := setting(family); t != "" {
			main.Model, main.Source = t, routing.MapSetting
		} else if c := a.recommended(agentID); c != "" {
			// The combo used most (else the map's automatic default): not
			// the alphabetically first one.
			main.Model, main.Source = c, routing.MapDefault
		} else if d := a.Engine.DefaultModel(); d != "" {
			main.Model, main.Source = d, routing.MapDefault
		}
	}
	if main.Model == "" {
		return AgentModels{}, errs.New(errs.Conflict, "NO_MODEL_SERVED",
			"no connection serves any model yet: add a provider connection (dashboard Connections page or POST /api/providers), then run setup again")
	}
	main.Warning = a.unservable(main.Model)
	main.ContextWindow = a.contextWindow(main.Model)
	if agentID == "continue" {
		main.Autocomplete = a.Engine.ServedMatching(isCodeModel)
		if main.Autocomplete == "" || isCodeModel(main.Model) {
			main.Autocomplete = main.Model
		}
		main.Embed = a.Engine.ServedMatching(isEmbedModel)
		return main, nil
	}
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
		if requested == "" {
			// Each family on the user's Claude connection's own model of it.
			if m := a.Engine.ClaudeFamilyModel(family); m != "" {
				return m
			}
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
	return a.unservableIn(a.HealthReport(), model)
}

// unservableIn is unservable against a health report already computed.
func (a *API) unservableIn(rep health.Report, model string) string {
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
	for _, ch := range rep.Connections {
		if !seen[ch.ID] {
			continue
		}
		if ch.State != health.Unreachable && ch.State != health.KeyRejected && ch.State != health.EndpointNotFound {
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

// AgentChoice is one name Configure offers for an agent.
type AgentChoice struct {
	Name string `json:"name"`
	// Kind is "combo" or "model".
	Kind string `json:"kind"`
	// Serving: a request for it would be served now (some connection behind
	// it is neither unreachable nor rejected, and routing admits it).
	Serving bool `json:"serving"`
	// Requests is how many requests named it in the last 7 days.
	Requests int64 `json:"requests"`
	// Recommended marks the one choice offered first.
	Recommended bool `json:"recommended,omitempty"`
	// Why says why it is recommended, or why it cannot serve.
	Why string `json:"why,omitempty"`
}

// AgentChoices lists the served models and combos Configure offers for an
// agent, the recommended one first: the agent model map's target the user
// set for the agent's main family, else the serving combo used most in the
// last 7 days, else the serving combo or model the map would pick by
// itself. Then serving before not serving, combos before models, most used
// first, by name.
func (a *API) AgentChoices(agentID string) []AgentChoice {
	uses := map[string]int64{}
	now := a.Clock.Now()
	week := usageRanges["week"]
	from, to := window(week, now)
	if cells, err := a.Store.Usage(store.UsageQuery{From: from.UnixMilli(), To: to.UnixMilli(),
		BucketMs: week.Bucket.Milliseconds(), Dim: store.ByModel}); err == nil {
		for _, c := range cells {
			uses[c.Key] += c.Requests
		}
	}
	var out []AgentChoice
	seen := map[string]bool{}
	rep := a.HealthReport()
	add := func(name, kind string) {
		if name == "" || seen[strings.ToLower(name)] {
			return
		}
		seen[strings.ToLower(name)] = true
		ch := AgentChoice{Name: name, Kind: kind, Requests: uses[name]}
		if err := a.Engine.Served(name); err != nil {
			ch.Why = errs.As(err).Message
		} else if w := a.unservableIn(rep, name); w != "" {
			ch.Why = w
		} else {
			ch.Serving = true
		}
		out = append(out, ch)
	}
	for _, co := range a.Engine.Combos().All() {
		add(co.Name, "combo")
	}
	for _, c := range a.Engine.Registry().All() {
		if !c.Active {
			continue
		}
		for _, m := range c.Models {
			add(m, "model")
		}
	}
	pick := -1
	family := routing.FamilySonnet
	if agentID == agents.CodexID {
		family = routing.FamilyCodex
	}
	if t, on := a.Settings.General().AgentModelMap.Target(family); on && t != "" {
		for i := range out {
			if strings.EqualFold(out[i].Name, t) && out[i].Serving {
				pick = i
				out[i].Why = "your choice in the agent model map"
			}
		}
	}
	if pick < 0 && agentID == "claude-code" {
		// Claude Code on the user's Claude subscription or API key when
		// there is one, before an unrelated endpoint.
		if m := a.Engine.ClaudeFamilyModel(routing.FamilySonnet); m != "" {
			for i := range out {
				if out[i].Name == m && out[i].Serving {
					pick = i
					out[i].Why = "your Claude connection's sonnet model"
				}
			}
		}
	}
	if pick < 0 {
		for i := range out {
			if out[i].Kind == "combo" && out[i].Serving && out[i].Requests > 0 && (pick < 0 || out[i].Requests > out[pick].Requests) {
				pick = i
			}
		}
		if pick >= 0 {
			out[pick].Why = "the combo used most in the last 7 days"
		}
	}
	if pick < 0 {
		d := a.Engine.DefaultModel()
		for i := range out {
			if out[i].Name == d && out[i].Serving {
				pick = i
				out[i].Why = "serving now"
			}
		}
	}
	if pick >= 0 {
		out[pick].Recommended = true
	}
	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		switch {
		case x.Recommended != y.Recommended:
			return x.Recommended
		case x.Serving != y.Serving:
			return x.Serving
		case x.Kind != y.Kind:
			return x.Kind == "combo"
		case x.Requests != y.Requests:
			return x.Requests > y.Requests
		}
		return strings.ToLower(x.Name) < strings.ToLower(y.Name)
	})
	return out
}

// recommended is the name AgentChoices offers first ("" when none serves).
func (a *API) recommended(agentID string) string {
	for _, c := range a.AgentChoices(agentID) {
		if c.Recommended {
			return c.Name
		}
	}
	return ""
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
