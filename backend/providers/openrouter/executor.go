package openrouter

import (
	"context"
	"net/http"

	"omniroute/backend/providers"
	"omniroute/backend/providers/openai"
)

// Dialect is OpenRouter's Chat Completions: the OpenAI wire, whose answers
// carry reasoning_details (details.go) that the executor also gives the
// gateway's Chat pivot as thinking_blocks.
const Dialect providers.Dialect = "openrouter"

// Executor sends calls as the OpenAI executor does and reads the
// reasoning_details of a chat answer (JSON or stream) into the pivot's
// thinking_blocks and reasoning_content (Answer, Chunk); everything else
// passes as it is.
type Executor struct {
	wire providers.Executor
}

// NewExecutor is the module's executor over the wiring place's client.
func NewExecutor(d providers.ExecDeps) providers.Executor {
	return &Executor{wire: openai.New(d.Client, d.UserAgent)}
}

// Do implements providers.Executor.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	resp, err := e.wire.Do(ctx, t, c)
	if err != nil || c.Path != "" {
		return resp, err
	}
	return providers.RewriteChat(resp, c.Stream, Answer, Chunk), nil
}
