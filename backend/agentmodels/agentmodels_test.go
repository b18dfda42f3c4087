package agentmodels

import (
	"reflect"
	"strings"
	"testing"

	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/routing"
)

// gateway is a routing state written out: what is served, by which
// connections, and the defaults routing would pick.
type gateway struct {
	offers   []Offer
	refused  map[string]error    // served names not admitted now
	conns    map[string][]string // name → connection ids
	def      string
	families map[string]string // Claude family → default model
	windows  map[string]int
}

func (g gateway) Served(name string) error {
	if err, ok := g.refused[name]; ok {
		return err
	}
	for _, o := range g.offers {
		if strings.EqualFold(o.Name, name) {
			return nil
		}
	}
	return errs.New(errs.NotFound, "MODEL_NOT_FOUND", "model %q not found", name)
}
func (g gateway) DefaultModel() string                   { return g.def }
func (g gateway) ClaudeFamilyModel(family string) string { return g.families[family] }
func (g gateway) Connections(name string) []string       { return g.conns[name] }
func (g gateway) Offers() []Offer                        { return g.offers }
func (g gateway) ContextWindow(name string) int          { return g.windows[name] }
func (g gateway) ServedMatching(match func(string) bool) string {
	for _, o := range g.offers {
		if o.Kind == KindModel && match(o.Name) && g.Served(o.Name) == nil {
			return o.Name
		}
	}
	return ""
}

// agentMap is an agent model map: on, with these family targets.
func agentMap(on bool, targets map[string]string) func(string) (string, bool) {
	return func(family string) (string, bool) { return targets[family], on }
}

func picker(g gateway, m func(string) (string, bool), rep health.Report, uses map[string]int64) Picker {
	if m == nil {
		m = agentMap(false, nil)
	}
	return Picker{Gateway: g, Map: m, Health: func() health.Report { return rep }, Uses: func() map[string]int64 { return uses }}
}

func TestRoleModelsByName(t *testing.T) {
	for _, tc := range []struct {
		model       string
		code, embed bool
	}{
		{"qwen2.5-coder:7b", true, false},
		{"Codestral-latest", true, false},
		{"codegemma", true, false},
		{"codellama-13b", true, false},
		{"deepseek-v3-fim", true, false},
		{"text-embedding-3-small", false, true},
		{"nomic-embed-text", false, true},
		{"bge-m3", false, true},
		{"multilingual-e5-large", false, true},
		{"coder-embed", false, true}, // an embedding model is never a code model
		{"gpt-5", false, false},
		{"claude-sonnet-4-5", false, false},
	} {
		if got := IsCodeModel(tc.model); got != tc.code {
			t.Errorf("IsCodeModel(%q) = %v, want %v", tc.model, got, tc.code)
		}
		if got := IsEmbedModel(tc.model); got != tc.embed {
			t.Errorf("IsEmbedModel(%q) = %v, want %v", tc.model, got, tc.embed)
		}
	}
}

func TestModels(t *testing.T) {
	base := gateway{
		offers: []Offer{{"fast", KindCombo}, {"gpt-5", KindModel}, {"qwen2.5-coder", KindModel}, {"nomic-embed-text", KindModel},
			{"claude-sonnet-4-5", KindModel}, {"claude-haiku-4-5", KindModel}, {"claude-opus-4-1", KindModel}},
		conns:    map[string][]string{"gpt-5": {"c1"}, "fast": {"c1", "c2"}},
		def:      "gpt-5",
		families: map[string]string{routing.FamilyOpus: "claude-opus-4-1", routing.FamilySonnet: "claude-sonnet-4-5", routing.FamilyHaiku: "claude-haiku-4-5"},
		windows:  map[string]int{"gpt-5": 400000},
	}
	down := health.Report{Connections: []health.ConnHealth{{ID: "c1", Name: "One", State: health.Unreachable, Reason: "no answer"}}}
	for _, tc := range []struct {
		name      string
		g         *gateway // nil: base
		agent     string
		requested string
		m         func(string) (string, bool)
		rep       health.Report
		uses      map[string]int64
		want      Models
		code      string
	}{
		{name: "requested name served", agent: "codex", requested: " gpt-5 ",
			want: Models{Model: "gpt-5", Source: "requested", ContextWindow: 400000}},
		{name: "requested name unknown", agent: "codex", requested: "nope", code: "AGENT_MODEL_NOT_SERVED"},
		{name: "map target for codex", agent: "codex", m: agentMap(true, map[string]string{routing.FamilyCodex: "fast"}),
			want: Models{Model: "fast", Source: routing.MapSetting}},
		{name: "map off: the default", agent: "codex", m: agentMap(false, map[string]string{routing.FamilyCodex: "fast"}),
			want: Models{Model: "gpt-5", Source: routing.MapDefault, ContextWindow: 400000}},
		{name: "map target not served: the default", agent: "codex", m: agentMap(true, map[string]string{routing.FamilyCodex: "gone"}),
			want: Models{Model: "gpt-5", Source: routing.MapDefault, ContextWindow: 400000}},
		{name: "most used combo before the default", agent: "codex", uses: map[string]int64{"fast": 3},
			want: Models{Model: "fast", Source: routing.MapDefault}},
		{name: "nothing served", agent: "codex", g: &gateway{}, code: "NO_MODEL_SERVED"},
		{name: "every connection down warns", agent: "codex", requested: "gpt-5", rep: down,
			want: Models{Model: "gpt-5", Source: "requested", ContextWindow: 400000,
				Warning: "every connection serving gpt-5 is out of service (One: no answer): the agent would get only errors until it is fixed"}},
		{name: "continue takes a code and an embed model", agent: continueID, requested: "gpt-5",
			want: Models{Model: "gpt-5", Source: "requested", ContextWindow: 400000, Autocomplete: "qwen2.5-coder", Embed: "nomic-embed-text"}},
		{name: "continue on a code model autocompletes with it", agent: continueID, requested: "qwen2.5-coder",
			want: Models{Model: "qwen2.5-coder", Source: "requested", Autocomplete: "qwen2.5-coder", Embed: "nomic-embed-text"}},
		{name: "claude code families on the claude connection", agent: claudeCodeID,
			want: Models{Model: "claude-sonnet-4-5", Source: routing.MapDefault, Opus: "claude-opus-4-1", Sonnet: "claude-sonnet-4-5", Haiku: "claude-haiku-4-5"}},
		{name: "claude code requested: every family on it", agent: claudeCodeID, requested: "gpt-5",
			want: Models{Model: "gpt-5", Source: "requested", ContextWindow: 400000, Opus: "gpt-5", Sonnet: "gpt-5", Haiku: "gpt-5"}},
		{name: "claude code haiku from the map", agent: claudeCodeID, requested: "gpt-5", m: agentMap(true, map[string]string{routing.FamilyHaiku: "fast"}),
			want: Models{Model: "gpt-5", Source: "requested", ContextWindow: 400000, Opus: "gpt-5", Sonnet: "gpt-5", Haiku: "fast"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := base
			if tc.g != nil {
				g = *tc.g
			}
			got, err := picker(g, tc.m, tc.rep, tc.uses).Models(tc.agent, tc.requested)
			if tc.code != "" {
				if errs.As(err).Code != tc.code {
					t.Fatalf("err = %v, want code %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestRequestedRefusedSaysWhy(t *testing.T) {
	g := gateway{offers: []Offer{{"gpt-5", KindModel}},
		refused: map[string]error{"gpt-5": errs.New(errs.Permission, "MODEL_NOT_ALLOWED", "blocked by policy")}}
	_, err := picker(g, nil, health.Report{}, nil).Models("codex", "gpt-5")
	e := errs.As(err)
	if e.Code != "AGENT_MODEL_NOT_SERVED" || e.Class != errs.Invalid || !strings.Contains(e.Message, "(blocked by policy)") {
		t.Fatalf("err = %+v", e)
	}
	g.refused["gpt-5"] = errs.New(errs.Internal, "STORE", "db down")
	if _, err := picker(g, nil, health.Report{}, nil).Models("codex", "gpt-5"); errs.As(err).Code != "STORE" {
		t.Fatalf("an internal error passes through as is, got %v", err)
	}
}

func TestUnservable(t *testing.T) {
	g := gateway{conns: map[string][]string{"m": {"a", "b"}, "lone": {"a"}}}
	st := func(a, b health.State) health.Report {
		return health.Report{Connections: []health.ConnHealth{{ID: "a", Name: "A", State: a, Reason: "ra"}, {ID: "b", Name: "B", State: b, Reason: "rb"}}}
	}
	for _, tc := range []struct {
		name, model string
		rep         health.Report
		want        string
	}{
		{"no connection: nothing to say", "other", st(health.Unreachable, health.Unreachable), ""},
		{"one serving", "m", st(health.Unreachable, health.Serving), ""},
		{"all out", "m", st(health.KeyRejected, health.EndpointNotFound),
			"every connection serving m is out of service (A: ra; B: rb): the agent would get only errors until it is fixed"},
		{"breaker open still counts as serving", "lone", st(health.BreakerOpen, health.Unreachable), ""},
		{"connection not in the report", "m", health.Report{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Picker{Gateway: g}).Unservable(tc.rep, tc.model); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestChoices(t *testing.T) {
	g := gateway{
		offers: []Offer{{"fast", KindCombo}, {"cheap", KindCombo}, {"gpt-5", KindModel}, {"GPT-5", KindModel}, {"llama", KindModel},
			{"claude-sonnet-4-5", KindModel}},
		refused:  map[string]error{"llama": errs.New(errs.Unavailable, "NO_CANDIDATE", "llama is cooling down")},
		conns:    map[string][]string{"cheap": {"down"}},
		def:      "gpt-5",
		families: map[string]string{routing.FamilySonnet: "claude-sonnet-4-5"},
	}
	rep := health.Report{Connections: []health.ConnHealth{{ID: "down", Name: "Down", State: health.Unreachable, Reason: "no answer"}}}
	type row struct {
		Name string
		Rec  bool
		Why  string
	}
	for _, tc := range []struct {
		name  string
		agent string
		m     func(string) (string, bool)
		uses  map[string]int64
		want  []row
	}{
		{name: "default model when nothing used", agent: "codex", want: []row{
			{"gpt-5", true, "serving now"}, {"fast", false, ""}, {"claude-sonnet-4-5", false, ""},
			{"cheap", false, "every connection serving cheap is out of service (Down: no answer): the agent would get only errors until it is fixed"},
			{"llama", false, "llama is cooling down"}}},
		{name: "combo used most", agent: "codex", uses: map[string]int64{"fast": 2, "cheap": 9, "gpt-5": 50}, want: []row{
			{"fast", true, "the combo used most in the last 7 days"}, {"gpt-5", false, ""}, {"claude-sonnet-4-5", false, ""},
			{"cheap", false, "every connection serving cheap is out of service (Down: no answer): the agent would get only errors until it is fixed"},
			{"llama", false, "llama is cooling down"}}},
		{name: "the map's target first", agent: "codex", m: agentMap(true, map[string]string{routing.FamilyCodex: "CLAUDE-sonnet-4-5"}),
			uses: map[string]int64{"fast": 2}, want: []row{
				{"claude-sonnet-4-5", true, "your choice in the agent model map"}, {"fast", false, ""}, {"gpt-5", false, ""},
				{"cheap", false, "every connection serving cheap is out of service (Down: no answer): the agent would get only errors until it is fixed"},
				{"llama", false, "llama is cooling down"}}},
		{name: "claude code on the claude connection", agent: claudeCodeID, uses: map[string]int64{"fast": 2}, want: []row{
			{"claude-sonnet-4-5", true, "your Claude connection's sonnet model"}, {"fast", false, ""}, {"gpt-5", false, ""},
			{"cheap", false, "every connection serving cheap is out of service (Down: no answer): the agent would get only errors until it is fixed"},
			{"llama", false, "llama is cooling down"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []row
			for _, c := range picker(g, tc.m, rep, tc.uses).Choices(tc.agent) {
				got = append(got, row{c.Name, c.Recommended, c.Why})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
