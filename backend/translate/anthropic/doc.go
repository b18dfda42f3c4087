// Package anthropic translates between OpenAI Chat Completions (the gateway's
// hub format) and the Anthropic Messages API, in both directions, for
// requests, whole responses and SSE streams.
//
// Bodies are raw JSON bytes in and out. Input that is not what the wire format
// allows is reported as an *InputError (the caller answers 400, or 502 when the
// input was an upstream answer); an upstream error inside a stream is reported
// as an *UpstreamStreamError, never translated into a normal end.
//
// # Mapping decisions
//
// System prompts: Anthropic's top-level system (a string or text blocks) becomes
// one leading "system" message whose content is the blocks' text joined with
// "\n\n" (one message, because many OpenAI-compatible chat templates accept only
// one); Claude Code's billing attribution block is left out. A message with
// role "system" inside messages (Claude Code's mid-conversation system
// messages) becomes a system message at the same position, merged into the
// leading one when nothing stands between them. In the other direction every "system" or "developer" message, wherever
// it stands, is hoisted into system: a string for one message, text blocks for
// several.
//
// Content: one text block ⇄ a string; anything else ⇄ an array of parts. Images:
// base64 sources ⇄ data: URLs, url sources ⇄ URLs. PDFs: base64 document blocks
// ⇄ "file" parts with a data: URL. Images and documents inside an Anthropic
// tool_result (OpenAI tool messages carry text only) move to a user message
// right after the tool messages, labelled with the tool_use_id. A tool_result
// with is_error=true is sent as a tool message whose text starts with "Error: ".
// Sources that cannot cross (file ids, audio, non-base64 data URLs) are errors.
//
// Tools: ids are copied exactly in both directions and only generated when the
// input has none. Tool-call arguments that are not a JSON object cannot be an
// Anthropic input; they become {"_arguments": "<the raw string>"} and turn back
// into the raw string on the way to OpenAI, so nothing is lost. tool_choice:
// auto⇄auto, any⇄required, none⇄none, tool{name}⇄{type:function,function:{name}};
// disable_parallel_tool_use ⇄ parallel_tool_calls=false.
//
// Stop reasons: end_turn⇄stop, stop_sequence→stop, max_tokens⇄length,
// model_context_window_exceeded→length, tool_use⇄tool_calls, refusal⇄content_filter,
// pause_turn→stop; an OpenAI answer with a refusal (message.refusal, streamed
// delta.refusal) ends with stop_reason "refusal", its text the refusal's
// explanation. OpenAI does not say which stop sequence matched, so
// stop→end_turn (or tool_use when the answer holds tool calls, as some
// OpenAI-compatible servers report "stop" with tool calls).
//
// Usage: OpenAI's prompt_tokens counts every prompt token; Anthropic splits
// them into input_tokens (uncached), cache_read_input_tokens and
// cache_creation_input_tokens. So prompt_tokens = input + cache read + cache
// creation, prompt_tokens_details.cached_tokens = cache read, and the cache
// creation count travels as prompt_tokens_details.cache_write_tokens (the field
// OpenRouter uses) so a round trip loses nothing. Back from OpenAI,
// input_tokens = prompt_tokens − cached − cache write (never below 0).
// completion_tokens ⇄ output_tokens; Anthropic has no reasoning-token count,
// so completion_tokens_details.reasoning_tokens is only kept in Usage().
// translate.Usage.InputTokens is the OpenAI-style total prompt count, with the
// cache counts as its parts.
//
// Thinking: Anthropic thinking blocks and thinking_delta events ⇄ OpenAI
// reasoning_content (also read from "reasoning", as OpenRouter sends it).
// Signed thinking and redacted_thinking blocks travel in Chat as LiteLLM's
// thinking_blocks beside reasoning_content: on a request's assistant
// message (to Anthropic unchanged), on an answer's message, and streamed as
// delta.thinking_blocks (a signature → signature_delta ending the thinking
// block, a redacted block → a redacted_thinking block with its data). Reasoning text without a signature cannot be
// replayed to Anthropic, so it is dropped from request history; when thinking
// is on and the last assistant turn called tools without a thinking block,
// thinking is switched off for that request (Anthropic would reject it).
//
// Thinking budget ⇄ reasoning_effort: budget_tokens < 8192 → "low",
// < 24576 → "medium", otherwise "high" (Claude Code's "think" = 4000,
// "think hard" = 10000, "ultrathink" = 31999 land on low/medium/high). Back:
// minimal → 1024 (Anthropic's minimum), low → 4096, medium → 16384,
// high/xhigh/max → 24576, so each effort survives a round trip; "none"
// disables thinking. OpenRouter's reasoning.max_tokens, when given, is the
// budget itself. Anthropic needs max_tokens > budget_tokens: a missing
// max_tokens becomes budget + 4096, a too small one shrinks the budget (and
// disables thinking under the 1024 minimum). Thinking also forbids forced tool
// use and sampling changes, so it is dropped under tool_choice required/named,
// and temperature/top_p are dropped while it is on.
//
// Streams: Anthropic → Chat sends a role chunk, content / reasoning_content /
// tool_calls deltas (tool call indexes counted per tool_use block; a tool call
// whose input never streamed gets "{}"), one finish chunk, then — only after
// message_stop — a usage chunk with "choices": [] and "data: [DONE]". Chat →
// Anthropic sends message_start and a ping on the first chunk, one block at a
// time (thinking, text, tool_use; a block is stopped before the next starts),
// a ping for each upstream keep-alive comment, and message_delta (stop_reason
// and the full usage, input included, as OpenAI reports it only at the end)
// plus message_stop after [DONE], or at End after a finish_reason. Anthropic
// "ping" events have no Chat form and are dropped. Upstream errors inside a
// stream are returned from Event, never turned into a normal end.
//
// Limits: Anthropic requires max_tokens, so a Chat request without
// max_tokens/max_completion_tokens gets 4096. Chat requests carry max_tokens
// (the field every OpenAI-compatible server understands). OpenAI temperature
// above 1 is clamped to Anthropic's maximum of 1. n > 1 is an error. Streaming
// Chat requests always ask for stream_options.include_usage so usage is never
// lost. Fields with no counterpart (top_k, response_format, seed, penalties,
// logprobs, cache_control, citations, server tools) are dropped, as are unknown
// fields.
package anthropic
