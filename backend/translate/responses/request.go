package responses

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
)

// chatRequest is the Chat Completions request RequestToChat writes. Field
// order is the wire order.
type chatRequest struct {
	Model             string          `json:"model,omitempty"`
	Messages          []chatMessage   `json:"messages"`
	Tools             []chatTool      `json:"tools,omitempty"`
	ToolChoice        any             `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	MaxTokens         json.RawMessage `json:"max_tokens,omitempty"`
	Temperature       json.RawMessage `json:"temperature,omitempty"`
	TopP              json.RawMessage `json:"top_p,omitempty"`
	User              string          `json:"user,omitempty"`
	ReasoningEffort   string          `json:"reasoning_effort,omitempty"`
	ResponseFormat    any             `json:"response_format,omitempty"`
	Stream            bool            `json:"stream,omitempty"`
	StreamOptions     *streamOptions  `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"` // string or []chatPart
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	// ThinkingBlocks are the signed blocks a reasoning item sealed
	// (openBlocks), given back to the upstream that signed them.
	ThinkingBlocks []signedBlock `json:"thinking_blocks,omitempty"`
}

type chatPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text,omitempty"`
	ImageURL   *chatImageURL   `json:"image_url,omitempty"`
	File       *chatFile       `json:"file,omitempty"`
	InputAudio json.RawMessage `json:"input_audio,omitempty"`
}

type chatImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type chatFile struct {
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatCallFunction `json:"function"`
}

type chatCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type chatNamedChoice struct {
	Type     string           `json:"type"`
	Function chatNamedFuncRef `json:"function"`
}

type chatNamedFuncRef struct {
	Name string `json:"name"`
}

// customInputSchema is the function schema a freeform custom tool is offered
// to a Chat model with: one string argument, "input".
const customInputSchema = `{"type":"object","properties":{"input":{"type":"string","description":"The raw input for the tool, exactly as the tool's format requires."}},"required":["input"],"additionalProperties":false}`

// RequestToChat translates a Responses API request into a Chat Completions
// request.
//
// instructions become a leading system message and a string input one user
// message; message items keep their role, developer becoming system, and the
// leading run of system messages is merged into one (many chat templates allow
// only one). function_call items become assistant tool_calls (merged into the
// preceding assistant message, call_id kept as the tool call id) and
// function_call_output items tool messages; images a tool returned follow the
// tool messages as a user message, since Chat tool messages carry only text.
// reasoning items and hosted-tool call items are dropped: Chat has no slot for
// them (local_shell_call items are kept as "local_shell" function calls, since
// Codex pairs them with function_call_output items).
//
// tools are nested the Chat way; hosted tools (anything but "function" and
// "custom") are dropped. tool_choice, max_output_tokens (→ max_tokens),
// reasoning.effort (→ reasoning_effort), text.format (→ response_format),
// temperature, top_p, user and parallel_tool_calls map across; stream also
// sets stream_options.include_usage so usage is never lost. store, metadata,
// include, truncation, background, service_tier, prompt_cache_key,
// safety_identifier, text.verbosity and reasoning.summary have no Chat
// equivalent and are ignored. A non-empty previous_response_id returns
// ErrPreviousResponse; malformed or stateful input returns a *FieldError.
func RequestToChat(body []byte) ([]byte, error) {
	if !jsonv.Valid(body) {
		return nil, fieldErr("", "request body must be valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, fieldErr("", "request body must be a JSON object")
	}
	if p := root.Get("previous_response_id"); p.Exists() && p.Type != gjson.Null {
		if p.Type != gjson.String {
			return nil, fieldErr("previous_response_id", "must be a string")
		}
		if p.Str != "" {
			return nil, ErrPreviousResponse
		}
	}
	for _, f := range [...]string{"conversation", "prompt"} {
		if v := root.Get(f); v.Exists() && v.Type != gjson.Null {
			return nil, fieldErr(f, "is not supported: the gateway keeps no server-side state; send the full conversation in input")
		}
	}

	var out chatRequest
	if m := root.Get("model"); m.Exists() && m.Type != gjson.Null {
		if m.Type != gjson.String {
			return nil, fieldErr("model", "must be a string")
		}
		out.Model = m.Str
	}

	if t := root.Get("tools"); t.Exists() && t.Type != gjson.Null && !t.IsArray() {
		return nil, fieldErr("tools", "must be an array")
	}
	var b msgBuilder
	if ins := root.Get("instructions"); ins.Exists() && ins.Type != gjson.Null {
		switch {
		case ins.Type == gjson.String:
			if ins.Str != "" {
				b.add(chatMessage{Role: "system", Content: ins.Str})
			}
		case ins.IsArray():
			if err := b.items(ins, "instructions"); err != nil {
				return nil, err
			}
		default:
			return nil, fieldErr("instructions", "must be a string")
		}
	}
	in := root.Get("input")
	switch {
	case in.Type == gjson.String:
		b.add(chatMessage{Role: "user", Content: in.Str})
	case in.IsArray():
		if err := b.items(in, "input"); err != nil {
			return nil, err
		}
	case !in.Exists() || in.Type == gjson.Null:
	default:
		return nil, fieldErr("input", "must be a string or an array of items")
	}
	b.flushImages()
	out.Messages = mergeLeadingSystem(b.msgs)
	if out.Messages == nil {
		out.Messages = []chatMessage{}
	}

	if err := mapTools(root, &out); err != nil {
		return nil, err
	}
	if err := mapScalars(root, &out); err != nil {
		return nil, err
	}
	if err := mapTextFormat(root.Get("text.format"), &out); err != nil {
		return nil, err
	}
	return marshal(out)
}

// marshal encodes v without HTML escaping and without the trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// msgBuilder accumulates Chat messages from Responses input items.
type msgBuilder struct {
	msgs []chatMessage
	// images returned by tool outputs wait here until the run of tool
	// messages ends, then follow it as one user message.
	images []chatPart
	// signed are the blocks of the reasoning items read since the last
	// assistant message: they go on the next one (a turn's reasoning
	// comes before its output).
	signed []signedBlock
}

func (b *msgBuilder) add(m chatMessage) {
	if m.Role != "tool" {
		b.flushImages()
	}
	if m.Role == "assistant" {
		m.ThinkingBlocks, b.signed = b.signed, nil
	} else if m.Role != "tool" {
		b.signed = nil // reasoning no assistant output followed
	}
	b.msgs = append(b.msgs, m)
}

func (b *msgBuilder) flushImages() {
	if len(b.images) == 0 {
		return
	}
	b.msgs = append(b.msgs, chatMessage{Role: "user", Content: b.images})
	b.images = nil
}

// addToolCall appends a tool call to the assistant message just before it, or
// starts a new assistant message.
func (b *msgBuilder) addToolCall(tc chatToolCall) {
	if n := len(b.msgs); n > 0 && len(b.images) == 0 && b.msgs[n-1].Role == "assistant" {
		b.msgs[n-1].ToolCalls = append(b.msgs[n-1].ToolCalls, tc)
		b.msgs[n-1].ThinkingBlocks = append(b.msgs[n-1].ThinkingBlocks, b.signed...)
		b.signed = nil
		return
	}
	b.add(chatMessage{Role: "assistant", ToolCalls: []chatToolCall{tc}})
}

func (b *msgBuilder) items(arr gjson.Result, path string) error {
	var err error
	i := 0
	arr.ForEach(func(_, it gjson.Result) bool {
		err = b.item(it, path+"["+strconv.Itoa(i)+"]")
		i++
		return err == nil
	})
	return err
}

func (b *msgBuilder) item(it gjson.Result, p string) error {
	if !it.IsObject() {
		return fieldErr(p, "must be an object")
	}
	typ := it.Get("type")
	if typ.Exists() && typ.Type != gjson.String {
		return fieldErr(p+".type", "must be a string")
	}
	switch typ.Str {
	case "message", "":
		if typ.Str == "" && !it.Get("role").Exists() {
			return fieldErr(p, "item has neither type nor role")
		}
		return b.message(it, p)
	case "function_call", "custom_tool_call":
		callID, err := requiredString(it, "call_id", p)
		if err != nil {
			return err
		}
		name, err := requiredString(it, "name", p)
		if err != nil {
			return err
		}
		var args string
		if typ.Str == "custom_tool_call" {
			input := it.Get("input")
			a, _ := marshal(map[string]string{"input": textOf(input)})
			args = string(a)
		} else {
			args = textOf(it.Get("arguments"))
		}
		b.addToolCall(chatToolCall{ID: callID, Type: "function", Function: chatCallFunction{Name: name, Arguments: args}})
	case "function_call_output", "custom_tool_call_output":
		callID, err := requiredString(it, "call_id", p)
		if err != nil {
			return err
		}
		text, err := b.toolOutput(it.Get("output"), p+".output")
		if err != nil {
			return err
		}
		b.add(chatMessage{Role: "tool", ToolCallID: callID, Content: text})
	case "local_shell_call":
		// Codex answers a local_shell_call with a function_call_output, so
		// keep the call (as a function call) to keep the pair intact.
		callID := it.Get("call_id").String()
		if callID == "" {
			callID = it.Get("id").String()
		}
		if callID == "" {
			return fieldErr(p+".call_id", "must be a non-empty string")
		}
		b.addToolCall(chatToolCall{ID: callID, Type: "function", Function: chatCallFunction{Name: "local_shell", Arguments: textOf(it.Get("action"))}})
	case "local_shell_call_output":
		callID := it.Get("call_id").String()
		if callID == "" {
			callID = it.Get("id").String()
		}
		if callID == "" {
			return fieldErr(p+".call_id", "must be a non-empty string")
		}
		text, err := b.toolOutput(it.Get("output"), p+".output")
		if err != nil {
			return err
		}
		b.add(chatMessage{Role: "tool", ToolCallID: callID, Content: text})
	case "reasoning":
		// Chat has no slot for reasoning, except the signed blocks this
		// gateway sealed into encrypted_content (an upstream's own
		// encrypted reasoning is opaque and dropped).
		b.signed = append(b.signed, openBlocks(it.Get("encrypted_content").String())...)
	case "item_reference":
		return fieldErr(p, "item_reference is not supported: the gateway keeps no server-side state; send the item itself")
	default:
		// reasoning (Chat has no slot for it), hosted-tool calls and their
		// outputs (web_search_call, mcp_*, computer_call, …), compaction and
		// anything newer: nothing a Chat upstream could take.
	}
	return nil
}

func requiredString(it gjson.Result, field, p string) (string, error) {
	v := it.Get(field)
	if v.Type != gjson.String || v.Str == "" {
		return "", fieldErr(p+"."+field, "must be a non-empty string")
	}
	return v.Str, nil
}

// textOf returns a string value as is and any other value as its JSON text.
func textOf(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return v.Str
	case gjson.Null:
		return ""
	}
	if !v.Exists() {
		return ""
	}
	return v.Raw
}

func (b *msgBuilder) message(it gjson.Result, p string) error {
	role := it.Get("role")
	if role.Type != gjson.String {
		return fieldErr(p+".role", "must be a string")
	}
	r := role.Str
	switch r {
	case "user", "assistant", "system":
	case "developer":
		r = "system"
	default:
		return fieldErr(p+".role", "unsupported role %q (want user, assistant, system or developer)", role.Str)
	}
	content := it.Get("content")
	switch {
	case content.Type == gjson.String:
		b.add(chatMessage{Role: r, Content: content.Str})
		return nil
	case !content.Exists() || content.Type == gjson.Null:
		b.add(chatMessage{Role: r, Content: ""})
		return nil
	case !content.IsArray():
		return fieldErr(p+".content", "must be a string or an array of content parts")
	}
	parts, err := contentParts(content, p+".content")
	if err != nil {
		return err
	}
	b.add(chatMessage{Role: r, Content: collapse(r, parts)})
	return nil
}

// collapse picks the Chat content shape: text-only content becomes a string
// (assistant parts concatenated, system parts joined by a blank line, a single
// user part as is); anything with media stays an array of parts.
func collapse(role string, parts []chatPart) any {
	texts := make([]string, 0, len(parts))
	for _, pt := range parts {
		if pt.Type != "text" {
			return parts
		}
		texts = append(texts, *pt.Text)
	}
	switch {
	case len(texts) == 0:
		return ""
	case len(texts) == 1:
		return texts[0]
	case role == "assistant":
		return strings.Join(texts, "")
	case role == "system":
		return strings.Join(texts, "\n\n")
	}
	return parts
}

func textPart(s string) chatPart { return chatPart{Type: "text", Text: &s} }

func contentParts(arr gjson.Result, p string) ([]chatPart, error) {
	var parts []chatPart
	var err error
	i := 0
	arr.ForEach(func(_, c gjson.Result) bool {
		var pt *chatPart
		pt, err = contentPart(c, p+"["+strconv.Itoa(i)+"]")
		if pt != nil {
			parts = append(parts, *pt)
		}
		i++
		return err == nil
	})
	return parts, err
}

// contentPart maps one Responses content part; unknown part types yield nil.
func contentPart(c gjson.Result, p string) (*chatPart, error) {
	if c.Type == gjson.String { // lenient: a bare string is text
		pt := textPart(c.Str)
		return &pt, nil
	}
	if !c.IsObject() {
		return nil, fieldErr(p, "must be an object")
	}
	switch typ := c.Get("type").String(); typ {
	case "input_text", "output_text", "text", "summary_text", "reasoning_text":
		t := c.Get("text")
		if t.Type != gjson.String {
			return nil, fieldErr(p+".text", "must be a string")
		}
		pt := textPart(t.Str)
		return &pt, nil
	case "refusal":
		pt := textPart(c.Get("refusal").String())
		return &pt, nil
	case "input_image", "image_url":
		u := c.Get("image_url")
		if u.IsObject() { // lenient: the Chat shape
			u = u.Get("url")
		}
		if u.Type != gjson.String || u.Str == "" {
			if c.Get("file_id").Type == gjson.String {
				return nil, fieldErr(p+".file_id", "images by file_id are not supported: send image_url (a URL or a data: URL)")
			}
			return nil, fieldErr(p+".image_url", "must be a non-empty string")
		}
		detail := c.Get("detail").String()
		return &chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: u.Str, Detail: detail}}, nil
	case "input_file":
		f := chatFile{FileData: c.Get("file_data").String(), FileID: c.Get("file_id").String(), Filename: c.Get("filename").String()}
		if f.FileData == "" && f.FileID == "" {
			if c.Get("file_url").Exists() {
				return nil, fieldErr(p+".file_url", "files by URL are not supported: send file_data")
			}
			return nil, fieldErr(p, "input_file needs file_data or file_id")
		}
		return &chatPart{Type: "file", File: &f}, nil
	case "input_audio":
		a := c.Get("input_audio")
		if !a.IsObject() {
			return nil, fieldErr(p+".input_audio", "must be an object")
		}
		return &chatPart{Type: "input_audio", InputAudio: json.RawMessage(a.Raw)}, nil
	}
	return nil, nil
}

// toolOutput renders a function_call_output's output as the tool message's
// text; media parts are queued to follow the tool messages.
func (b *msgBuilder) toolOutput(out gjson.Result, p string) (string, error) {
	if !out.IsArray() {
		return textOf(out), nil
	}
	parts, err := contentParts(out, p)
	if err != nil {
		return "", err
	}
	var text []string
	media := 0
	for _, pt := range parts {
		if pt.Type == "text" {
			text = append(text, *pt.Text)
			continue
		}
		b.images = append(b.images, pt)
		media++
	}
	s := strings.Join(text, "\n")
	if s == "" && media > 0 {
		s = "(the tool returned " + strconv.Itoa(media) + " attachment(s); they follow in the next message)"
	}
	return s, nil
}

// mergeLeadingSystem joins the leading run of text-only system messages into
// one.
func mergeLeadingSystem(msgs []chatMessage) []chatMessage {
	n := 0
	for n < len(msgs) && msgs[n].Role == "system" {
		if _, ok := msgs[n].Content.(string); !ok {
			break
		}
		n++
	}
	if n < 2 {
		return msgs
	}
	texts := make([]string, 0, n)
	for _, m := range msgs[:n] {
		if s := m.Content.(string); s != "" {
			texts = append(texts, s)
		}
	}
	merged := chatMessage{Role: "system", Content: strings.Join(texts, "\n\n")}
	return append([]chatMessage{merged}, msgs[n:]...)
}

// customToolNames returns the names of the request's freeform custom tools.
func customToolNames(tools gjson.Result) map[string]bool {
	var names map[string]bool
	tools.ForEach(func(_, t gjson.Result) bool {
		if t.Get("type").String() == "custom" {
			if n := t.Get("name"); n.Type == gjson.String && n.Str != "" {
				if names == nil {
					names = map[string]bool{}
				}
				names[n.Str] = true
			}
		}
		return true
	})
	return names
}

func mapTools(root gjson.Result, out *chatRequest) error {
	tools := root.Get("tools")
	var err error
	i := 0
	tools.ForEach(func(_, t gjson.Result) bool {
		p := "tools[" + strconv.Itoa(i) + "]"
		i++
		if !t.IsObject() {
			err = fieldErr(p, "must be an object")
			return false
		}
		switch t.Get("type").String() {
		case "function":
			fn := t
			if !t.Get("name").Exists() && t.Get("function").IsObject() { // lenient: the Chat shape
				fn = t.Get("function")
			}
			name := fn.Get("name")
			if name.Type != gjson.String || name.Str == "" {
				err = fieldErr(p+".name", "must be a non-empty string")
				return false
			}
			f := chatFunction{Name: name.Str, Description: fn.Get("description").String()}
			if params := fn.Get("parameters"); params.IsObject() {
				f.Parameters = json.RawMessage(params.Raw)
			}
			if fn.Get("strict").Type == gjson.True {
				strict := true
				f.Strict = &strict
			}
			out.Tools = append(out.Tools, chatTool{Type: "function", Function: f})
		case "custom":
			name := t.Get("name")
			if name.Type != gjson.String || name.Str == "" {
				err = fieldErr(p+".name", "must be a non-empty string")
				return false
			}
			desc := t.Get("description").String()
			if f := t.Get("format"); f.Get("type").String() == "grammar" {
				syntax := f.Get("syntax").String()
				if desc != "" {
					desc += "\n\n"
				}
				desc += "Pass the tool's raw input as the string argument \"input\". It must match this " + syntax + " grammar:\n" + f.Get("definition").String()
			}
			out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatFunction{
				Name: name.Str, Description: desc, Parameters: json.RawMessage(customInputSchema),
			}})
		default:
			// Hosted tools (web_search, file_search, local_shell, mcp,
			// computer_use, image_generation, code_interpreter, …) cannot run
			// behind a Chat upstream: dropped.
		}
		return true
	})
	if err != nil {
		return err
	}
	choice, err := mapToolChoice(root.Get("tool_choice"), out)
	if err != nil {
		return err
	}
	if len(out.Tools) == 0 {
		// Chat rejects tool_choice and parallel_tool_calls without tools.
		out.Tools = nil
		return nil
	}
	out.ToolChoice = choice
	if ptc := root.Get("parallel_tool_calls"); ptc.IsBool() {
		v := ptc.Bool()
		out.ParallelToolCalls = &v
	} else if ptc.Exists() && ptc.Type != gjson.Null {
		return fieldErr("parallel_tool_calls", "must be a boolean")
	}
	return nil
}

// mapToolChoice maps tool_choice; an allowed_tools choice narrows out.Tools to
// the allowed functions, which every Chat upstream understands.
func mapToolChoice(tc gjson.Result, out *chatRequest) (any, error) {
	switch {
	case !tc.Exists() || tc.Type == gjson.Null:
		return nil, nil
	case tc.Type == gjson.String:
		switch tc.Str {
		case "auto", "none", "required":
			return tc.Str, nil
		}
		return nil, fieldErr("tool_choice", "unsupported value %q (want auto, none or required)", tc.Str)
	case !tc.IsObject():
		return nil, fieldErr("tool_choice", "must be a string or an object")
	}
	switch tc.Get("type").String() {
	case "function", "custom":
		name := tc.Get("name")
		if !name.Exists() {
			name = tc.Get("function.name")
		}
		if name.Type != gjson.String || name.Str == "" {
			return nil, fieldErr("tool_choice.name", "must be a non-empty string")
		}
		return chatNamedChoice{Type: "function", Function: chatNamedFuncRef{Name: name.Str}}, nil
	case "allowed_tools":
		allowed := map[string]bool{}
		tc.Get("tools").ForEach(func(_, t gjson.Result) bool {
			if n := t.Get("name"); n.Type == gjson.String {
				allowed[n.Str] = true
			} else if n := t.Get("function.name"); n.Type == gjson.String {
				allowed[n.Str] = true
			}
			return true
		})
		kept := out.Tools[:0]
		for _, t := range out.Tools {
			if allowed[t.Function.Name] {
				kept = append(kept, t)
			}
		}
		out.Tools = kept
		switch mode := tc.Get("mode").String(); mode {
		case "required":
			return "required", nil
		case "auto", "":
			return "auto", nil
		default:
			return nil, fieldErr("tool_choice.mode", "unsupported value %q (want auto or required)", mode)
		}
	}
	// A hosted tool (web_search_preview, file_search, mcp, …): the tool was
	// dropped, so leave the choice to the model.
	return nil, nil
}

func mapScalars(root gjson.Result, out *chatRequest) error {
	for _, f := range [...]struct {
		name string
		dst  *json.RawMessage
	}{
		{"max_output_tokens", &out.MaxTokens},
		{"temperature", &out.Temperature},
		{"top_p", &out.TopP},
	} {
		v := root.Get(f.name)
		switch {
		case !v.Exists() || v.Type == gjson.Null:
		case v.Type == gjson.Number:
			*f.dst = json.RawMessage(v.Raw)
		default:
			return fieldErr(f.name, "must be a number")
		}
	}
	if u := root.Get("user"); u.Exists() && u.Type != gjson.Null {
		if u.Type != gjson.String {
			return fieldErr("user", "must be a string")
		}
		out.User = u.Str
	}
	if e := root.Get("reasoning.effort"); e.Exists() && e.Type != gjson.Null {
		if e.Type != gjson.String {
			return fieldErr("reasoning.effort", "must be a string")
		}
		out.ReasoningEffort = e.Str
	}
	switch s := root.Get("stream"); {
	case s.Type == gjson.True:
		out.Stream = true
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	case !s.Exists() || s.Type == gjson.Null || s.Type == gjson.False:
	default:
		return fieldErr("stream", "must be a boolean")
	}
	return nil
}

type chatJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type chatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *chatJSONSchema `json:"json_schema,omitempty"`
}

func mapTextFormat(f gjson.Result, out *chatRequest) error {
	if !f.Exists() || f.Type == gjson.Null {
		return nil
	}
	if !f.IsObject() {
		return fieldErr("text.format", "must be an object")
	}
	switch typ := f.Get("type").String(); typ {
	case "text":
	case "json_object":
		out.ResponseFormat = chatResponseFormat{Type: "json_object"}
	case "json_schema":
		s := &chatJSONSchema{Name: f.Get("name").String(), Description: f.Get("description").String()}
		if s.Name == "" {
			s.Name = "response"
		}
		if sc := f.Get("schema"); sc.IsObject() {
			s.Schema = json.RawMessage(sc.Raw)
		} else {
			return fieldErr("text.format.schema", "must be an object")
		}
		if st := f.Get("strict"); st.IsBool() {
			v := st.Bool()
			s.Strict = &v
		}
		out.ResponseFormat = chatResponseFormat{Type: "json_schema", JSONSchema: s}
	default:
		return fieldErr("text.format.type", "unsupported value %q (want text, json_object or json_schema)", typ)
	}
	return nil
}
