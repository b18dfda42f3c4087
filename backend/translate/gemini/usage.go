package gemini

import (
	"strings"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
)

// tokens is usage in Gemini's terms: Prompt counts every prompt token (the
// cached ones included), Candidates the answer without thoughts, Thoughts the
// thinking tokens, Cached the part of Prompt served from the cache, ToolPrompt
// the tokens of tool-use prompts (Gemini-hosted tools).
type tokens struct {
	Prompt, Candidates, Thoughts, Cached, ToolPrompt int
}

// completion is OpenAI's completion_tokens: the answer and the reasoning.
func (t tokens) completion() int { return t.Candidates + t.Thoughts }

// prompt is OpenAI's prompt_tokens: the prompt and any tool-use prompt.
func (t tokens) prompt() int { return t.Prompt + t.ToolPrompt }

// public converts to translate.Usage (InputTokens is the prompt total,
// OutputTokens the answer with its reasoning).
func (t tokens) public() translate.Usage {
	return translate.Usage{
		InputTokens:     t.prompt(),
		OutputTokens:    t.completion(),
		CacheReadTokens: t.Cached,
		ReasoningTokens: t.Thoughts,
	}
}

func nonNeg(r gjson.Result) int {
	var f float64
	switch r.Type {
	case gjson.Number:
		f = r.Float()
	case gjson.String: // int64 fields may be written as strings
		f = r.Float()
	default:
		return 0
	}
	if f <= 0 {
		return 0
	}
	if f > 1<<40 {
		return 1 << 40
	}
	return int(f)
}

// readGemini reads a usageMetadata object, replacing what was known: each
// streamed chunk carries the running totals.
func (t *tokens) readGemini(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	t.Prompt = nonNeg(pick(u, "promptTokenCount", "prompt_token_count"))
	t.Candidates = nonNeg(pick(u, "candidatesTokenCount", "candidates_token_count"))
	t.Thoughts = nonNeg(pick(u, "thoughtsTokenCount", "thoughts_token_count"))
	t.Cached = nonNeg(pick(u, "cachedContentTokenCount", "cached_content_token_count"))
	t.ToolPrompt = nonNeg(pick(u, "toolUsePromptTokenCount", "tool_use_prompt_token_count"))
	if t.Cached > t.Prompt {
		t.Cached = t.Prompt
	}
}

// readChat reads an OpenAI usage object (replacing t), accepting the cache
// fields OpenAI, DeepSeek and LiteLLM use. completion_tokens includes the
// reasoning tokens, which Gemini counts apart.
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
	if cached > prompt {
		cached = prompt
	}
	completion := nonNeg(u.Get("completion_tokens"))
	reasoning := nonNeg(u.Get("completion_tokens_details.reasoning_tokens"))
	if reasoning > completion {
		reasoning = completion
	}
	*t = tokens{Prompt: prompt, Cached: cached, Candidates: completion - reasoning, Thoughts: reasoning}
}

// appendChatUsage appends an OpenAI usage object.
func appendChatUsage(dst []byte, t tokens) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = appendInt(dst, t.prompt())
	dst = append(dst, `,"completion_tokens":`...)
	dst = appendInt(dst, t.completion())
	dst = append(dst, `,"total_tokens":`...)
	dst = appendInt(dst, t.prompt()+t.completion())
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = appendInt(dst, t.Cached)
	dst = append(dst, `},"completion_tokens_details":{"reasoning_tokens":`...)
	dst = appendInt(dst, t.Thoughts)
	return append(dst, `}}`...)
}

// appendGeminiUsage appends a usageMetadata object; the optional counts are
// written only when non-zero, as Google does.
func appendGeminiUsage(dst []byte, t tokens) []byte {
	dst = append(dst, `{"promptTokenCount":`...)
	dst = appendInt(dst, t.Prompt)
	dst = append(dst, `,"candidatesTokenCount":`...)
	dst = appendInt(dst, t.Candidates)
	dst = append(dst, `,"totalTokenCount":`...)
	dst = appendInt(dst, t.Prompt+t.ToolPrompt+t.Candidates+t.Thoughts)
	if t.Cached > 0 {
		dst = append(dst, `,"cachedContentTokenCount":`...)
		dst = appendInt(dst, t.Cached)
	}
	if t.ToolPrompt > 0 {
		dst = append(dst, `,"toolUsePromptTokenCount":`...)
		dst = appendInt(dst, t.ToolPrompt)
	}
	if t.Thoughts > 0 {
		dst = append(dst, `,"thoughtsTokenCount":`...)
		dst = appendInt(dst, t.Thoughts)
	}
	return append(dst, '}')
}

// finishReason maps a Gemini finishReason to an OpenAI finish_reason;
// hasTools reports whether the answer holds function calls (Gemini says STOP
// for those).
func finishReason(reason string, hasTools bool) string {
	switch reason {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "LANGUAGE":
		return "content_filter"
	}
	// STOP, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER, unknown.
	if hasTools {
		return "tool_calls"
	}
	return "stop"
}

// answerArgsValid reports whether a Chat tool call's arguments, answered to a
// Gemini client, are what functionCall.args must be: a JSON object (or
// nothing, {}). Arguments cut off at max tokens, or otherwise not an object,
// are not invented into one: the call is dropped (droppedCallFinish).
func answerArgsValid(args string) bool {
	t := strings.TrimSpace(args)
	return t == "" || jsonv.Valid([]byte(t)) && gjson.Parse(t).IsObject()
}

// droppedCallFinish is the finishReason of an answer that dropped a tool
// call whose arguments were not an object: MAX_TOKENS when the upstream was
// cut off (finish_reason "length"), else Gemini's MALFORMED_FUNCTION_CALL.
func droppedCallFinish(finish string) string {
	if finish == "length" {
		return "MAX_TOKENS"
	}
	return "MALFORMED_FUNCTION_CALL"
}

// refusalFinish is the finishReason of an answer the upstream refused
// (OpenAI's message.refusal / delta.refusal): Gemini's safety stop, as a
// Gemini client reads a blocked answer.
const refusalFinish = "SAFETY"

// geminiFinish maps an OpenAI finish_reason to a Gemini finishReason.
func geminiFinish(finish string) string {
	switch finish {
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return "STOP" // stop, tool_calls, function_call, unknown
}
