package gateway

import (
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/translate"
)

// TestCompletionsCodec (issue 41, M6): a legacy completion passes through to
// an OpenAI-compatible upstream's /completions, and goes through chat to a
// provider whose executor serves chat alone (Provider.ChatOnly) as to a
// non-OpenAI wire; embeddings to a provider that serves none are passed
// over (Provider.NoEmbeddings); other client formats are left as they were.
func TestCompletionsCodec(t *testing.T) {
	for _, tt := range []struct {
		name     string
		client   translate.Format
		p        providers.Provider
		upstream translate.Format
		path     string
	}{
		{"OpenAI-compatible", translate.Completions, providers.Provider{Format: providers.FormatOpenAI}, translate.Completions, "/completions"},
		{"chat only", translate.Completions, providers.Provider{Format: providers.FormatOpenAI, ChatOnly: true}, translate.Chat, ""},
		{"Anthropic", translate.Completions, providers.Provider{Format: providers.FormatAnthropic}, translate.Messages, ""},
		{"chat client, chat only", translate.Chat, providers.Provider{Format: providers.FormatOpenAI, ChatOnly: true}, translate.Chat, ""},
		{"embeddings, chat only", translate.Embeddings, providers.Provider{Format: providers.FormatOpenAI, ChatOnly: true}, translate.Embeddings, "/embeddings"},
		{"embeddings, no embeddings", translate.Embeddings, providers.Provider{Format: providers.FormatOpenAI, ChatOnly: true, NoEmbeddings: true}, translate.Chat, ""},
		{"completions, no embeddings", translate.Completions, providers.Provider{Format: providers.FormatOpenAI, NoEmbeddings: true}, translate.Completions, "/completions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := codecFor(tt.client, &tt.p, "m")
			unsupported := tt.p.NoEmbeddings && tt.client == translate.Embeddings
			if c.upstream != tt.upstream || c.path() != tt.path || c.unsupported() != unsupported {
				t.Fatalf("upstream %q path %q unsupported %v", c.upstream, c.path(), c.unsupported())
			}
		})
	}
}
