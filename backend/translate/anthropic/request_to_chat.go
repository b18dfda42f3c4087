package anthropic

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Thinking budget thresholds for reasoning_effort (see the package doc).
const (
	budgetMedium = 8192  // budgets from here are "medium"
	budgetHigh   = 24576 // budgets from here are "high"
)

// effortForBudget maps an Anthropic thinking budget to an OpenAI reasoning_effort.
func effortForBudget(budget int64) string {
	switch {
	case budget >= budgetHigh:
		return "high"
	case budget >= budgetMedium:
		return "medium"
	}
	return "low"
}

// RequestToChat translates an Anthropic Messages request into an OpenAI Chat
// Completions request, so Anthropic clients can use OpenAI-format upstreams.
func RequestToChat(body []byte) ([]byte, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return nil, err
	}
	var out chatRequest
	if out.Model, err = optString(root.Get("model"), "model"); err != nil {
		return nil, err
	}

	if err := systemToChat(root.Get("system"), &out); err != nil {
		return nil, err
	}
	msgs := root.Get("messages")
	if msgs.Exists() && msgs.Type != gjson.Null && !msgs.IsArray() {
		return nil, inputErr("messages", "must be an array")
	}
	each(msgs, func(i int, m gjson.Result) bool {
		err = messageToChat(m, index("messages", i), &out)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if out.Messages == nil {
		out.Messages = []chatMessage{}
	}

	if n, ok, err := optInt(root.Get("max_tokens"), "max_tokens"); err != nil {
		return nil, err
	} else if ok {
		out.MaxTokens = []byte(strconv.FormatInt(n, 10))
	}
	if out.Temperature, err = optNumber(root.Get("temperature"), "temperature"); err != nil {
		return nil, err
	}
	if out.TopP, err = optNumber(root.Get("top_p"), "top_p"); err != nil {
		return nil, err
	}
	if out.Stop, err = stringList(root.Get("stop_sequences"), "stop_sequences"); err != nil {
		return nil, err
	}
	stream, _, err := optBool(root.Get("stream"), "stream")
	if err != nil {
		return nil, err
	}
	if stream {
		out.Stream = true
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if err := toolsToChat(root, &out); err != nil {
		return nil, err
	}
	if err := thinkingToChat(root, &out); err != nil {
		return nil, err
	}
	if err := outputFormatToChat(root.Get("output_config.format"), &out); err != nil {
		return nil, err
	}
	if md := root.Get("metadata"); md.IsObject() {
		if out.User, err = optString(md.Get("user_id"), "metadata.user_id"); err != nil {
			return nil, err
		}
		if strings.HasPrefix(out.User, "{") {
			// Claude Code's user_id is a JSON object of its device and session
			// ids: Anthropic's telemetry, not an end-user id for another provider.
			out.User = ""
		}
	}
	return marshal(out)
}

// stringList reads a string or an array of strings.
func stringList(r gjson.Result, path string) ([]string, error) {
	switch {
	case r.Type == gjson.Null:
		return nil, nil
	case r.Type == gjson.String:
		return []string{r.Str}, nil
	case r.IsArray():
		var out []string
		var err error
		each(r, func(i int, s gjson.Result) bool {
			if s.Type != gjson.String {
				err = inputErr(index(path, i), "must be a string")
				return false
			}
			out = append(out, s.Str)
			return true
		})
		return out, err
	}
	return nil, inputErr(path, "must be a string or an array of strings")
}

// systemToChat turns Anthropic's top-level system into one leading system
// message. Claude Code's billing attribution block ("x-anthropic-billing-header:
// …") is Anthropic's own metadata, not an instruction, and is left out.
func systemToChat(sys gjson.Result, out *chatRequest) error {
	text, err := systemText(sys, "system")
	if err != nil || text == "" {
		return err
	}
	out.Messages = append(out.Messages, chatMessage{Role: "system", Content: text})
	return nil
}

// billingHeaderPrefix starts the system block Claude Code adds for Anthropic's
// billing; it means nothing to another model.
const billingHeaderPrefix = "x-anthropic-billing-header:"

// systemText reads a system prompt, a string or text blocks (their text joined
// with a blank line; cache_control and citations dropped), as one string.
func systemText(sys gjson.Result, path string) (string, error) {
	switch {
	case sys.Type == gjson.Null:
		return "", nil
	case sys.Type == gjson.String:
		return sys.Str, nil
	case !sys.IsArray():
		return "", inputErr(path, "must be a string or an array of text blocks")
	}
	var parts []string
	var err error
	each(sys, func(i int, b gjson.Result) bool {
		p := index(path, i)
		if !b.IsObject() {
			err = inputErr(p, "must be a content block")
			return false
		}
		if t := b.Get("type").String(); t != "text" {
			err = inputErr(p, "system blocks must be text, not %q; send the content in a user message", t)
			return false
		}
		var s string
		if s, err = optString(b.Get("text"), field(p, "text")); err != nil {
			return false
		}
		if s != "" && !strings.HasPrefix(s, billingHeaderPrefix) {
			parts = append(parts, s)
		}
		return true
	})
	return strings.Join(parts, "\n\n"), err
}

// messageToChat appends the Chat messages for one Anthropic message.
func messageToChat(m gjson.Result, path string, out *chatRequest) error {
	if !m.IsObject() {
		return inputErr(path, "must be an object")
	}
	role := m.Get("role")
	if role.Type != gjson.String || (role.Str != "user" && role.Str != "assistant" && role.Str != "system") {
		return inputErr(field(path, "role"), `must be "user", "assistant" or "system"`)
	}
	content := m.Get("content")
	cpath := field(path, "content")
	if role.Str == "system" {
		return midSystemToChat(content, cpath, out)
	}
	switch {
	case content.Type == gjson.String:
		out.Messages = append(out.Messages, chatMessage{Role: role.Str, Content: content.Str})
		return nil
	case content.Type == gjson.Null:
		return inputErr(cpath, "is required")
	case !content.IsArray():
		return inputErr(cpath, "must be a string or an array of content blocks")
	}
	if role.Str == "assistant" {
		return assistantToChat(content, cpath, out)
	}
	return userToChat(content, cpath, out)
}

// midSystemToChat turns a mid-conversation system message (Claude Code sends
// them inside messages, with the mid-conversation-system beta) into a Chat
// system message at the same position. A system message that directly
// follows the leading system prompt, with nothing in between, is merged into
// it: many OpenAI-compatible chat templates accept only one leading system
// message.
func midSystemToChat(content gjson.Result, path string, out *chatRequest) error {
	text, err := systemText(content, path)
	if ie, ok := err.(*InputError); ok {
		// Worded so Claude Code recognises it and resends the message in a
		// form without mid-conversation system messages.
		ie.Msg = `role "system" messages with this content are not supported: ` + ie.Msg
		ie.Kind = KindMidConversationSystem
	}
	if err != nil || text == "" {
		return err
	}
	if n := len(out.Messages); n > 0 && allSystem(out.Messages) {
		if prev, ok := out.Messages[n-1].Content.(string); ok {
			out.Messages[n-1].Content = prev + "\n\n" + text
			return nil
		}
	}
	out.Messages = append(out.Messages, chatMessage{Role: "system", Content: text})
	return nil
}

// allSystem reports whether every message so far is a system message.
func allSystem(msgs []chatMessage) bool {
	for _, m := range msgs {
		if m.Role != "system" {
			return false
		}
	}
	return true
}

// userToChat splits a user message: tool results become tool messages (first,
// as OpenAI needs them right after the assistant's tool calls), the rest one
// user message.
func userToChat(content gjson.Result, path string, out *chatRequest) error {
	var parts, attachments []chatPart
	var err error
	hadTool := false
	each(content, func(i int, b gjson.Result) bool {
		p := index(path, i)
		if !b.IsObject() {
			err = inputErr(p, "must be a content block")
			return false
		}
		if b.Get("type").String() == "tool_result" {
			hadTool = true
			var msg chatMessage
			var extra []chatPart
			if msg, extra, err = toolResultToChat(b, p); err != nil {
				return false
			}
			out.Messages = append(out.Messages, msg)
			attachments = append(attachments, extra...)
			return true
		}
		var part *chatPart
		if part, err = partToChat(b, p); err != nil {
			return false
		}
		if part != nil {
			parts = append(parts, *part)
		}
		return true
	})
	if err != nil {
		return err
	}
	parts = append(attachments, parts...)
	switch {
	case len(parts) == 0 && hadTool:
		return nil // only tool results
	case len(parts) == 1 && parts[0].Type == "text":
		out.Messages = append(out.Messages, chatMessage{Role: "user", Content: parts[0].Text})
	case len(parts) == 0:
		out.Messages = append(out.Messages, chatMessage{Role: "user", Content: ""})
	default:
		out.Messages = append(out.Messages, chatMessage{Role: "user", Content: parts})
	}
	return nil
}

// partToChat converts a user content block; nil means the block has no Chat form
// worth sending (empty text, cache-only markers, unknown types).
func partToChat(b gjson.Result, path string) (*chatPart, error) {
	switch t := b.Get("type").String(); t {
	case "text":
		s, err := optString(b.Get("text"), field(path, "text"))
		if err != nil || s == "" {
			return nil, err
		}
		return &chatPart{Type: "text", Text: s}, nil
	case "image":
		url, err := imageSourceToURL(b.Get("source"), field(path, "source"))
		if err != nil {
			return nil, err
		}
		return &chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: url}}, nil
	case "document":
		return documentToChat(b, path)
	case "tool_reference":
		// Tool search results name the tools they load; the Chat model is
		// offered every tool already, so the name is all it needs.
		name, err := optString(b.Get("tool_name"), field(path, "tool_name"))
		if err != nil || name == "" {
			return nil, err
		}
		return &chatPart{Type: "text", Text: "Tool loaded: " + name}, nil
	case "":
		return nil, inputErr(field(path, "type"), "is required")
	default:
		return nil, nil // e.g. search_result, container_upload: no Chat form
	}
}

// imageSourceToURL turns an Anthropic image source into an image_url URL.
func imageSourceToURL(src gjson.Result, path string) (string, error) {
	if !src.IsObject() {
		return "", inputErr(path, "must be an object")
	}
	switch t := src.Get("type").String(); t {
	case "base64":
		mt, err := optString(src.Get("media_type"), field(path, "media_type"))
		if err != nil {
			return "", err
		}
		data, err := optString(src.Get("data"), field(path, "data"))
		if err != nil {
			return "", err
		}
		if mt == "" {
			mt = "image/png"
		}
		return "data:" + mt + ";base64," + data, nil
	case "url":
		u, err := optString(src.Get("url"), field(path, "url"))
		if err != nil {
			return "", err
		}
		if u == "" {
			return "", inputErr(field(path, "url"), "is required")
		}
		return u, nil
	default:
		return "", inputErr(field(path, "type"), "source type %q cannot be sent to an OpenAI-format upstream", t)
	}
}

// documentToChat converts a document block: PDFs as file parts, text as text.
func documentToChat(b gjson.Result, path string) (*chatPart, error) {
	src := b.Get("source")
	spath := field(path, "source")
	if !src.IsObject() {
		return nil, inputErr(spath, "must be an object")
	}
	title, _ := optString(b.Get("title"), field(path, "title"))
	switch t := src.Get("type").String(); t {
	case "base64":
		mt, err := optString(src.Get("media_type"), field(spath, "media_type"))
		if err != nil {
			return nil, err
		}
		data, err := optString(src.Get("data"), field(spath, "data"))
		if err != nil {
			return nil, err
		}
		if mt == "" {
			mt = "application/pdf"
		}
		name := title
		if name == "" {
			name = "document.pdf"
		}
		return &chatPart{Type: "file", File: &chatFile{Filename: name, FileData: "data:" + mt + ";base64," + data}}, nil
	case "text":
		s, err := optString(src.Get("data"), field(spath, "data"))
		if err != nil || s == "" {
			return nil, err
		}
		if title != "" {
			s = title + "\n\n" + s
		}
		return &chatPart{Type: "text", Text: s}, nil
	case "content":
		var texts []string
		each(src.Get("content"), func(_ int, c gjson.Result) bool {
			if c.Get("type").String() == "text" {
				texts = append(texts, c.Get("text").String())
			}
			return true
		})
		if src.Get("content").Type == gjson.String {
			texts = append(texts, src.Get("content").Str)
		}
		if len(texts) == 0 {
			return nil, nil
		}
		return &chatPart{Type: "text", Text: strings.Join(texts, "\n")}, nil
	default:
		return nil, inputErr(field(spath, "type"), "document source type %q cannot be sent to an OpenAI-format upstream", t)
	}
}

// toolResultToChat converts a tool_result block into a tool message; images and
// documents, which tool messages cannot carry, come back as extra user parts.
func toolResultToChat(b gjson.Result, path string) (chatMessage, []chatPart, error) {
	id := b.Get("tool_use_id")
	if id.Type != gjson.String || id.Str == "" {
		return chatMessage{}, nil, inputErr(field(path, "tool_use_id"), "must be a non-empty string")
	}
	isErr, _, err := optBool(b.Get("is_error"), field(path, "is_error"))
	if err != nil {
		return chatMessage{}, nil, err
	}
	content := b.Get("content")
	cpath := field(path, "content")
	var texts []string
	var extra []chatPart
	switch {
	case content.Type == gjson.Null:
	case content.Type == gjson.String:
		texts = append(texts, content.Str)
	case content.IsArray():
		each(content, func(i int, c gjson.Result) bool {
			p := index(cpath, i)
			if !c.IsObject() {
				err = inputErr(p, "must be a content block")
				return false
			}
			if t := c.Get("type").String(); t == "text" || t == "tool_reference" {
				var part *chatPart
				if part, err = partToChat(c, p); err != nil {
					return false
				}
				if part != nil {
					texts = append(texts, part.Text)
				}
				return true
			}
			var part *chatPart
			if part, err = partToChat(c, p); err != nil {
				return false
			}
			if part != nil {
				if len(extra) == 0 {
					extra = append(extra, chatPart{Type: "text", Text: "[attachments from tool result " + id.Str + "]"})
				}
				extra = append(extra, *part)
			}
			return true
		})
		if err != nil {
			return chatMessage{}, nil, err
		}
	default:
		return chatMessage{}, nil, inputErr(cpath, "must be a string or an array of content blocks")
	}
	text := strings.Join(texts, "\n")
	if isErr && !strings.HasPrefix(text, "Error") {
		text = "Error: " + text
	}
	return chatMessage{Role: "tool", ToolCallID: id.Str, Content: text}, extra, nil
}

// assistantToChat converts an assistant message's blocks into one assistant message.
func assistantToChat(content gjson.Result, path string, out *chatRequest) error {
	var text, reasoning strings.Builder
	var calls []chatToolCall
	var signed []anthBlock
	var err error
	each(content, func(i int, b gjson.Result) bool {
		p := index(path, i)
		if !b.IsObject() {
			err = inputErr(p, "must be a content block")
			return false
		}
		switch b.Get("type").String() {
		case "text":
			var s string
			if s, err = optString(b.Get("text"), field(p, "text")); err != nil {
				return false
			}
			text.WriteString(s)
		case "thinking":
			var s string
			if s, err = optString(b.Get("thinking"), field(p, "thinking")); err != nil {
				return false
			}
			reasoning.WriteString(s)
			if sig := b.Get("signature"); sig.Type == gjson.String && sig.Str != "" {
				signed = append(signed, anthBlock{Type: "thinking", Thinking: &s, Signature: &sig.Str})
			}
		case "redacted_thinking":
			if d := b.Get("data"); d.Type == gjson.String && d.Str != "" {
				signed = append(signed, anthBlock{Type: "redacted_thinking", Data: d.Str})
			}
		case "tool_use":
			var tc chatToolCall
			if tc, err = toolUseToChat(b, p); err != nil {
				return false
			}
			calls = append(calls, tc)
		case "":
			err = inputErr(field(p, "type"), "is required")
			return false
		}
		// server tool blocks: no Chat form.
		return true
	})
	if err != nil {
		return err
	}
	msg := chatMessage{Role: "assistant", ReasoningContent: reasoning.String(), ToolCalls: calls, ThinkingBlocks: signed}
	if text.Len() > 0 || len(calls) == 0 {
		msg.Content = text.String()
	}
	out.Messages = append(out.Messages, msg)
	return nil
}

func toolUseToChat(b gjson.Result, path string) (chatToolCall, error) {
	id, err := optString(b.Get("id"), field(path, "id"))
	if err != nil {
		return chatToolCall{}, err
	}
	if id == "" {
		id = newID("toolu_")
	}
	name, err := optString(b.Get("name"), field(path, "name"))
	if err != nil {
		return chatToolCall{}, err
	}
	return chatToolCall{ID: id, Type: "function", Function: chatFunction{Name: name, Arguments: inputToArguments(b.Get("input"))}}, nil
}

// toolsToChat converts tools and tool_choice.
func toolsToChat(root gjson.Result, out *chatRequest) error {
	tools := root.Get("tools")
	if tools.Exists() && tools.Type != gjson.Null && !tools.IsArray() {
		return inputErr("tools", "must be an array")
	}
	var err error
	each(tools, func(i int, t gjson.Result) bool {
		p := index("tools", i)
		if !t.IsObject() {
			err = inputErr(p, "must be an object")
			return false
		}
		typ := t.Get("type").String()
		schema := t.Get("input_schema")
		if typ != "" && typ != "custom" && !schema.Exists() {
			return true // a server tool (web_search, bash, ...): no Chat form
		}
		var name, desc string
		if name, err = optString(t.Get("name"), field(p, "name")); err != nil {
			return false
		}
		if name == "" {
			err = inputErr(field(p, "name"), "is required")
			return false
		}
		if desc, err = optString(t.Get("description"), field(p, "description")); err != nil {
			return false
		}
		params := []byte(`{"type":"object","properties":{}}`)
		if schema.IsObject() {
			params = compactRaw(schema.Raw)
		} else if schema.Exists() && schema.Type != gjson.Null {
			err = inputErr(field(p, "input_schema"), "must be an object")
			return false
		}
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatToolDef{Name: name, Description: desc, Parameters: params}})
		return true
	})
	if err != nil {
		return err
	}
	tc := root.Get("tool_choice")
	if tc.Type == gjson.Null || len(out.Tools) == 0 {
		return nil
	}
	if !tc.IsObject() {
		return inputErr("tool_choice", "must be an object")
	}
	switch t := tc.Get("type").String(); t {
	case "auto":
		out.ToolChoice = "auto"
	case "any":
		out.ToolChoice = "required"
	case "none":
		out.ToolChoice = "none"
	case "tool":
		name, err := optString(tc.Get("name"), "tool_choice.name")
		if err != nil {
			return err
		}
		if name == "" {
			return inputErr("tool_choice.name", "is required")
		}
		var c chatNamedChoice
		c.Type = "function"
		c.Function.Name = name
		out.ToolChoice = c
	default:
		return inputErr("tool_choice.type", "unknown tool_choice type %q", t)
	}
	if tc.Get("disable_parallel_tool_use").Bool() && out.ToolChoice != "none" {
		f := false
		out.ParallelToolCalls = &f
	}
	return nil
}

// thinkingToChat maps thinking to reasoning_effort.
func thinkingToChat(root gjson.Result, out *chatRequest) error {
	th := root.Get("thinking")
	if th.Type == gjson.Null {
		return nil
	}
	if !th.IsObject() {
		return inputErr("thinking", "must be an object")
	}
	switch th.Get("type").String() {
	case "enabled":
		budget, ok, err := optInt(th.Get("budget_tokens"), "thinking.budget_tokens")
		if err != nil {
			return err
		}
		if !ok {
			budget = 1024
		}
		out.ReasoningEffort = effortForBudget(budget)
	case "adaptive":
		switch e := root.Get("output_config.effort").String(); e {
		case "low", "medium", "high":
			out.ReasoningEffort = e
		case "max", "xhigh":
			out.ReasoningEffort = "high"
		}
	}
	return nil
}

// outputFormatToChat maps Anthropic structured outputs (output_config.format
// {"type":"json_schema","schema":{…}}) to response_format json_schema.
func outputFormatToChat(f gjson.Result, out *chatRequest) error {
	if f.Type == gjson.Null || !f.Exists() {
		return nil
	}
	if !f.IsObject() {
		return inputErr("output_config.format", "must be an object")
	}
	if f.Get("type").String() != "json_schema" {
		return nil // no other format is defined; unknown ones are dropped
	}
	schema := f.Get("schema")
	if !schema.IsObject() {
		return inputErr("output_config.format.schema", "must be an object")
	}
	out.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": "output", "schema": compactRaw(schema.Raw), "strict": true,
	}}
	return nil
}
