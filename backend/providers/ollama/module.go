package ollama

import (
	"context"
	"net/http"
	"time"

	"omniroute/backend/providers"
)

// ID is the catalogue id of Ollama's native API.
const ID = "ollama"

// Dialect is Ollama's native API, which the executor speaks in the OpenAI
// wire: /api/chat (NDJSON streams), /api/embed, /api/tags.
const Dialect providers.Dialect = "ollama"

// Module is what the gateway knows of Ollama's native API: its row, the
// executor and its model list (GET /api/tags).
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, Formats: []providers.Format{providers.FormatOpenAI},
		Rows: []providers.Provider{row()},
		NewExecutor: func(d providers.ExecDeps) providers.Executor {
			return New(d.Client, d.UserAgent, d.Now)
		},
		Models: &providers.ModelList{Shape: "models", Parse: ParseTags,
			Requests: func(ctx context.Context, t providers.Target, userAgent string, _ time.Time) ([]*http.Request, error) {
				req, err := ModelsRequest(ctx, t, userAgent)
				if err != nil {
					return nil, err
				}
				return []*http.Request{req}, nil
			}},
	}
}

// row is the catalogue row: the base URL is the server's root, whose chat
// carries thinking, images and tool calls as Ollama models emit them (the
// catalogue's `ollama-local` is the same server's OpenAI-compatible /v1).
// The executor serves chat and embeddings alone (ChatOnly): a legacy
// /v1/completions request reaches it translated through chat.
func row() providers.Provider {
	return providers.Provider{ID: ID, Name: "Ollama (local, native API)", Category: providers.CategoryLocal, Format: providers.FormatOpenAI, Dialect: Dialect,
		BaseURL: "http://127.0.0.1:11434", Aliases: []string{"ollama-native"}, Tools: true, Vision: true, Reasoning: true, ChatOnly: true,
		Doc: providers.Doc{Wire: "Ollama `/api/chat` (NDJSON stream), `/api/embed`", Discovery: "`GET /api/tags`"}}
}
