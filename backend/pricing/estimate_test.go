package pricing

import "testing"

// TestEstimateUsage: the prompt at a token per four bytes, rounded up; the
// output at the request's own limit in each client format, else the default.
func TestEstimateUsage(t *testing.T) {
	for _, c := range []struct {
		body      string
		prompt    int
		maxOutput int
	}{
		{`{"max_tokens":100}`, 5, 100},
		{`{"max_completion_tokens":7,"max_tokens":100}`, 11, 7},
		{`{"max_output_tokens":9}`, 6, 9},
		{`{"generationConfig":{"maxOutputTokens":11}}`, 11, 11},
		{`{"options":{"num_predict":13}}`, 8, 13},
		{`{"max_tokens":0}`, 4, DefaultMaxOutput},
		{`{"max_tokens":"x"}`, 5, DefaultMaxOutput},
		{`{}`, 1, DefaultMaxOutput},
	} {
		if got := EstimateUsage([]byte(c.body)); got.Prompt != c.prompt || got.Output != c.maxOutput {
			t.Errorf("%s: %+v, want prompt %d output %d", c.body, got, c.prompt, c.maxOutput)
		}
	}
}

// TestEstimatePrice: a client model name is held at the highest price it may
// be served at: every provider's, and the connections' overrides; a
// "provider/" prefix and a dated name are looked through; unknown is unknown.
func TestEstimatePrice(t *testing.T) {
	tb := newTable(t)
	p, ok := tb.Estimate("gpt-4o-mini")
	if !ok || p.InputPerMTok != 0.15 || p.OutputPerMTok != 0.6 {
		t.Fatalf("catalogue: %+v %v", p, ok)
	}
	tb.SetOverride("c1", Override{Pricing: map[string]Price{"gpt-4o-mini": {InputPerMTok: 100, OutputPerMTok: 0.1}}})
	p, ok = tb.Estimate("openai-compatible/gpt-4o-mini-2024-07-18")
	if !ok || p.InputPerMTok != 100 || p.OutputPerMTok != 0.6 {
		t.Fatalf("the highest of the override and the catalogue: %+v %v", p, ok)
	}
	if _, ok := tb.Estimate("my-combo"); ok {
		t.Fatal("an unknown name has a price")
	}
}
