package anthropic

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// ResponseToChat translates an Anthropic message response into an OpenAI
// chat.completion, naming the model the upstream reports.
func ResponseToChat(body []byte) ([]byte, error) {
	root, err := parseObject(body, "the upstream response")
	if err != nil {
		return nil, err
	}
	if root.Get("type").String() == "error" || root.Get("error").IsObject() {
		return nil, inputErr("error", "the upstream answered with an error: %s", root.Get("error.message").String())
	}
	content := root.Get("content")
	if content.Exists() && content.Type != gjson.Null && !content.IsArray() {
		return nil, inputErr("content", "must be an array")
	}
	var text, reasoning strings.Builder
	var calls []chatToolCall
	var signed []anthBlock
	each(content, func(i int, b gjson.Result) bool {
		p := index("content", i)
		if !b.IsObject() {
			err = inputErr(p, "must be a content block")
			return false
		}
		switch b.Get("type").String() {
		case "text":
			text.WriteString(b.Get("text").String())
		case "thinking":
			t := b.Get("thinking").String()
			reasoning.WriteString(t)
			if sig := b.Get("signature").String(); sig != "" {
				signed = append(signed, anthBlock{Type: "thinking", Thinking: &t, Signature: &sig})
			}
		case "redacted_thinking":
			if d := b.Get("data").String(); d != "" {
				signed = append(signed, anthBlock{Type: "redacted_thinking", Data: d})
			}
		case "tool_use":
			var tc chatToolCall
			if tc, err = toolUseToChat(b, p); err != nil {
				return false
			}
			calls = append(calls, tc)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	msg := chatMessage{Role: "assistant", ReasoningContent: reasoning.String(), ToolCalls: calls, ThinkingBlocks: signed}
	if text.Len() > 0 || len(calls) == 0 {
		msg.Content = text.String()
	}
	var t tokens
	t.readAnthropic(root.Get("usage"))
	id := root.Get("id").String()
	if id == "" {
		id = newID("msg_")
	}
	out := chatCompletion{
		ID:      id,
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   root.Get("model").String(),
		Choices: []chatChoice{{
			Message:      answerMessage{chatMessage: msg},
			Logprobs:     json.RawMessage("null"),
			FinishReason: finishReason(root.Get("stop_reason").String()),
		}},
		Usage: appendChatUsage(nil, t),
	}
	return marshal(out)
}

// ResponseFromChat translates an OpenAI chat.completion into an Anthropic
// message response (first choice), naming the model the upstream reports.
func ResponseFromChat(body []byte) ([]byte, error) {
	root, err := parseObject(body, "the upstream response")
	if err != nil {
		return nil, err
	}
	if e := root.Get("error"); e.IsObject() {
		return nil, inputErr("error", "the upstream answered with an error: %s", e.Get("message").String())
	}
	choices := root.Get("choices")
	if !choices.IsArray() {
		return nil, inputErr("choices", "must be an array")
	}
	choice := choices.Get("0")
	if !choice.IsObject() {
		return nil, inputErr("choices", "must hold at least one choice")
	}
	m := choice.Get("message")
	if !m.IsObject() {
		return nil, inputErr("choices[0].message", "must be an object")
	}
	content, signed := thinkingBlocks(m.Get("thinking_blocks"))
	reasoning := m.Get("reasoning_content")
	if reasoning.Type != gjson.String {
		reasoning = m.Get("reasoning")
	}
	if reasoning.Type == gjson.String && reasoning.Str != "" && !signed {
		s, sig := reasoning.Str, ""
		content = append([]anthBlock{{Type: "thinking", Thinking: &s, Signature: &sig}}, content...)
	}
	text, err := textOf(m.Get("content"), "choices[0].message.content")
	if err != nil {
		return nil, err
	}
	refused := false
	if r := m.Get("refusal"); r.Type == gjson.String && r.Str != "" {
		refused = true // OpenAI's refusal is Anthropic's stop_reason "refusal"
		if text == "" {
			text = r.Str
		}
	}
	if text != "" {
		content = append(content, textBlock(text))
	}
	calls := m.Get("tool_calls")
	if calls.Exists() && calls.Type != gjson.Null && !calls.IsArray() {
		return nil, inputErr("choices[0].message.tool_calls", "must be an array")
	}
	hasTools := false
	each(calls, func(i int, c gjson.Result) bool {
		var blk anthBlock
		if blk, err = toolCallFromChat(c, index("choices[0].message.tool_calls", i)); err != nil {
			return false
		}
		hasTools = true
		content = append(content, blk)
		return true
	})
	if err != nil {
		return nil, err
	}
	if content == nil {
		content = []anthBlock{}
	}
	var t tokens
	t.readChat(root.Get("usage"))
	id := root.Get("id").String()
	if id == "" {
		id = newID("msg_")
	}
	out := anthResponse{
		ID:         id,
		Type:       "message",
		Role:       "assistant",
		Model:      root.Get("model").String(),
		Content:    content,
		StopReason: stopReason(choice.Get("finish_reason").String(), hasTools),
		Usage:      appendAnthropicUsage(nil, t),
	}
	if refused {
		out.StopReason = "refusal"
	}
	return marshal(out)
}

// thinkingBlocks reads a Chat message's thinking_blocks (LiteLLM's form of
// Anthropic's blocks, as an upstream that signs its reasoning answers):
// thinking blocks with their signature, redacted_thinking blocks with their
// data. signed reports a thinking block among them, whose text then stands
// for reasoning_content's. Entries of another shape are left out.
func thinkingBlocks(tb gjson.Result) (out []anthBlock, signed bool) {
	each(tb, func(_ int, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "thinking":
			text, sig := b.Get("thinking").String(), b.Get("signature").String()
			if sig != "" {
				out = append(out, anthBlock{Type: "thinking", Thinking: &text, Signature: &sig})
				signed = true
			}
		case "redacted_thinking":
			if d := b.Get("data").String(); d != "" {
				out = append(out, anthBlock{Type: "redacted_thinking", Data: d})
			}
		}
		return true
	})
	return out, signed
}
