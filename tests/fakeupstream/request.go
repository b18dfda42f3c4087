package fakeupstream

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// answerKind is the kind of answer a request gets.
type answerKind uint8

const (
	kindText       answerKind = iota // Content(key)
	kindToolCall                     // a call to the request's first tool
	kindToolResult                   // ToolResultText of the last message's tool result
	kindContinue                     // the rest of the answer (continued) after an assistant prefill
)

// shape is what a request asks for beyond its model: the kind of answer,
// reasoning, and usage in the stream. It is part of the answer cache key.
type shape struct {
	kind   answerKind
	tool   string // the called tool's name, for kindToolCall
	args   string // its arguments when scripted (SetToolCalls), else ToolArguments
	result string // tool result content, for kindToolResult; the prefill, for kindContinue
	// continued is, for kindContinue, the answer the prefill begins: the
	// reply to the tool result before it, or (none) Content(key).
	continued continuedAnswer
	reasoning bool // prepend reasoning
	usage     bool // OpenAI stream_options.include_usage: send a usage chunk
}

// continuedAnswer is the answer a prefill continues: ToolResultText of the
// tool result before it (afterTool), else the key's Content.
type continuedAnswer struct {
	toolResult string
	afterTool  bool
	// whole, when set, is the whole answer whatever the key (ModeHonourPrefill:
	// the prefill followed by PrefillContinuation).
	whole string
}

// text is the whole answer, for the key label.
func (c continuedAnswer) text(label string) string {
	if c.whole != "" {
		return c.whole
	}
	if c.afterTool {
		return ToolResultText(c.toolResult)
	}
	return Content(label)
}

// request is what the fake reads from a completion request body.
type request struct {
	model  string
	stream bool
	shape  shape
	// prefill is set when an Anthropic request ends with an assistant message
	// (its text): the model is asked to continue that message.
	prefill bool
	// badTools is set when tools is a non-empty array whose first element
	// has no name where the format puts it (OpenAI tools[0].function.name,
	// Anthropic tools[0].name): the provider would answer 400, and a gateway
	// translating between the formats should not send that.
	badTools bool
}

// parseRequest reads a completion request body in format; ok is false when
// the body is not valid JSON. scripted maps tool names to the arguments the
// fake calls them with (SetToolCalls).
func parseRequest(format Format, body []byte, scripted map[string]string) (req request, ok bool) {
	if !gjson.ValidBytes(body) {
		return req, false
	}
	res := gjson.GetManyBytes(body, "model", "stream", "tools", "messages",
		"reasoning_effort", "thinking.type", "stream_options.include_usage", "continue_final_message")
	req.model, req.stream = res[0].String(), res[1].Bool()
	tools, messages := res[2], res[3]
	if format == FormatAnthropic {
		req.shape.reasoning = res[5].String() == "enabled"
	} else {
		req.shape.reasoning = res[4].Type != gjson.Null && res[4].String() != ""
		req.shape.usage = res[6].Bool()
	}
	// A trailing assistant message is continued by Anthropic, and by an
	// OpenAI-compatible server when the request asks as vLLM's
	// (continue_final_message) or DeepSeek's ("prefix": true) do; OpenAI
	// itself answers it with a new turn.
	last := lastElement(messages)
	openAIPrefill := format == FormatOpenAI && (res[7].Bool() || last.Get("prefix").Bool())
	if (format == FormatAnthropic || openAIPrefill) && last.Get("role").String() == "assistant" {
		req.prefill = true
		req.shape.kind, req.shape.result = kindContinue, textOf(last.Get("content"))
		if n := messages.Get("#").Int(); n >= 2 {
			if result, isResult := toolResult(format, messages.Get(strconv.FormatInt(n-2, 10))); isResult {
				req.shape.continued = continuedAnswer{toolResult: result, afterTool: true}
			}
		}
		return req, true
	}
	if result, isResult := toolResult(format, lastElement(messages)); isResult {
		req.shape.kind, req.shape.result = kindToolResult, result
		return req, true
	}
	if first := tools.Get("0"); tools.IsArray() && first.Exists() {
		namePath := "function.name"
		if format == FormatAnthropic {
			namePath = "name"
		}
		name := first.Get(namePath).String()
		if name == "" {
			req.badTools = true
			return req, true
		}
		req.shape.kind, req.shape.tool = kindToolCall, name
		if len(scripted) > 0 {
			tools.ForEach(func(_, t gjson.Result) bool {
				if args, ok := scripted[t.Get(namePath).String()]; ok {
					req.shape.tool, req.shape.args = t.Get(namePath).String(), args
					return false
				}
				return true
			})
		}
	}
	return req, true
}

// lastElement returns the last element of a JSON array (or a zero Result).
func lastElement(arr gjson.Result) gjson.Result {
	var last gjson.Result
	if arr.IsArray() {
		arr.ForEach(func(_, v gjson.Result) bool {
			last = v
			return true
		})
	}
	return last
}

// toolResult reports whether msg is a tool result and returns its content:
// OpenAI {"role":"tool","content":...}; Anthropic a user message whose
// content has a tool_result block (the first one is used).
func toolResult(format Format, msg gjson.Result) (string, bool) {
	if format == FormatOpenAI {
		if msg.Get("role").String() != "tool" {
			return "", false
		}
		return textOf(msg.Get("content")), true
	}
	if msg.Get("role").String() != "user" {
		return "", false
	}
	var out string
	found := false
	msg.Get("content").ForEach(func(_, block gjson.Result) bool {
		if block.Get("type").String() == "tool_result" {
			out, found = textOf(block.Get("content")), true
			return false
		}
		return true
	})
	return out, found
}

// textOf returns a content value as text: a string as is, an array of parts
// as the concatenation of its text parts.
func textOf(c gjson.Result) string {
	if !c.IsArray() {
		return c.String()
	}
	var b strings.Builder
	c.ForEach(func(_, part gjson.Result) bool {
		if part.Get("type").String() == "text" {
			b.WriteString(part.Get("text").String())
		}
		return true
	})
	return b.String()
}
