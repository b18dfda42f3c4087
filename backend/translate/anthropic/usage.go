package anthropic

import (
	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
)

// tokens is usage in neutral form: Input is uncached prompt tokens (Anthropic's
// input_tokens); the prompt total is Input+CacheRead+CacheWrite.
type tokens struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int
}

func (t tokens) prompt() int { return t.Input + t.CacheRead + t.CacheWrite }

// public converts to translate.Usage (whose InputTokens is the prompt total).
func (t tokens) public() translate.Usage {
	return translate.Usage{
		InputTokens:      t.prompt(),
		OutputTokens:     t.Output,
		CacheReadTokens:  t.CacheRead,
		CacheWriteTokens: t.CacheWrite,
		ReasoningTokens:  t.Reasoning,
	}
}

func nonNeg(r gjson.Result) int {
	if r.Type != gjson.Number {
		return 0
	}
	f := r.Float()
	if f <= 0 {
		return 0
	}
	if f > 1<<40 {
		return 1 << 40
	}
	return int(f)
}

// readAnthropicUsage merges an Anthropic usage object into t: fields present
// replace what was known (message_delta counts are cumulative).
func (t *tokens) readAnthropic(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	if r := u.Get("input_tokens"); r.Type == gjson.Number {
		t.Input = nonNeg(r)
	}
	if r := u.Get("output_tokens"); r.Type == gjson.Number {
		t.Output = nonNeg(r)
	}
	if r := u.Get("cache_read_input_tokens"); r.Type == gjson.Number {
		t.CacheRead = nonNeg(r)
	}
	if r := u.Get("cache_creation_input_tokens"); r.Type == gjson.Number {
		t.CacheWrite = nonNeg(r)
	}
}

// readChat reads an OpenAI usage object (replacing t), accepting the cache
// fields OpenAI, OpenRouter, DeepSeek and LiteLLM use.
func (t *tokens) readChat(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	prompt := nonNeg(u.Get("prompt_tokens"))
	cached := nonNeg(u.Get("prompt_tokens_details.cached_tokens"))
	if cached == 0 {
		cached = nonNeg(u.Get("prompt_cache_hit_tokens")) // DeepSeek
	}
	if cached == 0 {
		cached = nonNeg(u.Get("cache_read_input_tokens")) // LiteLLM
	}
	write := nonNeg(u.Get("prompt_tokens_details.cache_write_tokens"))
	if write == 0 {
		write = nonNeg(u.Get("cache_creation_input_tokens")) // LiteLLM
	}
	if cached > prompt {
		cached = prompt
	}
	if write > prompt-cached {
		write = prompt - cached
	}
	t.Input = prompt - cached - write
	t.CacheRead = cached
	t.CacheWrite = write
	t.Output = nonNeg(u.Get("completion_tokens"))
	t.Reasoning = nonNeg(u.Get("completion_tokens_details.reasoning_tokens"))
}

// appendChatUsage appends an OpenAI usage object.
func appendChatUsage(dst []byte, t tokens) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = appendInt(dst, t.prompt())
	dst = append(dst, `,"completion_tokens":`...)
	dst = appendInt(dst, t.Output)
	dst = append(dst, `,"total_tokens":`...)
	dst = appendInt(dst, t.prompt()+t.Output)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = appendInt(dst, t.CacheRead)
	if t.CacheWrite > 0 {
		dst = append(dst, `,"cache_write_tokens":`...)
		dst = appendInt(dst, t.CacheWrite)
	}
	dst = append(dst, '}')
	if t.Reasoning > 0 {
		dst = append(dst, `,"completion_tokens_details":{"reasoning_tokens":`...)
		dst = appendInt(dst, t.Reasoning)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendAnthropicUsage appends an Anthropic usage object.
func appendAnthropicUsage(dst []byte, t tokens) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = appendInt(dst, t.Input)
	dst = append(dst, `,"cache_creation_input_tokens":`...)
	dst = appendInt(dst, t.CacheWrite)
	dst = append(dst, `,"cache_read_input_tokens":`...)
	dst = appendInt(dst, t.CacheRead)
	dst = append(dst, `,"output_tokens":`...)
	dst = appendInt(dst, t.Output)
	return append(dst, '}')
}

// finishReason maps an Anthropic stop_reason to an OpenAI finish_reason.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, pause_turn, unknown
}

// stopReason maps an OpenAI finish_reason to an Anthropic stop_reason;
// hasTools reports whether the answer holds tool calls.
func stopReason(finish string, hasTools bool) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	if hasTools {
		return "tool_use"
	}
	return "end_turn"
}
