// Package agentmodels decides which model names a coding agent's setup
// writes (its main model, Claude Code's family models, Continue's role
// models) and which served names Configure offers it, the recommended one
// first. It reads routing through the Gateway interface, the health model's
// report and the last week's requests per name; it writes nothing.
package agentmodels

import (
	"slices"
	"sort"
	"strings"

	"omniroute/backend/agents"
	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/routing"
)

// Agent ids with their own model roles.
const (
	claudeCodeID = "claude-code"
	continueID   = "continue"
)

// Models are the routable names setup writes for an agent.
type Models struct {
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
func (m Models) Manager(base *agents.Manager) *agents.Manager {
	return base.WithModels(m.Model, m.Opus, m.Sonnet, m.Haiku).WithRoles(m.Autocomplete, m.Embed).WithContextWindow(m.ContextWindow)
}

// Choice is one name Configure offers for an agent.
type Choice struct {
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

// Kinds of a Choice and an Offer.
const (
	KindCombo = "combo"
	KindModel = "model"
)

// Offer is one served name routing knows: a combo or a connection's model.
type Offer struct {
	Name string
	Kind string // KindCombo or KindModel
}

// Gateway is what the choice reads of routing.
type Gateway interface {
	// Served is nil when a connection or combo serves name as named, else
	// the error a request for it would get.
	Served(name string) error
	// DefaultModel is the agent model map's automatic target ("" when nothing is served).
	DefaultModel() string
	// ServedMatching is the first admissible served model match accepts ("" when none).
	ServedMatching(match func(model string) bool) string
	// ClaudeFamilyModel is where a Claude family goes by default ("" when nowhere).
	ClaudeFamilyModel(family string) string
	// Connections lists the ids of the connections name could go to (a
	// combo's: its targets'), repeats allowed.
	Connections(name string) []string
	// Offers lists the combos, then the active connections' models, in routing order.
	Offers() []Offer
	// ContextWindow is name's context window in tokens; 0 when unknown.
	ContextWindow(name string) int
}

// Picker chooses an agent's models over one gateway's state.
type Picker struct {
	Gateway Gateway
	// Map is the agent model map's target for a family and whether the map is on.
	Map func(family string) (target string, on bool)
	// Health is the health model's report (read when a choice needs it).
	Health func() health.Report
	// Uses is how many requests named each name in the last 7 days (read
	// when a choice needs it).
	Uses func() map[string]int64
}

// nameHas reports whether model's name contains one of the parts, ignoring case.
func nameHas(model string, parts ...string) bool {
	lower := strings.ToLower(model)
	return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(lower, p) })
}

// IsEmbedModel: an embedding model by its name (text-embedding-3-small,
// nomic-embed-text, gemini-embedding-001, bge-m3, …).
func IsEmbedModel(model string) bool { return nameHas(model, "embed", "bge-", "e5-") }

// IsCodeModel: a code model trained for fill-in-the-middle by its name
// (qwen2.5-coder, codestral, deepseek-coder, starcoder2, codegemma, …).
func IsCodeModel(model string) bool {
	return !IsEmbedModel(model) && nameHas(model, "coder", "codestral", "codegemma", "codellama", "-fim")
}

// mainFamily is the agent model map family of an agent's main model.
func mainFamily(agentID string) string {
	if agentID == agents.CodexID {
		return routing.FamilyCodex
	}
	return routing.FamilySonnet
}

// Models decides which model names setup writes for an agent: the
// requested one (which a connection or combo must serve as named), else the
// agent model map's choice for the agent's family, else the automatic
// default. Claude Code's families take the map's targets where they are set,
// so its haiku / background requests can go to a cheaper model even with an
// explicit main model. It fails with AGENT_MODEL_NOT_SERVED (Invalid) or
// NO_MODEL_SERVED (Conflict) when nothing can serve the model.
func (p Picker) Models(agentID, requested string) (Models, error) {
	g := p.Gateway
	requested = strings.TrimSpace(requested)
	if requested != "" {
		if err := g.Served(requested); err != nil {
			e := errs.As(err)
			if e.Class == errs.Internal {
				return Models{}, err
			}
			why := ""
			if e.Code != "MODEL_NOT_FOUND" {
				why = " (" + e.Message + ")"
			}
			return Models{}, errs.New(errs.Invalid, "AGENT_MODEL_NOT_SERVED",
				"no connection can serve %q%s: add a connection that serves it, or pick a name from GET /v1/models", requested, why).WithParam("model")
		}
	}
	setting := func(family string) string {
		t, on := p.Map(family)
		if !on || t == "" || g.Served(t) != nil {
			return ""
		}
		return t
	}
	main := Models{Model: requested, Source: "requested"}
	if main.Model == "" {
		if t := setting(mainFamily(agentID)); t != "" {
			main.Model, main.Source = t, routing.MapSetting
		} else if c := p.recommended(agentID); c != "" {
			// The combo used most (else the map's automatic default): not
			// the alphabetically first one.
			main.Model, main.Source = c, routing.MapDefault
		} else if d := g.DefaultModel(); d != "" {
			main.Model, main.Source = d, routing.MapDefault
		}
	}
	if main.Model == "" {
		return Models{}, errs.New(errs.Conflict, "NO_MODEL_SERVED",
			"no connection serves any model yet: add a provider connection (dashboard Connections page or POST /api/providers), then run setup again")
	}
	main.Warning = p.Unservable(p.Health(), main.Model)
	main.ContextWindow = g.ContextWindow(main.Model)
	if agentID == continueID {
		main.Autocomplete = g.ServedMatching(IsCodeModel)
		if main.Autocomplete == "" || IsCodeModel(main.Model) {
			main.Autocomplete = main.Model
		}
		main.Embed = g.ServedMatching(IsEmbedModel)
		return main, nil
	}
	if agentID != claudeCodeID {
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
			if m := g.ClaudeFamilyModel(family); m != "" {
				return m
			}
		}
		return main.Model
	}
	main.Opus, main.Sonnet, main.Haiku = pick(routing.FamilyOpus), pick(routing.FamilySonnet), pick(routing.FamilyHaiku)
	return main, nil
}

// Unservable says why name cannot be served when every connection it could
// go to (through a combo's targets too) is unreachable, has its key
// rejected or its endpoint not found in rep; "" when one of them could answer.
func (p Picker) Unservable(rep health.Report, name string) string {
	seen := map[string]bool{}
	for _, id := range p.Gateway.Connections(name) {
		seen[id] = true
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
	return "every connection serving " + name + " is out of service (" + strings.Join(why, "; ") +
		"): the agent would get only errors until it is fixed"
}

// Choices lists the served models and combos Configure offers for an
// agent, the recommended one first: the agent model map's target the user
// set for the agent's main family, else (Claude Code) the user's Claude
// connection's sonnet model, else the serving combo used most in the last 7
// days, else the serving combo or model the map would pick by itself. Then
// serving before not serving, combos before models, most used first, by name.
func (p Picker) Choices(agentID string) []Choice {
	g := p.Gateway
	uses := p.Uses()
	rep := p.Health()
	var out []Choice
	seen := map[string]bool{}
	for _, o := range g.Offers() {
		if o.Name == "" || seen[strings.ToLower(o.Name)] {
			continue
		}
		seen[strings.ToLower(o.Name)] = true
		ch := Choice{Name: o.Name, Kind: o.Kind, Requests: uses[o.Name]}
		if err := g.Served(o.Name); err != nil {
			ch.Why = errs.As(err).Message
		} else if w := p.Unservable(rep, o.Name); w != "" {
			ch.Why = w
		} else {
			ch.Serving = true
		}
		out = append(out, ch)
	}
	pick := -1
	if t, on := p.Map(mainFamily(agentID)); on && t != "" {
		for i := range out {
			if strings.EqualFold(out[i].Name, t) && out[i].Serving {
				pick = i
				out[i].Why = "your choice in the agent model map"
			}
		}
	}
	if pick < 0 && agentID == claudeCodeID {
		// Claude Code on the user's Claude subscription or API key when
		// there is one, before an unrelated endpoint.
		if m := g.ClaudeFamilyModel(routing.FamilySonnet); m != "" {
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
			if out[i].Kind == KindCombo && out[i].Serving && out[i].Requests > 0 && (pick < 0 || out[i].Requests > out[pick].Requests) {
				pick = i
			}
		}
		if pick >= 0 {
			out[pick].Why = "the combo used most in the last 7 days"
		}
	}
	if pick < 0 {
		d := g.DefaultModel()
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
			return x.Kind == KindCombo
		case x.Requests != y.Requests:
			return x.Requests > y.Requests
		}
		return strings.ToLower(x.Name) < strings.ToLower(y.Name)
	})
	return out
}

// recommended is the name Choices offers first ("" when none serves).
func (p Picker) recommended(agentID string) string {
	for _, c := range p.Choices(agentID) {
		if c.Recommended {
			return c.Name
		}
	}
	return ""
}
