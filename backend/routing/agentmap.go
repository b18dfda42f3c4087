package routing

import (
	"sort"
	"strings"

	"omniroute/backend/errs"
)

// Agent model families: the model names coding agents ask for on their own
// (Claude Code's defaults and background model, Codex's default), which no
// upstream of the user's may serve under that name.
const (
	FamilyOpus   = "opus"
	FamilySonnet = "sonnet"
	// FamilyHaiku also covers Claude Code's small-fast (background) model.
	FamilyHaiku = "haiku"
	FamilyCodex = "codex"
)

// Families lists the agent model families in display order.
var Families = [...]string{FamilyOpus, FamilySonnet, FamilyHaiku, FamilyCodex}

// Sources of an agent model mapping (Mapping.Source).
const (
	// MapSetting: the user's agent model map named the target.
	MapSetting = "setting"
	// MapDefault: the automatic default (the first healthy combo, else the
	// first served model).
	MapDefault = "default"
	// MapSuffix: a context suffix such as "[1m]" was dropped and the base
	// name routes.
	MapSuffix = "suffix"
)

// AgentMap returns the user's target for an agent model family ("" to use the
// automatic default) and whether the map is on at all.
type AgentMap func(family string) (target string, enabled bool)

// Mapping says how a requested name that no connection serves was routed.
type Mapping struct {
	Requested string
	Target    string
	// Family is the agent model family matched ("" for MapSuffix).
	Family string
	Source string
}

// BaseModel drops a trailing context suffix such as "[1m]" that Claude Code
// appends to its model names ("claude-opus-4-8[1m]" → "claude-opus-4-8").
func BaseModel(model string) string {
	if i := strings.LastIndexByte(model, '['); i > 0 && strings.HasSuffix(model, "]") {
		return model[:i]
	}
	return model
}

// AgentFamily returns the agent model family of a bare model name, "" for
// none:
//
//	opus    claude-*opus*   (claude-opus-4-8[1m], claude-3-opus-latest), opus, opusplan
//	sonnet  claude-*sonnet* (claude-sonnet-4-5-20250929), sonnet
//	haiku   claude-*haiku*  (claude-3-5-haiku-20241022, claude-haiku-4-5), haiku
//	codex   *codex* (gpt-5-codex, gpt-5.1-codex-max, codex-mini-latest), gpt-5, gpt-5.N, with -mini / -nano
//
// Names with a provider prefix ("openai/gpt-5") are never agent defaults.
func AgentFamily(model string) string {
	m := strings.ToLower(strings.TrimSpace(BaseModel(strings.TrimSpace(model))))
	if m == "" || strings.Contains(m, "/") {
		return ""
	}
	claude := strings.HasPrefix(m, "claude")
	switch {
	case m == "opus" || m == "opusplan" || claude && strings.Contains(m, "opus"):
		return FamilyOpus
	case m == "sonnet" || claude && strings.Contains(m, "sonnet"):
		return FamilySonnet
	case m == "haiku" || claude && strings.Contains(m, "haiku"):
		return FamilyHaiku
	case strings.Contains(m, "codex") || isGPT5(m):
		return FamilyCodex
	}
	return ""
}

// isGPT5 matches the bare GPT-5 names Codex sends by default: gpt-5 and its
// point releases (gpt-5.1, gpt-5.2), with an optional -mini / -nano. Other
// names (gpt-5-ultra, a typo) are not an agent's default and are answered
// 404 MODEL_NOT_FOUND with a suggestion rather than silently remapped.
func isGPT5(m string) bool {
	rest, ok := strings.CutPrefix(m, "gpt-5")
	if !ok {
		return false
	}
	if r, ok := strings.CutPrefix(rest, "."); ok {
		i := 0
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 0 {
			return false
		}
		rest = r[i:]
	}
	switch rest {
	case "", "-mini", "-nano":
		return true
	}
	return false
}

// notServed reports whether err says no connection serves the name at all
// (as opposed to access rules or bad input).
func notServed(err error) bool {
	e := errs.As(err)
	return e != nil && (e.Code == "MODEL_NOT_FOUND" || e.Code == "no_executable_targets")
}

// remap finds what to route a requested name that no connection serves to:
// the name without its context suffix when that routes, else the agent model
// map's target for the name's family (the user's choice, else the automatic
// default). ok is false when nothing applies.
func (e *Engine) remap(requested string) (Mapping, bool) {
	if base := BaseModel(requested); base != requested && e.routable(base) {
		return Mapping{Requested: requested, Target: base, Source: MapSuffix}, true
	}
	family := AgentFamily(requested)
	if family == "" || e.agentMap == nil {
		return Mapping{}, false
	}
	target, source := e.AgentTarget(family)
	if target == "" || strings.EqualFold(target, requested) {
		return Mapping{}, false
	}
	return Mapping{Requested: requested, Target: target, Family: family, Source: source}, true
}

// AgentTarget returns where the agent model map sends a family and why
// (MapSetting or MapDefault); "" when the map is off or nothing is served.
func (e *Engine) AgentTarget(family string) (target, source string) {
	if e.agentMap == nil {
		return "", ""
	}
	t, enabled := e.agentMap(family)
	if !enabled {
		return "", ""
	}
	if t != "" {
		return t, MapSetting
	}
	if m := e.ClaudeFamilyModel(family); m != "" {
		return m, MapDefault
	}
	if d := e.DefaultModel(); d != "" {
		return d, MapDefault
	}
	return "", ""
}

// routable reports whether some active connection (or combo) serves model.
func (e *Engine) routable(model string) bool { return e.Served(model) == nil }

// Served returns nil when a connection or combo serves model as named, without
// the agent model map; otherwise the error a request for it would get.
func (e *Engine) Served(model string) error {
	_, err := e.plan(PlanInput{Model: model, DryRun: true})
	return err
}

// DefaultModel is the automatic target of the agent model map: the first
// combo (by name) with an admissible target, else the first model served by
// an admissible connection in priority order, else the first served model of
// any active connection; "" when nothing is served.
func (e *Engine) DefaultModel() string {
	combos := e.combos.All()
	sort.Slice(combos, func(i, j int) bool { return lower(combos[i].Name) < lower(combos[j].Name) })
	for _, co := range combos {
		if p, err := e.plan(PlanInput{Model: co.Name, DryRun: true}); err == nil && len(p.Candidates) > 0 {
			return co.Name
		}
	}
	fallback := ""
	for _, c := range e.reg.All() {
		if !c.Active || len(c.Models) == 0 {
			continue
		}
		for _, m := range c.Models {
			if e.Check(Candidate{Conn: c, Model: m}) == nil {
				return m
			}
			if fallback == "" {
				fallback = m
			}
		}
	}
	return fallback
}

// ServedMatching is the first model whose name match accepts, served by an
// admissible connection in priority order (as DefaultModel orders them);
// "" when none is. Setup uses it to find a model for a role the main model
// cannot play (Continue's embed and autocomplete roles).
func (e *Engine) ServedMatching(match func(model string) bool) string {
	for _, c := range e.reg.All() {
		if !c.Active {
			continue
		}
		for _, m := range c.Models {
			if match(m) && e.Check(Candidate{Conn: c, Model: m}) == nil {
				return m
			}
		}
	}
	return ""
}

// ClaudeFamilyModel is where a Claude family (opus, sonnet, haiku) goes by
// default: the newest served name of that family (by name: claude-opus-5-5
// before claude-opus-4-8) on a connection of a vendor's home (Provider.VendorHome:
// the Anthropic API, a Claude subscription), else on any connection; "" for another family or when no
// admissible connection serves one. So Claude Code's own names reach the
// user's Claude account before an unrelated endpoint that happens to come
// first.
func (e *Engine) ClaudeFamilyModel(family string) string {
	if family != FamilyOpus && family != FamilySonnet && family != FamilyHaiku {
		return ""
	}
	for _, claudeOnly := range []bool{true, false} {
		best := ""
		for _, c := range e.reg.All() {
			if !c.Active || claudeOnly && !c.Provider.VendorHome {
				continue
			}
			for _, m := range c.Models {
				if AgentFamily(m) == family && lower(m) > lower(best) && e.Check(Candidate{Conn: c, Model: m}) == nil {
					best = m
				}
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}
