package openrouter

import (
	"omniroute/backend/providers"
	"omniroute/backend/providers/openai"
)

// Dialect is OpenRouter's Chat Completions: the OpenAI wire, whose answers
// carry reasoning_details (details.go) that the executor also gives the
// gateway's Chat pivot as thinking_blocks.
const Dialect providers.Dialect = "openrouter"

// NewExecutor is the module's executor over the wiring place's client: it
// sends calls as the OpenAI executor does and reads the reasoning_details of
// a chat answer (JSON or stream) into the pivot's thinking_blocks and
// reasoning_content (Answer, Chunk); everything else passes as it is.
func NewExecutor(d providers.ExecDeps) providers.Executor {
	return providers.ChatRewriter{Wire: openai.New(d.Client, d.UserAgent), Answer: Answer, Chunk: Chunk}
}
