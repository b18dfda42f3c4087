package routing

import (
	"strings"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	preg "omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
	"omniroute/backend/store"
)

func TestAgentFamily(t *testing.T) {
	cases := map[string]string{
		// Claude Code's defaults, with and without the 1M-context suffix.
		"claude-opus-4-8[1m]":        FamilyOpus,
		"claude-opus-4-1-20250805":   FamilyOpus,
		"claude-3-opus-latest":       FamilyOpus,
		"opus":                       FamilyOpus,
		"opusplan":                   FamilyOpus,
		"claude-sonnet-4-5-20250929": FamilySonnet,
		"claude-sonnet-4-5[1m]":      FamilySonnet,
		"claude-3-7-sonnet-latest":   FamilySonnet,
		"Sonnet":                     FamilySonnet,
		// Its small-fast (background) model.
		"claude-3-5-haiku-20241022": FamilyHaiku,
		"claude-haiku-4-5":          FamilyHaiku,
		"haiku":                     FamilyHaiku,
		// Codex's defaults.
		"gpt-5-codex":       FamilyCodex,
		"gpt-5.1-codex-max": FamilyCodex,
		"gpt-5.2":           FamilyCodex,
		"codex-mini-latest": FamilyCodex,
		" gpt-5.3-codex ":   FamilyCodex,
		"gpt-5":             FamilyCodex,
		"gpt-5-mini":        FamilyCodex,
		"gpt-5.1-nano":      FamilyCodex,
		// Not agent defaults: typos and names no agent sends by itself.
		"gpt-5-ultra":           "",
		"gpt-5.":                "",
		"gpt-5x":                "",
		"gpt-50":                "",
		"gpt-4o-mini":           "",
		"glm-4.6":               "",
		"anthropic/claude-opus": "",
		"openai/gpt-5-codex":    "",
		"my-opus-model":         "",
		"":                      "",
		"[1m]":                  "",
	}
	for in, want := range cases {
		if got := AgentFamily(in); got != want {
			t.Errorf("AgentFamily(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseModel(t *testing.T) {
	for in, want := range map[string]string{"claude-opus-4-8[1m]": "claude-opus-4-8", "m": "m", "[1m]": "[1m]", "a[b": "a[b"} {
		if got := BaseModel(in); got != want {
			t.Errorf("BaseModel(%q) = %q, want %q", in, got, want)
		}
	}
}

type mapEnv struct {
	e        *Engine
	clk      *clock.Fake
	reg      *Registry
	combos   *Combos
	targets  map[string]string
	enabled  bool
	breakers *breaker.Registry
}

func newMapEnv(t *testing.T, rows []store.Connection, combos []store.Combo) *mapEnv {
	t.Helper()
	m := &mapEnv{clk: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), reg: NewRegistry(preg.Catalog(nil)),
		combos: NewCombos(), targets: map[string]string{}, enabled: true}
	if err := m.reg.Load(rows, plainBox{}); err != nil {
		t.Fatal(err)
	}
	m.combos.Load(combos)
	m.breakers = breaker.NewRegistry(m.clk, func(string) breaker.Profile { return breaker.DefaultProfile("apikey") }, nil)
	m.e = NewEngine(EngineDeps{Registry: m.reg, Clock: m.clk, Breakers: m.breakers, Lockouts: lockout.New(m.clk), Combos: m.combos,
		Store: nopStore{}, Policy: testPolicy{},
		AgentMap: func(f string) (string, bool) { return m.targets[f], m.enabled }})
	return m
}

func conn(id string, prio int, models string) store.Connection {
	return store.Connection{ID: id, Provider: "openai-compatible", Name: id, BaseURL: "http://x/v1", Priority: prio,
		IsActive: true, Models: models, DiscoveredModels: "[]", CreatedAt: int64(prio)}
}

func TestPlanRoutesAgentDefaultsThroughTheMap(t *testing.T) {
	rows := []store.Connection{conn("cheap", 1, `["glm-4.5-flash"]`), conn("big", 2, `["glm-4.6","claude-opus-4-8"]`)}
	m := newMapEnv(t, rows, nil)

	// A served name is never remapped.
	p, err := m.e.Plan(PlanInput{Model: "glm-4.6"})
	if err != nil || p.Mapped != nil || p.Candidates[0].Model != "glm-4.6" {
		t.Fatalf("served name: %+v %v", p.Mapped, err)
	}
	// The [1m] suffix is dropped when the base name is served.
	p, err = m.e.Plan(PlanInput{Model: "claude-opus-4-8[1m]"})
	if err != nil || p.Mapped == nil || p.Mapped.Source != MapSuffix || p.Candidates[0].Model != "claude-opus-4-8" {
		t.Fatalf("suffix: %+v %v", p.Mapped, err)
	}
	// Automatic default: no combo, so the first served model by priority.
	p, err = m.e.Plan(PlanInput{Model: "claude-sonnet-4-5-20250929"})
	if err != nil || p.Mapped == nil || p.Mapped.Source != MapDefault || p.Mapped.Family != FamilySonnet ||
		p.Mapped.Target != "glm-4.5-flash" || p.Candidates[0].Conn.ID != "cheap" {
		t.Fatalf("default: %+v %v", p.Mapped, err)
	}
	// The user's choice per family: haiku (background requests) to the cheap model.
	m.targets[FamilyHaiku] = "glm-4.5-flash"
	m.targets[FamilyOpus] = "glm-4.6"
	for model, want := range map[string]string{"claude-3-5-haiku-20241022": "glm-4.5-flash", "claude-opus-4-1": "glm-4.6"} {
		p, err = m.e.Plan(PlanInput{Model: model})
		if err != nil || p.Mapped == nil || p.Mapped.Source != MapSetting || p.Candidates[0].Model != want {
			t.Fatalf("%s: %+v %v", model, p.Mapped, err)
		}
	}
	// Codex's default goes to the same automatic default.
	p, err = m.e.Plan(PlanInput{Model: "gpt-5.1-codex-max"})
	if err != nil || p.Mapped == nil || p.Mapped.Family != FamilyCodex {
		t.Fatalf("codex: %+v %v", p.Mapped, err)
	}
	// A name outside every family still gets 404 MODEL_NOT_FOUND.
	if _, err = m.e.Plan(PlanInput{Model: "nope-1"}); errs.As(err).Code != "MODEL_NOT_FOUND" {
		t.Fatalf("unknown name: %v", err)
	}
	// A map target nobody serves: the client's own name is reported.
	m.targets[FamilyOpus] = "gone"
	if _, err = m.e.Plan(PlanInput{Model: "claude-opus-4-1"}); errs.As(err).Code != "MODEL_NOT_FOUND" || !strings.Contains(errs.As(err).Message, "claude-opus-4-1") {
		t.Fatalf("dangling target: %v", err)
	}
	// The map switched off: 404 again.
	m.enabled = false
	if _, err = m.e.Plan(PlanInput{Model: "claude-haiku-4-5"}); errs.As(err).Code != "MODEL_NOT_FOUND" {
		t.Fatalf("map off: %v", err)
	}
	// An API key restricted to other models cannot reach the target through the map.
	m.enabled = true
	if _, err = m.e.Plan(PlanInput{Model: "claude-haiku-4-5", Access: Access{AllowedModels: []string{"claude-haiku-4-5"}}}); errs.As(err).Code != "MODEL_NOT_ALLOWED" {
		t.Fatalf("access: %v", err)
	}
}

func TestDefaultModelPrefersAHealthyComboThenAHealthyConnection(t *testing.T) {
	rows := []store.Connection{conn("a", 1, `["m-a"]`), conn("b", 2, `["m-b"]`)}
	combos := []store.Combo{
		{ID: "1", Name: "zeta", Strategy: "priority", Targets: `[{"model":"m-a"}]`, Config: "{}"},
		{ID: "2", Name: "alpha", Strategy: "priority", Targets: `[{"model":"unserved"}]`, Config: "{}"},
	}
	m := newMapEnv(t, rows, combos)
	// alpha has no executable target: zeta is the first healthy combo.
	if got := m.e.DefaultModel(); got != "zeta" {
		t.Fatalf("default %q, want the healthy combo zeta", got)
	}
	m.combos.Load(nil)
	if got := m.e.DefaultModel(); got != "m-a" {
		t.Fatalf("default %q, want m-a (first by priority)", got)
	}
	// Connection a cooling down: the first healthy one wins.
	a, _ := m.reg.Get("a")
	st := a.Cooldown()
	st.RateLimitedUntil = m.clk.Now().Add(time.Minute)
	if err := m.e.SetCooldown(a, st); err != nil {
		t.Fatal(err)
	}
	if got := m.e.DefaultModel(); got != "m-b" {
		t.Fatalf("default %q with a cooling down, want m-b", got)
	}
	b, _ := m.reg.Get("b")
	if err := m.e.SetCooldown(b, cooldown.State{RateLimitedUntil: m.clk.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got := m.e.DefaultModel(); got != "m-a" {
		t.Fatalf("default %q with all cooling down, want the first served m-a", got)
	}
	m.reg.Load(nil, plainBox{})
	if got := m.e.DefaultModel(); got != "" {
		t.Fatalf("default %q with nothing served, want empty", got)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

// TestSuggest: an unknown name is answered with the closest served name
// within a third of its length (at least 2 edits), case ignored; none when
// nothing is close.
func TestSuggest(t *testing.T) {
	conns := []*Conn{{Active: true, Models: []string{"gpt-4o-mini", "gpt-5-mini", "claude-sonnet-4-5"}},
		{Active: false, Models: []string{"gpt-5-ultra-max"}}}
	tests := []struct{ requested, want string }{
		{"gpt-5-mni", "gpt-5-mini"},
		{"GPT-4O-MINI", "gpt-4o-mini"},
		{"claude-sonet-4-5", "claude-sonnet-4-5"},
		{"gpt-5-ultra", ""}, // 4 edits from gpt-5-mini: more than a third of 11
		{"llama-3", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := suggest(conns, tt.requested); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.requested, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b  string
		limit int
		want  int
	}{{"kitten", "sitting", 10, 3}, {"abc", "abc", 5, 0}, {"abc", "xyz", 2, 2}, {"a", "abcdef", 3, 3}} {
		if got := editDistance(tt.a, tt.b, tt.limit); got != tt.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.limit, got, tt.want)
		}
	}
}

// TestClaudeFamiliesGoToTheClaudeConnectionFirst: with no map target, a
// Claude family name nobody serves goes to the newest name of that family
// on a Claude subscription or Anthropic API connection, even behind an
// unrelated endpoint of higher priority and another connection serving a
// "newer" name of the family; with no Claude connection, to any connection
// serving the family; other families keep the automatic default.
func TestClaudeFamiliesGoToTheClaudeConnectionFirst(t *testing.T) {
	sub := conn("sub", 5, `["claude-opus-4-8","claude-opus-5-5","claude-sonnet-5-0","claude-haiku-4-5"]`)
	sub.Provider = "claude"
	rows := []store.Connection{conn("oa", 1, `["glm-4.6"]`), conn("relay", 2, `["claude-sonnet-9"]`), sub}
	m := newMapEnv(t, rows, nil)
	for model, want := range map[string]string{
		"claude-opus-4-1[1m]": "claude-opus-5-5", "claude-sonnet-4-5-20250929": "claude-sonnet-5-0",
		"claude-3-5-haiku-20241022": "claude-haiku-4-5", "gpt-5-codex": "glm-4.6",
	} {
		p, err := m.e.Plan(PlanInput{Model: model})
		if err != nil || p.Mapped == nil || p.Mapped.Source != MapDefault || p.Candidates[0].Model != want {
			t.Errorf("%s: %+v %v, want %s", model, p.Mapped, err, want)
		}
	}
	// The user's choice still wins.
	m.targets[FamilySonnet] = "glm-4.6"
	if p, err := m.e.Plan(PlanInput{Model: "claude-sonnet-4-5"}); err != nil || p.Candidates[0].Model != "glm-4.6" {
		t.Errorf("map target: %+v %v", p.Mapped, err)
	}
	delete(m.targets, FamilySonnet)
	// Without the Claude connection: any connection serving the family.
	if err := m.reg.Load(rows[:2], plainBox{}); err != nil {
		t.Fatal(err)
	}
	if got := m.e.ClaudeFamilyModel(FamilySonnet); got != "claude-sonnet-9" {
		t.Errorf("sonnet without a Claude connection: %q", got)
	}
	if got := m.e.ClaudeFamilyModel(FamilyOpus); got != "" {
		t.Errorf("opus served nowhere: %q", got)
	}
	if got := m.e.ClaudeFamilyModel(FamilyCodex); got != "" {
		t.Errorf("codex is not a Claude family: %q", got)
	}
}
