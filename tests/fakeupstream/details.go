package fakeupstream

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"
)

// ModeReasoningDetails answers an OpenAI chat request the way OpenRouter's
// reference ("Reasoning Tokens": "Reasoning Details API Shape", "Preserving
// Reasoning") shows a Claude model that reasons: the JSON answer's message
// carries "reasoning" (ReasoningText) and reasoning_details, a signed
// reasoning.text entry (ReasoningText, DetailsSignature) then a
// reasoning.encrypted one (DetailsEncrypted), both in the
// "anthropic-claude-v1" format, before the usual text or tool call; a
// stream sends them as choices[].delta.reasoning_details chunks: the text in
// pieces (signature null), then the signature, then the encrypted entry.
// Like Anthropic's thinking with tools, a request whose assistant turn with
// tool_calls does not give the entries back unmodified, in order
// (DetailsReplayed), is answered 400 (DetailsMissingBody). The requests
// are recorded as any other (LastRequest).
const ModeReasoningDetails Mode = "reasoning_details"

// ModeReasoningOpaque answers an OpenAI chat request the way GitHub
// Copilot's chat API carries a model's reasoning, as Copilot's own client
// (the Copilot Chat extension for VS Code) reads and sends it: the message
// carries reasoning_text (ReasoningText) and reasoning_opaque
// (CopilotOpaque) before the usual text or tool call; a stream sends the
// text as delta.reasoning_text pieces, then a delta with the
// reasoning_opaque. A request whose assistant turn with tool_calls does not
// carry that reasoning_opaque (and text) back is answered 400
// (OpaqueMissingBody).
const ModeReasoningOpaque Mode = "reasoning_opaque"

// CopilotOpaque is ModeReasoningOpaque's reasoning_opaque.
const CopilotOpaque = "b3BhcXVlLXJlYXNvbmluZy1zdGF0ZS0wMDE="

// OpaqueMissingBody is ModeReasoningOpaque's answer to a tool-calling turn
// given back without its reasoning_opaque.
const OpaqueMissingBody = `{"error":{"message":"an assistant turn with tool_calls must carry its reasoning_opaque","code":"invalid_request_body"}}`

// OpaqueReplayed reports whether every assistant message with tool_calls of
// an OpenAI chat body carries the fake's reasoning_opaque and reasoning_text.
func OpaqueReplayed(body []byte) bool {
	ok := true
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() == "assistant" && m.Get("tool_calls").IsArray() &&
			(m.Get("reasoning_opaque").String() != CopilotOpaque || m.Get("reasoning_text").String() != ReasoningText) {
			ok = false
		}
		return ok
	})
	return ok
}

// The fake's reasoning_details values.
const (
	DetailsFormat    = "anthropic-claude-v1"
	DetailsSignature = "ErUBCkYIBRgCIkAtYx6tR8iKPPGpd2t9cy3Pl2hRxc3f6dGFkDKe6qJmSP2n1VUhAL+WYs2BgUg0oqsNBR1ETYQGKMb8hcfIbjPzEgw="
	DetailsEncrypted = "eyJlbmNyeXB0ZWQiOiJ0cnVlIiwiY29udGVudCI6IltSRURBQ1RFRF0ifQ=="
)

// DetailsMissingBody is ModeReasoningDetails's answer to a tool-calling turn
// given back without its reasoning_details.
const DetailsMissingBody = `{"error":{"message":"Provider returned error: an assistant turn with tool_calls must give its reasoning_details back unmodified","code":400}}`

// details are the entries the fake answers, each as JSON.
func details() []map[string]any {
	return []map[string]any{
		{"type": "reasoning.text", "text": ReasoningText, "signature": DetailsSignature, "id": nil, "format": DetailsFormat, "index": 0},
		{"type": "reasoning.encrypted", "data": DetailsEncrypted, "id": nil, "format": DetailsFormat, "index": 1},
	}
}

// DetailsReplayed reports whether every assistant message with tool_calls
// of an OpenAI chat body gives the fake's reasoning_details back: the same
// entries in the same order, their type, text, signature, data and format
// unchanged.
func DetailsReplayed(body []byte) bool {
	want := details()
	ok := true
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() != "assistant" || !m.Get("tool_calls").IsArray() {
			return true
		}
		got := m.Get("reasoning_details").Array()
		if len(got) != len(want) {
			ok = false
			return false
		}
		for i, w := range want {
			for _, k := range []string{"type", "text", "signature", "data", "format"} {
				v, has := w[k]
				if !has {
					v = ""
				}
				if s, _ := v.(string); got[i].Get(k).String() != s {
					ok = false
					return false
				}
			}
		}
		return true
	})
	return ok
}

// buildDetailsAnswer renders ModeReasoningDetails's answer for shape s
// (text: the assistant text of a text answer) in n content pieces.
// With opaque, the reasoning is ModeReasoningOpaque's instead.
func buildDetailsAnswer(model string, s shape, text string, n int, opaque bool) *answer {
	finish := "stop"
	msg := map[string]any{"role": "assistant", "content": text, "reasoning": ReasoningText, "reasoning_details": details()}
	if opaque {
		msg = map[string]any{"role": "assistant", "content": text, "reasoning_text": ReasoningText, "reasoning_opaque": CopilotOpaque}
	}
	var call map[string]any
	args := ToolArguments
	if s.args != "" {
		args = s.args
	}
	if s.kind == kindToolCall {
		finish = "tool_calls"
		msg["content"] = ""
		call = map[string]any{"id": ToolCallIDOpenAI, "type": "function", "function": map[string]any{"name": s.tool, "arguments": args}}
		msg["tool_calls"] = []any{call}
	}
	pieces := splitContent(ReasoningText, n)
	usage := map[string]any{"prompt_tokens": fakePromptTokens, "completion_tokens": 2 * n, "total_tokens": fakePromptTokens + 2*n,
		"completion_tokens_details": map[string]any{"reasoning_tokens": n}}
	a := &answer{body: mustJSON(map[string]any{"id": "gen-fake", "object": "chat.completion", "created": fakeCreated, "model": model,
		"provider": "Anthropic", "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})}
	a.bodyLen = []string{strconv.Itoa(len(a.body))}

	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "gen-fake", "object": "chat.completion.chunk", "created": fakeCreated, "model": model,
			"provider": "Anthropic", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	var b bytes.Buffer
	sseData(&b, chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	a.head = bytes.Clone(b.Bytes())
	add := func(delta map[string]any) {
		b.Reset()
		sseData(&b, chunk(delta, nil))
		a.chunks = append(a.chunks, bytes.Clone(b.Bytes()))
	}
	if opaque {
		for _, p := range pieces {
			add(map[string]any{"reasoning_text": p})
		}
		add(map[string]any{"reasoning_opaque": CopilotOpaque})
	} else {
		for _, p := range pieces {
			add(map[string]any{"reasoning_details": []any{map[string]any{"type": "reasoning.text", "text": p, "signature": nil, "id": nil, "format": DetailsFormat, "index": 0}}})
		}
		add(map[string]any{"reasoning_details": []any{map[string]any{"type": "reasoning.text", "text": "", "signature": DetailsSignature, "id": nil, "format": DetailsFormat, "index": 0}}})
		add(map[string]any{"reasoning_details": []any{details()[1]}})
	}
	if s.kind == kindToolCall {
		zero := 0
		add(map[string]any{"tool_calls": []any{map[string]any{"index": zero, "id": ToolCallIDOpenAI, "type": "function", "function": map[string]any{"name": s.tool, "arguments": ""}}}})
		for _, p := range splitContent(args, n) {
			add(map[string]any{"tool_calls": []any{map[string]any{"index": zero, "function": map[string]any{"arguments": p}}}})
		}
	} else {
		for _, p := range splitContent(text, n) {
			add(map[string]any{"content": p})
		}
	}
	b.Reset()
	sseData(&b, chunk(map[string]any{}, finish))
	if s.usage {
		sseData(&b, map[string]any{"id": "gen-fake", "object": "chat.completion.chunk", "created": fakeCreated, "model": model,
			"choices": []any{}, "usage": usage})
	}
	b.WriteString(openAIDone)
	a.tail = bytes.Clone(b.Bytes())
	a.done = len(openAIDone)
	a.parts = splitBytes(a.body, len(a.chunks))
	return a
}
