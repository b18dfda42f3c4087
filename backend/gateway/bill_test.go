package gateway

import (
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/pricing"
)

// TestBillUsage: what pricing reads of each upstream usage shape — every
// prompt token (Anthropic's input_tokens leaves out its cache reads and
// writes), cache writes and reasoning tokens.
func TestBillUsage(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		want        pricing.Usage
	}{
		{"openai", `{"prompt_tokens":100,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":30}}`,
			pricing.Usage{Prompt: 100, Output: 50, CacheRead: 40, Reasoning: 30}},
		{"responses", `{"input_tokens":100,"input_tokens_details":{"cached_tokens":40},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":30}}`,
			pricing.Usage{Prompt: 100, Output: 50, CacheRead: 40, Reasoning: 30}},
		{"anthropic", `{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":70,"output_tokens":5}`,
			pricing.Usage{Prompt: 100, Output: 5, CacheRead: 70, CacheWrite: 20}},
		{"anthropic without cache", `{"input_tokens":10,"cache_read_input_tokens":0,"output_tokens":5}`,
			pricing.Usage{Prompt: 10, Output: 5}},
		{"deepseek", `{"prompt_tokens":20,"completion_tokens":1,"prompt_cache_hit_tokens":16,"prompt_cache_miss_tokens":4}`,
			pricing.Usage{Prompt: 20, Output: 1, CacheRead: 16}},
		{"negative counts", `{"prompt_tokens":5,"cache_creation_input_tokens":-3,"completion_tokens_details":{"reasoning_tokens":-1}}`,
			pricing.Usage{Prompt: 5}},
	} {
		u := gjson.Parse(c.usage)
		if got, ref := billUsage(readUsageBill(u)), billUsageByGet(u, readUsage(u)); got != c.want || ref != c.want {
			t.Errorf("%s: %+v, by Get %+v, want %+v", c.name, got, ref, c.want)
		}
	}
}

// billUsageByGet is billUsage as it was: a Get per field, after the walk.
func billUsageByGet(u gjson.Result, c usageCounts) pricing.Usage {
	write := tokensOf(u.Get("cache_creation_input_tokens"))
	p := pricing.Usage{Prompt: c.in, Output: c.out, CacheRead: c.cached, CacheWrite: write,
		Reasoning: sumTokens(tokensOf(u.Get("completion_tokens_details.reasoning_tokens")), tokensOf(u.Get("output_tokens_details.reasoning_tokens")))}
	if write > 0 || u.Get("cache_read_input_tokens").Exists() {
		p.Prompt = sumTokens(p.Prompt, sumTokens(c.cached, write))
	}
	return p
}

// billCases are usage objects whose bill the walk must read as the Gets did:
// repeated keys (the first counts; a details object without the member lets
// a later one answer), escaped keys, strings and nulls.
var billCases = []string{
	`{"cache_creation_input_tokens":5,"cache_creation_input_tokens":9,"input_tokens":1}`,
	`{"completion_tokens_details":{},"completion_tokens_details":{"reasoning_tokens":7}}`,
	`{"completion_tokens_details":{"reasoning_tokens":3},"completion_tokens_details":{"reasoning_tokens":8}}`,
	`{"output_tokens_details":{"reasoning_tokens":"4"},"cache_read_input_tokens":null}`,
	`{"cache\u005fcreation_input_tokens":6,"prompt_tokens":2,"prompt_tokens_details":{"cached_tokens":1}}`,
	`{"output_tokens_details":[1],"output_tokens_details":{"reasoning_tokens":2}}`,
	`[{"cache_creation_input_tokens":1}]`,
	``,
}

// TestBillUsageOneWalk: the walk reads the bill as a Get per field read it.
func TestBillUsageOneWalk(t *testing.T) {
	for _, s := range billCases {
		u := gjson.Parse(s)
		if got, ref := billUsage(readUsageBill(u)), billUsageByGet(u, readUsage(u)); got != ref {
			t.Errorf("%s: walk %+v, by Get %+v", s, got, ref)
		}
	}
}

// FuzzBillUsage: the walk and a Get per field agree on any valid usage object.
func FuzzBillUsage(f *testing.F) {
	for _, s := range billCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !gjson.Valid(s) {
			return
		}
		u := gjson.Parse(s)
		if got, ref := billUsage(readUsageBill(u)), billUsageByGet(u, readUsage(u)); got != ref {
			t.Fatalf("%s: walk %+v, by Get %+v", s, got, ref)
		}
	})
}
