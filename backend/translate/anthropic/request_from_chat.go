package anthropic

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Defaults and budgets for Chat → Anthropic (see the package doc).
const (
	defaultMaxTokens = 4096
	minBudget        = 1024 // Anthropic's smallest thinking budget
	budgetHeadroom   = 4096 // answer tokens added above the budget when max_tokens is unset
)

// budgetForEffort maps an OpenAI reasoning_effort to a thinking budget; 0 means
// no thinking.
func budgetForEffort(effort string) int64 {
	switch effort {
	case "minimal":
		return minBudget
	case "low":
		return 4096
	case "medium":
		return 16384
	case "high", "xhigh", "max":
		return budgetHigh
	}
	return 0
}

// RequestFromChat translates an OpenAI Chat Completions request into an
// Anthropic Messages request, so OpenAI clients can use Anthropic upstreams.
func RequestFromChat(body []byte) ([]byte, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return nil, err
	}
	var out anthRequest
	if out.Model, err = optString(root.Get("model"), "model"); err != nil {
		return nil, err
	}
	if n, ok, err := optInt(root.Get("n"), "n"); err != nil {
		return nil, err
	} else if ok && n > 1 {
		return nil, inputErr("n", "Anthropic upstreams return one choice; n must be 1")
	}

	msgs := root.Get("messages")
	if !msgs.IsArray() {
		return nil, inputErr("messages", "must be an array")
	}
	var system []string
	b := messageBuilder{}
	each(msgs, func(i int, m gjson.Result) bool {
		p := index("messages", i)
		var sys string
		var isSys bool
		if sys, isSys, err = b.add(m, p); err != nil {
			return false
		}
		if isSys {
			system = append(system, sys)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out.Messages = b.msgs
	if out.Messages == nil {
		out.Messages = []anthMessage{}
	}
	switch {
	case len(system) == 1:
		out.System = system[0]
	case len(system) > 1:
		blocks := make([]anthBlock, len(system))
		for i, s := range system {
			blocks[i] = textBlock(s)
		}
		out.System = blocks
	}

	// Limits and sampling.
	maxTok, haveMax, err := optInt(root.Get("max_completion_tokens"), "max_completion_tokens")
	if err != nil {
		return nil, err
	}
	if !haveMax {
		if maxTok, haveMax, err = optInt(root.Get("max_tokens"), "max_tokens"); err != nil {
			return nil, err
		}
	}
	if !haveMax {
		maxTok = defaultMaxTokens
	}
	out.MaxTokens = maxTok
	if t, err := optNumber(root.Get("temperature"), "temperature"); err != nil {
		return nil, err
	} else if t != nil {
		if root.Get("temperature").Float() > 1 {
			t = json.RawMessage("1")
		}
		out.Temperature = t
	}
	if out.TopP, err = optNumber(root.Get("top_p"), "top_p"); err != nil {
		return nil, err
	}
	stops, err := stringList(root.Get("stop"), "stop")
	if err != nil {
		return nil, err
	}
	for _, s := range stops {
		if strings.TrimSpace(s) != "" {
			out.StopSequences = append(out.StopSequences, s)
		}
	}
	if out.Stream, _, err = optBool(root.Get("stream"), "stream"); err != nil {
		return nil, err
	}
	if user, err := optString(root.Get("user"), "user"); err != nil {
		return nil, err
	} else if user != "" {
		out.Metadata = &anthMetadata{UserID: user}
	}

	if err := toolsFromChat(root, &out); err != nil {
		return nil, err
	}
	if err := thinkingFromChat(root, &out, haveMax); err != nil {
		return nil, err
	}
	return marshal(out)
}

// messageBuilder accumulates Anthropic messages, merging consecutive tool
// results (and the user text after them) into one user message.
type messageBuilder struct {
	msgs []anthMessage
	// openTools is true while the last message is a user message that began
	// with tool results, so further tool results and user content join it.
	openTools bool
}

// add converts one Chat message; a system/developer message is returned as text instead.
func (b *messageBuilder) add(m gjson.Result, path string) (system string, isSystem bool, err error) {
	if !m.IsObject() {
		return "", false, inputErr(path, "must be an object")
	}
	role := m.Get("role")
	if role.Type != gjson.String {
		return "", false, inputErr(field(path, "role"), "must be a string")
	}
	content := m.Get("content")
	cpath := field(path, "content")
	switch role.Str {
	case "system", "developer":
		s, err := textOf(content, cpath)
		return s, true, err
	case "user":
		blocks, err := userPartsFromChat(content, cpath)
		if err != nil {
			return "", false, err
		}
		if b.openTools {
			last := &b.msgs[len(b.msgs)-1]
			last.Content = append(last.Content, blocks...)
			b.openTools = false
			return "", false, nil
		}
		if len(blocks) > 0 {
			b.msgs = append(b.msgs, anthMessage{Role: "user", Content: blocks})
		}
		return "", false, nil
	case "assistant":
		blocks, err := assistantFromChat(m, path)
		if err != nil {
			return "", false, err
		}
		b.openTools = false
		if len(blocks) > 0 {
			b.msgs = append(b.msgs, anthMessage{Role: "assistant", Content: blocks})
		}
		return "", false, nil
	case "tool":
		blk, err := toolMessageFromChat(m, path)
		if err != nil {
			return "", false, err
		}
		if b.openTools {
			last := &b.msgs[len(b.msgs)-1]
			last.Content = append(last.Content, blk)
		} else {
			b.msgs = append(b.msgs, anthMessage{Role: "user", Content: []anthBlock{blk}})
			b.openTools = true
		}
		return "", false, nil
	}
	return "", false, inputErr(field(path, "role"), "unsupported role %q", role.Str)
}

// textOf reads content that may only hold text: a string or text parts.
func textOf(content gjson.Result, path string) (string, error) {
	switch {
	case content.Type == gjson.Null:
		return "", nil
	case content.Type == gjson.String:
		return content.Str, nil
	case content.IsArray():
		var sb strings.Builder
		var err error
		each(content, func(i int, p gjson.Result) bool {
			pp := index(path, i)
			if !p.IsObject() {
				err = inputErr(pp, "must be a content part")
				return false
			}
			switch p.Get("type").String() {
			case "text", "refusal", "input_text", "output_text":
				key := "text"
				if p.Get("type").Str == "refusal" {
					key = "refusal"
				}
				var s string
				if s, err = optString(p.Get(key), field(pp, key)); err != nil {
					return false
				}
				sb.WriteString(s)
			}
			return true
		})
		return sb.String(), err
	}
	return "", inputErr(path, "must be a string or an array of content parts")
}

// userPartsFromChat converts user content into Anthropic blocks.
func userPartsFromChat(content gjson.Result, path string) ([]anthBlock, error) {
	switch {
	case content.Type == gjson.Null:
		return nil, nil
	case content.Type == gjson.String:
		if content.Str == "" {
			return nil, nil
		}
		return []anthBlock{textBlock(content.Str)}, nil
	case !content.IsArray():
		return nil, inputErr(path, "must be a string or an array of content parts")
	}
	var out []anthBlock
	var err error
	each(content, func(i int, p gjson.Result) bool {
		pp := index(path, i)
		var blk *anthBlock
		if blk, err = partFromChat(p, pp); err != nil {
			return false
		}
		if blk != nil {
			out = append(out, *blk)
		}
		return true
	})
	return out, err
}

// partFromChat converts one Chat content part; nil means nothing to send.
func partFromChat(p gjson.Result, path string) (*anthBlock, error) {
	if !p.IsObject() {
		return nil, inputErr(path, "must be a content part")
	}
	switch t := p.Get("type").String(); t {
	case "text", "input_text":
		s, err := optString(p.Get("text"), field(path, "text"))
		if err != nil || s == "" {
			return nil, err
		}
		blk := textBlock(s)
		return &blk, nil
	case "image_url":
		u := p.Get("image_url")
		if u.IsObject() {
			u = u.Get("url")
		}
		url, err := optString(u, field(path, "image_url.url"))
		if err != nil {
			return nil, err
		}
		src, err := sourceFromURL(url, field(path, "image_url.url"))
		if err != nil {
			return nil, err
		}
		return &anthBlock{Type: "image", Source: src}, nil
	case "file":
		f := p.Get("file")
		if !f.IsObject() {
			return nil, inputErr(field(path, "file"), "must be an object")
		}
		data, err := optString(f.Get("file_data"), field(path, "file.file_data"))
		if err != nil {
			return nil, err
		}
		if data == "" {
			return nil, inputErr(field(path, "file"), "only inline file_data can be sent to an Anthropic upstream")
		}
		mt, b64, ok := parseDataURL(data)
		if !ok {
			return nil, inputErr(field(path, "file.file_data"), "must be a base64 data: URL")
		}
		if strings.HasPrefix(mt, "image/") {
			return &anthBlock{Type: "image", Source: &anthSource{Type: "base64", MediaType: mt, Data: b64}}, nil
		}
		title, _ := optString(f.Get("filename"), field(path, "file.filename"))
		return &anthBlock{Type: "document", Title: title, Source: &anthSource{Type: "base64", MediaType: mt, Data: b64}}, nil
	case "":
		return nil, inputErr(field(path, "type"), "is required")
	default:
		return nil, inputErr(field(path, "type"), "content part type %q cannot be sent to an Anthropic upstream", t)
	}
}

// sourceFromURL turns an image URL (data: or http(s)) into an Anthropic source.
func sourceFromURL(url, path string) (*anthSource, error) {
	if strings.HasPrefix(url, "data:") {
		mt, b64, ok := parseDataURL(url)
		if !ok {
			return nil, inputErr(path, "data: URLs must be base64-encoded")
		}
		return &anthSource{Type: "base64", MediaType: mt, Data: b64}, nil
	}
	if url == "" {
		return nil, inputErr(path, "is required")
	}
	return &anthSource{Type: "url", URL: url}, nil
}

// parseDataURL splits "data:<media type>[;params];base64,<data>".
func parseDataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	params := strings.Split(meta, ";")
	if len(params) < 2 || params[len(params)-1] != "base64" {
		return "", "", false
	}
	mediaType = params[0]
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	return mediaType, data, true
}

// assistantFromChat converts an assistant message into blocks: thinking (only
// when signed blocks are supplied), text, tool_use.
func assistantFromChat(m gjson.Result, path string) ([]anthBlock, error) {
	var out []anthBlock
	var err error
	tb := m.Get("thinking_blocks")
	each(tb, func(i int, t gjson.Result) bool {
		p := index(field(path, "thinking_blocks"), i)
		switch t.Get("type").String() {
		case "thinking":
			var text, sig string
			if text, err = optString(t.Get("thinking"), field(p, "thinking")); err != nil {
				return false
			}
			if sig, err = optString(t.Get("signature"), field(p, "signature")); err != nil {
				return false
			}
			if sig != "" {
				out = append(out, anthBlock{Type: "thinking", Thinking: &text, Signature: &sig})
			}
		case "redacted_thinking":
			var data string
			if data, err = optString(t.Get("data"), field(p, "data")); err != nil {
				return false
			}
			if data != "" {
				out = append(out, anthBlock{Type: "redacted_thinking", Data: data})
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	text, err := textOf(m.Get("content"), field(path, "content"))
	if err != nil {
		return nil, err
	}
	if text != "" {
		out = append(out, textBlock(text))
	}
	calls := m.Get("tool_calls")
	if calls.Exists() && calls.Type != gjson.Null && !calls.IsArray() {
		return nil, inputErr(field(path, "tool_calls"), "must be an array")
	}
	each(calls, func(i int, c gjson.Result) bool {
		p := index(field(path, "tool_calls"), i)
		var blk anthBlock
		if blk, err = toolCallFromChat(c, p); err != nil {
			return false
		}
		out = append(out, blk)
		return true
	})
	return out, err
}

func toolCallFromChat(c gjson.Result, path string) (anthBlock, error) {
	if !c.IsObject() {
		return anthBlock{}, inputErr(path, "must be an object")
	}
	id, err := optString(c.Get("id"), field(path, "id"))
	if err != nil {
		return anthBlock{}, err
	}
	if id == "" {
		id = newID("toolu_")
	}
	fn := c.Get("function")
	if !fn.IsObject() {
		return anthBlock{}, inputErr(field(path, "function"), "must be an object")
	}
	name, err := optString(fn.Get("name"), field(path, "function.name"))
	if err != nil {
		return anthBlock{}, err
	}
	args := fn.Get("arguments")
	var input json.RawMessage
	switch {
	case args.Type == gjson.String:
		input = argumentsToInput(args.Str)
	case args.IsObject():
		input = compactRaw(args.Raw) // some clients send an object
	case args.Type == gjson.Null:
		input = json.RawMessage("{}")
	default:
		return anthBlock{}, inputErr(field(path, "function.arguments"), "must be a string")
	}
	return anthBlock{Type: "tool_use", ID: id, Name: name, Input: input}, nil
}

// toolMessageFromChat converts a role:"tool" message into a tool_result block.
func toolMessageFromChat(m gjson.Result, path string) (anthBlock, error) {
	id := m.Get("tool_call_id")
	if id.Type != gjson.String || id.Str == "" {
		return anthBlock{}, inputErr(field(path, "tool_call_id"), "must be a non-empty string")
	}
	content := m.Get("content")
	cpath := field(path, "content")
	blk := anthBlock{Type: "tool_result", ToolUseID: id.Str}
	switch {
	case content.Type == gjson.Null:
		blk.Content = ""
	case content.Type == gjson.String:
		blk.Content = content.Str
	case content.IsArray():
		parts, err := userPartsFromChat(content, cpath)
		if err != nil {
			return anthBlock{}, err
		}
		if len(parts) == 1 && parts[0].Type == "text" {
			blk.Content = *parts[0].Text
		} else if len(parts) == 0 {
			blk.Content = ""
		} else {
			blk.Content = parts
		}
	default:
		return anthBlock{}, inputErr(cpath, "must be a string or an array of content parts")
	}
	return blk, nil
}

// toolsFromChat converts tools, tool_choice and parallel_tool_calls.
func toolsFromChat(root gjson.Result, out *anthRequest) error {
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
		if typ := t.Get("type").String(); typ != "function" && typ != "" {
			return true // custom/built-in tools have no Anthropic form
		}
		fn := t.Get("function")
		if !fn.IsObject() {
			err = inputErr(field(p, "function"), "must be an object")
			return false
		}
		var name, desc string
		if name, err = optString(fn.Get("name"), field(p, "function.name")); err != nil {
			return false
		}
		if name == "" {
			err = inputErr(field(p, "function.name"), "is required")
			return false
		}
		if desc, err = optString(fn.Get("description"), field(p, "function.description")); err != nil {
			return false
		}
		schema := json.RawMessage(`{"type":"object","properties":{}}`)
		if ps := fn.Get("parameters"); ps.IsObject() {
			schema = compactRaw(ps.Raw)
		} else if ps.Exists() && ps.Type != gjson.Null {
			err = inputErr(field(p, "function.parameters"), "must be an object")
			return false
		}
		out.Tools = append(out.Tools, anthTool{Name: name, Description: desc, InputSchema: schema})
		return true
	})
	if err != nil {
		return err
	}
	if len(out.Tools) == 0 {
		return nil
	}
	tc := root.Get("tool_choice")
	switch {
	case tc.Type == gjson.Null:
	case tc.Type == gjson.String:
		switch tc.Str {
		case "auto":
			out.ToolChoice = &anthToolChoice{Type: "auto"}
		case "required":
			out.ToolChoice = &anthToolChoice{Type: "any"}
		case "none":
			out.ToolChoice = &anthToolChoice{Type: "none"}
		default:
			return inputErr("tool_choice", "unknown tool_choice %q", tc.Str)
		}
	case tc.IsObject():
		switch tc.Get("type").String() {
		case "function":
			name, err := optString(tc.Get("function.name"), "tool_choice.function.name")
			if err != nil {
				return err
			}
			if name == "" {
				return inputErr("tool_choice.function.name", "is required")
			}
			out.ToolChoice = &anthToolChoice{Type: "tool", Name: name}
		case "allowed_tools":
			mode := tc.Get("allowed_tools.mode").String()
			if mode == "required" {
				out.ToolChoice = &anthToolChoice{Type: "any"}
			} else {
				out.ToolChoice = &anthToolChoice{Type: "auto"}
			}
		default:
			return inputErr("tool_choice.type", "unknown tool_choice type %q", tc.Get("type").String())
		}
	default:
		return inputErr("tool_choice", "must be a string or an object")
	}
	if par, ok, err := optBool(root.Get("parallel_tool_calls"), "parallel_tool_calls"); err != nil {
		return err
	} else if ok && !par {
		if out.ToolChoice == nil {
			out.ToolChoice = &anthToolChoice{Type: "auto"}
		}
		if out.ToolChoice.Type != "none" {
			out.ToolChoice.DisableParallelToolUse = true
		}
	}
	return nil
}

// thinkingFromChat maps reasoning_effort (or OpenRouter's reasoning object) to
// thinking, keeping Anthropic's constraints (see the package doc).
func thinkingFromChat(root gjson.Result, out *anthRequest, haveMax bool) error {
	effort, err := optString(root.Get("reasoning_effort"), "reasoning_effort")
	if err != nil {
		return err
	}
	var budget int64
	if r := root.Get("reasoning"); r.IsObject() {
		if effort == "" {
			effort = r.Get("effort").String()
		}
		if n, ok, err := optInt(r.Get("max_tokens"), "reasoning.max_tokens"); err != nil {
			return err
		} else if ok {
			budget = n
		}
		if r.Get("enabled").Type == gjson.False {
			return nil
		}
		if budget == 0 && effort == "" && r.Get("enabled").Type == gjson.True {
			effort = "medium"
		}
	}
	if budget == 0 {
		budget = budgetForEffort(effort)
	}
	if budget <= 0 {
		return nil
	}
	if budget < minBudget {
		budget = minBudget
	}
	if out.ToolChoice != nil && (out.ToolChoice.Type == "any" || out.ToolChoice.Type == "tool") {
		return nil // thinking cannot be combined with forced tool use
	}
	if lastToolTurnUnsigned(out.Messages) {
		return nil
	}
	if !haveMax {
		out.MaxTokens = budget + budgetHeadroom
	} else if out.MaxTokens <= budget {
		budget = out.MaxTokens - 1
		if budget < minBudget {
			return nil
		}
	}
	out.Thinking = &anthThinking{Type: "enabled", BudgetTokens: budget}
	out.Temperature = nil // thinking requires the default temperature
	if out.TopP != nil {
		if p, err := strconv.ParseFloat(string(out.TopP), 64); err != nil || p < 0.95 {
			out.TopP = nil
		}
	}
	return nil
}

// lastToolTurnUnsigned reports whether the last assistant message calls tools
// without a leading thinking block, which Anthropic rejects when thinking is on.
func lastToolTurnUnsigned(msgs []anthMessage) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		hasTool := false
		for _, b := range msgs[i].Content {
			if b.Type == "tool_use" {
				hasTool = true
			}
		}
		if !hasTool {
			return false
		}
		first := msgs[i].Content[0].Type
		return first != "thinking" && first != "redacted_thinking"
	}
	return false
}
