package gateway

import (
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/providers/codeassist"
	"omniroute/backend/providers/vertex"
	"omniroute/backend/translate"
)

// TestEmbeddingsCodec: which upstream wire an embeddings request gets per
// connection, and which are passed over (FORMAT_NOT_SUPPORTED).
func TestEmbeddingsCodec(t *testing.T) {
	for _, tt := range []struct {
		name        string
		client      translate.Format
		format      providers.Format
		dialect     providers.Dialect
		upstream    translate.Format
		unsupported bool
		path        string
	}{
		{"OpenAI-compatible", translate.Embeddings, providers.FormatOpenAI, "", translate.Embeddings, false, "/embeddings"},
		{"Gemini API", translate.Embeddings, providers.FormatGemini, "", translate.GeminiEmbed, false, providers.GeminiBatchEmbed},
		{"Ollama client to Gemini", translate.OllamaEmbed, providers.FormatGemini, "", translate.GeminiEmbed, false, providers.GeminiBatchEmbed},
		{"Vertex Gemini", translate.Embeddings, providers.FormatGemini, vertex.Dialect, translate.Gemini, true, ""},
		{"Code Assist", translate.Embeddings, providers.FormatGemini, codeassist.Dialect, translate.Gemini, true, ""},
		{"Anthropic", translate.Embeddings, providers.FormatAnthropic, "", translate.Messages, true, ""},
		{"Responses", translate.Embeddings, providers.FormatResponses, "", translate.Responses, true, ""},
		{"chat to Gemini stays chat", translate.Chat, providers.FormatGemini, "", translate.Gemini, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCodec(tt.client, tt.format)
			if c.upstream == translate.GeminiEmbed {
				geminiEmbedTarget(&c, tt.dialect, "gemini-embedding-001")
				if tt.dialect == "" && c.gemini.model != "gemini-embedding-001" {
					t.Fatalf("model %q", c.gemini.model)
				}
			}
			if c.upstream != tt.upstream || c.unsupported() != tt.unsupported || c.path() != tt.path {
				t.Fatalf("upstream %q unsupported %v path %q", c.upstream, c.unsupported(), c.path())
			}
		})
	}
}
