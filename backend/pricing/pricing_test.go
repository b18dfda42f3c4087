package pricing

import (
	"math"
	"testing"

	"omniroute/backend/providers/registry"
)

func ptr(v float64) *float64 { return &v }

func newTable(t *testing.T) *Table {
	t.Helper()
	tb, err := New(registry.Catalog(nil).Prices(), map[string]string{"claude": "anthropic", "codex": "openai"}, []string{"claude", "codex", "ollama-local"})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestPriceOfEachTokenClass holds Price.Of to hand-computed rows, one token
// class at a time and all together.
func TestPriceOfEachTokenClass(t *testing.T) {
	full := Price{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: ptr(0.3), CacheWritePerMTok: ptr(3.75), ReasoningPerMTok: ptr(20)}
	bare := Price{InputPerMTok: 2, OutputPerMTok: 8}
	for _, c := range []struct {
		name string
		p    Price
		u    Usage
		want float64
	}{
		{"input only", full, Usage{Prompt: 1_000_000}, 3},
		{"output only", full, Usage{Output: 1_000_000}, 15},
		{"cached read", full, Usage{Prompt: 1_000_000, CacheRead: 1_000_000}, 0.3},
		{"cache write", full, Usage{Prompt: 1_000_000, CacheWrite: 1_000_000}, 3.75},
		{"reasoning", full, Usage{Output: 1_000_000, Reasoning: 1_000_000}, 20},
		// 5000 fresh × 3 + 2000 read × 0.3 + 3000 write × 3.75 + 600 visible × 15 + 400 reasoning × 20
		// = 15000 + 600 + 11250 + 9000 + 8000 = 43850 µ$
		{"all classes", full, Usage{Prompt: 10_000, CacheRead: 2000, CacheWrite: 3000, Output: 1000, Reasoning: 400}, 0.04385},
		// No cached, write or reasoning price: each charged at its class's price.
		{"defaults to input and output", bare, Usage{Prompt: 1000, CacheRead: 400, CacheWrite: 100, Output: 500, Reasoning: 200}, (1000*2 + 500*8) / 1e6},
		{"subsets larger than totals are clamped", full, Usage{Prompt: 100, CacheRead: 200, Output: 10, Reasoning: 50}, (200*0.3 + 10*20) / 1e6},
		{"nothing", full, Usage{}, 0},
	} {
		if got := c.p.Of(c.u); !near(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCostFromTheCatalogue prices shipped models by exact and dated names;
// an unknown model is unknown, never 0.
func TestCostFromTheCatalogue(t *testing.T) {
	tb := newTable(t)
	for _, c := range []struct {
		provider, model string
		u               Usage
		want            float64
		known           bool
	}{
		// 600 × 2.5 + 400 × 1.25 + 500 × 10 = 7000 µ$
		{"openai", "gpt-4o", Usage{Prompt: 1000, CacheRead: 400, Output: 500}, 0.007, true},
		{"openai", "gpt-4o-2024-08-06", Usage{Prompt: 1000, CacheRead: 400, Output: 500}, 0.007, true},
		{"openai", "gpt-4o-mini", Usage{Prompt: 1_000_000, Output: 1_000_000}, 0.75, true},
		{"openai", "gpt-5-2025-08-07", Usage{Prompt: 1_000_000, CacheRead: 1_000_000}, 0.125, true},
		// o3 has no reasoning price: reasoning tokens cost output's 8 $/MTok.
		{"openai", "o3", Usage{Output: 1000, Reasoning: 800}, 0.008, true},
		// 5000 × 3 + 2000 × 0.3 + 3000 × 3.75 + 1000 × 15 = 41850 µ$
		{"anthropic", "claude-sonnet-4-5-20250929", Usage{Prompt: 10_000, CacheRead: 2000, CacheWrite: 3000, Output: 1000}, 0.04185, true},
		{"anthropic", "claude-3-5-haiku-latest", Usage{Prompt: 1_000_000}, 0.8, true},
		{"gemini", "gemini-2.5-flash", Usage{Prompt: 1_000_000, Output: 1_000_000}, 2.8, true},
		{"deepseek", "deepseek-chat", Usage{Prompt: 1_000_000, CacheRead: 500_000, Output: 1_000_000}, 0.14 + 0.014 + 0.42, true},
		{"glm", "glm-4.6", Usage{Prompt: 1_000_000, Output: 1_000_000}, 2.8, true},
		{"openai-compatible:my", "gpt-4o", Usage{Prompt: 1}, 0, false},
		{"openai", "gpt-4o-2024-13-06", Usage{Prompt: 1}, 0, false}, // not a date
		{"openai", "llama-3-70b", Usage{Prompt: 1}, 0, false},
		{"claude", "claude-haiku-4-5", Usage{Prompt: 1_000_000}, 1, true}, // priced as the API it stands in for
	} {
		got, known := tb.Cost(c.provider, c.model, c.u)
		if known != c.known || !near(got, c.want) {
			t.Errorf("%s/%s: %v %v, want %v %v", c.provider, c.model, got, known, c.want, c.known)
		}
	}
}

// TestChargeOverridesAndFlatRate: a connection's own price wins, a
// flat-rate connection costs 0 and reports the API price as saved.
func TestChargeOverridesAndFlatRate(t *testing.T) {
	tb := newTable(t)
	u := Usage{Prompt: 1_000_000, Output: 1_000_000}
	if c := tb.Charge("c1", "anthropic", "claude-haiku-4-5", u); !c.Known || c.Flat || !near(c.USD, 6) {
		t.Fatalf("catalogue: %+v", c)
	}
	if c := tb.Charge("c2", "claude", "claude-haiku-4-5", u); !c.Known || !c.Flat || c.USD != 0 || !near(c.Saved, 6) {
		t.Fatalf("subscription: %+v", c)
	}
	if c := tb.Charge("c3", "ollama-local", "llama3", u); !c.Known || !c.Flat || c.USD != 0 || c.Saved != 0 {
		t.Fatalf("local unknown model: %+v", c)
	}
	if c := tb.Charge("c4", "openai-compatible:x", "my-model", u); c.Known {
		t.Fatalf("unknown: %+v", c)
	}
	tb.SetOverride("c4", Override{Pricing: map[string]Price{"my-model": {InputPerMTok: 1, OutputPerMTok: 2}}})
	if c := tb.Charge("c4", "openai-compatible:x", "my-model-20250101", u); !c.Known || !near(c.USD, 3) {
		t.Fatalf("override: %+v", c)
	}
	no, yes := false, true
	tb.SetOverride("c2", Override{FlatRate: &no})
	if c := tb.Charge("c2", "claude", "claude-haiku-4-5", u); c.Flat || !near(c.USD, 6) {
		t.Fatalf("subscription made metered: %+v", c)
	}
	tb.SetOverride("c1", Override{FlatRate: &yes})
	if c := tb.Charge("c1", "anthropic", "claude-haiku-4-5", u); !c.Flat || c.USD != 0 || !near(c.Saved, 6) {
		t.Fatalf("api key made flat: %+v", c)
	}
	if !tb.FlatRate("c1", "anthropic") || tb.FlatRate("c2", "claude") || !tb.FlatRate("c9", "claude") || tb.FlatRate("c9", "openai") {
		t.Fatal("FlatRate: the override, else the provider's default")
	}
	tb.ReplaceOverrides(map[string]Override{"c1": {FlatRate: &yes}})
	if _, ok := tb.Override("c4"); ok {
		t.Fatal("ReplaceOverrides keeps an override not in the new set")
	}
	tb.SetOverride("c1", Override{})
	if _, ok := tb.Override("c1"); ok {
		t.Fatal("an empty override is removed")
	}
}

// TestShippedCatalogueIsComplete: every entry names its date and source, and
// the models the providers default to are priced.
func TestShippedCatalogueIsComplete(t *testing.T) {
	tb := newTable(t)
	for _, m := range []string{"openai/gpt-5", "openai/gpt-5-mini", "openai/gpt-5-nano", "openai/gpt-4.1", "openai/gpt-4.1-mini", "openai/gpt-4o",
		"openai/gpt-4o-mini", "openai/o3", "openai/o4-mini", "anthropic/claude-opus-4-5", "anthropic/claude-opus-4-1", "anthropic/claude-sonnet-4-5",
		"anthropic/claude-sonnet-4", "anthropic/claude-haiku-4-5", "gemini/gemini-2.5-pro", "gemini/gemini-2.5-flash", "deepseek/deepseek-chat",
		"deepseek/deepseek-reasoner", "glm/glm-4.6"} {
		var p, model string
		for i := range m {
			if m[i] == '/' {
				p, model = m[:i], m[i+1:]
				break
			}
		}
		if _, ok := tb.Lookup(p, model); !ok {
			t.Errorf("%s not priced", m)
		}
	}
	for _, e := range tb.Catalogue() {
		if e.Date == "" || e.Source == "" {
			t.Errorf("%s/%s: no date or source", e.Provider, e.Model)
		}
	}
}

// TestChargeAllocatesNothing: pricing runs once per served request.
func TestChargeAllocatesNothing(t *testing.T) {
	tb := newTable(t)
	tb.SetOverride("c", Override{Pricing: map[string]Price{"m": {InputPerMTok: 1}}})
	u := Usage{Prompt: 100, Output: 10}
	if n := testing.AllocsPerRun(100, func() {
		tb.Charge("c", "openai-compatible:x", "m-2025-01-02", u)
		tb.Charge("d", "anthropic", "claude-sonnet-4-5-20250929", u)
	}); n != 0 {
		t.Fatalf("%v allocations per charge", n)
	}
}
