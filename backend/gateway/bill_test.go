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
		if got := billUsage(u, readUsage(u)); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
