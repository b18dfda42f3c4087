package gemini

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// ResponseToChat translates a Gemini GenerateContentResponse into an OpenAI
// chat.completion (candidates[0]). model names the answer when the upstream
// reports no modelVersion. A prompt blocked by promptFeedback.blockReason is
// an empty answer with finish_reason "content_filter".
func ResponseToChat(body []byte, model string) ([]byte, error) {
	root, err := parseObject(body, "the upstream response")
	if err != nil {
		return nil, err
	}
	if e := root.Get("error"); e.IsObject() {
		return nil, inputErr("error", "the upstream answered with an error: %s", truncate(e.Get("message").String(), 300))
	}
	cands := root.Get("candidates")
	if cands.Exists() && cands.Type != gjson.Null && !cands.IsArray() {
		return nil, inputErr("candidates", "must be an array")
	}
	cand := firstCandidate(cands)
	blocked := pick(pick(root, "promptFeedback", "prompt_feedback"), "blockReason", "block_reason").String()
	if !cand.Exists() && blocked == "" {
		return nil, inputErr("candidates", "the upstream answer holds no candidate")
	}
	var text, reasoning strings.Builder
	var calls []chatToolCall
	parts := cand.Get("content.parts")
	each(parts, func(pi int, p gjson.Result) bool {
		pp := index("candidates[0].content.parts", pi)
		if !p.IsObject() {
			err = inputErr(pp, "must be a Part object")
			return false
		}
		if fc := pick(p, "functionCall", "function_call"); fc.Exists() {
			var tc chatToolCall
			if tc, err = functionCallToChat(fc, field(pp, "functionCall"), newID(syntheticIDPrefix)); err != nil {
				return false
			}
			tc.ExtraContent = signatureExtra(pick(p, "thoughtSignature", "thought_signature").String())
			calls = append(calls, tc)
			return true
		}
		if t := p.Get("text"); t.Type == gjson.String {
			if p.Get("thought").Bool() {
				reasoning.WriteString(t.Str)
			} else {
				text.WriteString(t.Str)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	msg := chatMessage{Role: "assistant", ReasoningContent: reasoning.String(), ToolCalls: calls}
	if text.Len() > 0 || len(calls) == 0 {
		msg.Content = text.String()
	}
	finish := finishReason(pick(cand, "finishReason", "finish_reason").String(), len(calls) > 0)
	if blocked != "" && !cand.Exists() {
		finish = "content_filter"
	}
	var t tokens
	t.readGemini(pick(root, "usageMetadata", "usage_metadata"))
	id := pick(root, "responseId", "response_id").String()
	if id == "" {
		id = newID("chatcmpl-")
	}
	if mv := pick(root, "modelVersion", "model_version").String(); mv != "" {
		model = mv
	}
	out := chatCompletion{
		ID:      id,
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   model,
		Choices: []chatChoice{{Message: answerMessage{chatMessage: msg}, Logprobs: json.RawMessage("null"), FinishReason: finish}},
		Usage:   appendChatUsage(nil, t),
	}
	return marshal(out)
}

// firstCandidate returns the candidate with index 0 (or the first one).
func firstCandidate(cands gjson.Result) gjson.Result {
	var first, zero gjson.Result
	each(cands, func(i int, c gjson.Result) bool {
		if !c.IsObject() {
			return true
		}
		if !first.Exists() {
			first = c
		}
		if idx := c.Get("index"); !idx.Exists() || idx.Int() == 0 {
			zero = c
			return false
		}
		return true
	})
	if zero.Exists() {
		return zero
	}
	return first
}

// ResponseFromChat translates an OpenAI chat.completion (first choice) into a
// Gemini GenerateContentResponse for a Gemini-native client.
func ResponseFromChat(body []byte) ([]byte, error) {
	root, err := parseObject(body, "the upstream response")
	if err != nil {
		return nil, err
	}
	if e := root.Get("error"); e.IsObject() {
		return nil, inputErr("error", "the upstream answered with an error: %s", truncate(e.Get("message").String(), 300))
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
	var parts []gemPart
	reasoning := m.Get("reasoning_content")
	if reasoning.Type != gjson.String {
		reasoning = m.Get("reasoning")
	}
	if reasoning.Type == gjson.String && reasoning.Str != "" {
		s := reasoning.Str
		parts = append(parts, gemPart{Text: &s, Thought: true})
	}
	text, err := textOf(m.Get("content"), "choices[0].message.content")
	if err != nil {
		return nil, err
	}
	refused := false
	if r := m.Get("refusal"); r.Type == gjson.String && r.Str != "" {
		refused = true // OpenAI's refusal ends a Gemini answer as SAFETY
		if text == "" {
			text = r.Str
		}
	}
	if text != "" {
		parts = append(parts, textPart(text))
	}
	calls := m.Get("tool_calls")
	if calls.Exists() && calls.Type != gjson.Null && !calls.IsArray() {
		return nil, inputErr("choices[0].message.tool_calls", "must be an array")
	}
	b := contentBuilder{names: map[string]string{}}
	dropped := false
	each(calls, func(i int, c gjson.Result) bool {
		var part gemPart
		if part, err = b.toolCallFromChat(c, index("choices[0].message.tool_calls", i)); err != nil {
			return false
		}
		if a := c.Get("function.arguments"); a.Type == gjson.String && !answerArgsValid(a.Str) {
			dropped = true // cut-off arguments: no invented args object
			return true
		}
		if part.FunctionCall.ID == "" {
			// A Gemini client matches its functionResponse by id when there is one.
			part.FunctionCall.ID = chatCallID(c.Get("id").String())
		}
		parts = append(parts, part)
		return true
	})
	if err != nil {
		return nil, err
	}
	if parts == nil {
		parts = []gemPart{textPart("")}
	}
	var t tokens
	t.readChat(root.Get("usage"))
	finish := geminiFinish(choice.Get("finish_reason").String())
	if dropped {
		finish = droppedCallFinish(choice.Get("finish_reason").String())
	}
	if refused {
		finish = refusalFinish
	}
	out := gemResponse{
		Candidates: []gemCandidate{{
			Content:      gemContent{Role: "model", Parts: parts},
			FinishReason: finish,
		}},
		UsageMetadata: appendGeminiUsage(nil, t),
		ModelVersion:  root.Get("model").String(),
		ResponseID:    root.Get("id").String(),
	}
	return marshal(out)
}

// chatCallID is the id a Gemini client gets for a Chat tool call: the call's
// own, or a fresh one when it had none.
func chatCallID(id string) string {
	if id == "" {
		return newID("call_")
	}
	return id
}
