package gemini

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// syntheticIDPrefix starts the tool call ids this package makes up for
// Gemini function calls that carry none. They are never sent to Gemini: a
// call or response with such an id goes back without one.
const syntheticIDPrefix = "gcall_"

// syntheticID is the stable id of the function call at contents[ci].parts[pi]:
// the same conversation gets the same ids on every turn.
func syntheticID(ci, pi int) string {
	return syntheticIDPrefix + strconv.Itoa(ci) + "_" + strconv.Itoa(pi)
}

// Thinking budget thresholds for reasoning_effort (see the package doc).
const (
	budgetLow    = 1024
	budgetMedium = 8192
	budgetHigh   = 24576
	budgetMin    = 512 // "minimal"
)

// effortForBudget maps a thinkingBudget to a reasoning_effort; "" for the
// dynamic budget (-1), which lets the model choose.
func effortForBudget(budget int64) string {
	switch {
	case budget < 0:
		return ""
	case budget == 0:
		return "none"
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}

// budgetForEffort maps a reasoning_effort to a thinkingBudget; ok is false
// for an effort with no budget (unknown or empty).
func budgetForEffort(effort string) (int64, bool) {
	switch effort {
	case "none":
		return 0, true
	case "minimal":
		return budgetMin, true
	case "low":
		return budgetLow, true
	case "medium":
		return budgetMedium, true
	case "high", "xhigh", "max":
		return budgetHigh, true
	}
	return 0, false
}

// RequestToChat translates a Gemini generateContent request into an OpenAI
// Chat Completions request, for a Gemini-native client whose model is served
// by another format. model and stream come from the URL
// (models/{model}:generateContent or :streamGenerateContent), not the body.
func RequestToChat(body []byte, model string, stream bool) ([]byte, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return nil, err
	}
	out := chatRequest{Model: model}
	sys, err := systemText(pick(root, "systemInstruction", "system_instruction"), "systemInstruction")
	if err != nil {
		return nil, err
	}
	if sys != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: sys})
	}
	contents := root.Get("contents")
	if contents.Exists() && contents.Type != gjson.Null && !contents.IsArray() {
		return nil, inputErr("contents", "must be an array")
	}
	var c convo
	each(contents, func(i int, m gjson.Result) bool {
		err = c.content(m, i, &out)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if out.Messages == nil {
		out.Messages = []chatMessage{}
	}
	if stream {
		out.Stream = true
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if err := toolsToChat(root, &out); err != nil {
		return nil, err
	}
	if err := generationToChat(pick(root, "generationConfig", "generation_config"), &out); err != nil {
		return nil, err
	}
	return marshal(out)
}

// systemText reads a systemInstruction Content: its text parts joined with a
// blank line. A plain string is accepted too.
func systemText(sys gjson.Result, path string) (string, error) {
	switch {
	case sys.Type == gjson.Null:
		return "", nil
	case sys.Type == gjson.String:
		return sys.Str, nil
	case !sys.IsObject():
		return "", inputErr(path, "must be a Content object")
	}
	parts := sys.Get("parts")
	if parts.Exists() && parts.Type != gjson.Null && !parts.IsArray() {
		return "", inputErr(field(path, "parts"), "must be an array")
	}
	var texts []string
	var err error
	each(parts, func(i int, p gjson.Result) bool {
		pp := index(field(path, "parts"), i)
		if !p.IsObject() {
			err = inputErr(pp, "must be a Part object")
			return false
		}
		t := p.Get("text")
		if !t.Exists() {
			err = inputErr(pp, "system instructions must be text; send other content in a user turn")
			return false
		}
		var s string
		if s, err = optString(t, field(pp, "text")); err != nil {
			return false
		}
		if s != "" {
			texts = append(texts, s)
		}
		return true
	})
	return strings.Join(texts, "\n\n"), err
}

// pendingCall is a function call of the last model turn, for matching
// function responses that carry no id.
type pendingCall struct {
	id, name string
	answered bool
}

// convo tracks the calls of the last model turn across contents.
type convo struct {
	pending []pendingCall
}

// content appends the Chat messages for contents[ci].
func (c *convo) content(m gjson.Result, ci int, out *chatRequest) error {
	path := index("contents", ci)
	if !m.IsObject() {
		return inputErr(path, "must be a Content object")
	}
	role, err := optString(m.Get("role"), field(path, "role"))
	if err != nil {
		return err
	}
	parts := m.Get("parts")
	ppath := field(path, "parts")
	if parts.Exists() && parts.Type != gjson.Null && !parts.IsArray() {
		return inputErr(ppath, "must be an array")
	}
	switch role {
	case "model", "assistant":
		return c.modelTurn(parts, ci, ppath, out)
	case "", "user", "function", "tool":
		return c.userTurn(parts, ci, ppath, out)
	}
	return inputErr(field(path, "role"), `must be "user" or "model"`)
}

// modelTurn turns a model Content into one assistant message: text parts into
// content, thought parts into reasoning_content, function calls into
// tool_calls (their thought signatures kept in extra_content).
func (c *convo) modelTurn(parts gjson.Result, ci int, path string, out *chatRequest) error {
	var text, reasoning strings.Builder
	var calls []chatToolCall
	var err error
	c.pending = c.pending[:0]
	each(parts, func(pi int, p gjson.Result) bool {
		pp := index(path, pi)
		if !p.IsObject() {
			err = inputErr(pp, "must be a Part object")
			return false
		}
		if fc := pick(p, "functionCall", "function_call"); fc.Exists() {
			var tc chatToolCall
			if tc, err = functionCallToChat(fc, field(pp, "functionCall"), syntheticID(ci, pi)); err != nil {
				return false
			}
			tc.ExtraContent = signatureExtra(pick(p, "thoughtSignature", "thought_signature").String())
			calls = append(calls, tc)
			c.pending = append(c.pending, pendingCall{id: tc.ID, name: tc.Function.Name})
			return true
		}
		if pick(p, "functionResponse", "function_response").Exists() {
			err = inputErr(field(pp, "functionResponse"), "belongs in a user turn, after the model turn that called the function")
			return false
		}
		if t := p.Get("text"); t.Exists() {
			var s string
			if s, err = optString(t, field(pp, "text")); err != nil {
				return false
			}
			if p.Get("thought").Bool() {
				reasoning.WriteString(s)
			} else {
				text.WriteString(s)
			}
		}
		// inlineData (generated images), executableCode, codeExecutionResult:
		// output of Gemini-hosted features, no Chat form.
		return true
	})
	if err != nil {
		return err
	}
	msg := chatMessage{Role: "assistant", ReasoningContent: reasoning.String(), ToolCalls: calls}
	if text.Len() > 0 || len(calls) == 0 {
		msg.Content = text.String()
	}
	out.Messages = append(out.Messages, msg)
	return nil
}

// functionCallToChat converts a functionCall; fallbackID is used when it has no id.
func functionCallToChat(fc gjson.Result, path, fallbackID string) (chatToolCall, error) {
	if !fc.IsObject() {
		return chatToolCall{}, inputErr(path, "must be an object")
	}
	id, err := optString(fc.Get("id"), field(path, "id"))
	if err != nil {
		return chatToolCall{}, err
	}
	if id == "" {
		id = fallbackID
	}
	name, err := optString(fc.Get("name"), field(path, "name"))
	if err != nil {
		return chatToolCall{}, err
	}
	if name == "" {
		return chatToolCall{}, inputErr(field(path, "name"), "is required")
	}
	args := fc.Get("args")
	if args.Exists() && args.Type != gjson.Null && !args.IsObject() {
		return chatToolCall{}, inputErr(field(path, "args"), "must be an object")
	}
	return chatToolCall{ID: id, Type: "function", Function: chatFunction{Name: name, Arguments: argsToArguments(args)}}, nil
}

// userTurn splits a user Content: function responses become tool messages
// (first, as Chat needs them right after the assistant's tool calls), the
// rest one user message.
func (c *convo) userTurn(parts gjson.Result, ci int, path string, out *chatRequest) error {
	var chatParts []chatPart
	var err error
	hadTool := false
	each(parts, func(pi int, p gjson.Result) bool {
		pp := index(path, pi)
		if !p.IsObject() {
			err = inputErr(pp, "must be a Part object")
			return false
		}
		if fr := pick(p, "functionResponse", "function_response"); fr.Exists() {
			hadTool = true
			var msg chatMessage
			if msg, err = c.functionResponseToChat(fr, field(pp, "functionResponse"), ci, pi); err != nil {
				return false
			}
			out.Messages = append(out.Messages, msg)
			return true
		}
		if pick(p, "functionCall", "function_call").Exists() {
			err = inputErr(field(pp, "functionCall"), "belongs in a model turn")
			return false
		}
		var part *chatPart
		if part, err = partToChat(p, pp); err != nil {
			return false
		}
		if part != nil {
			chatParts = append(chatParts, *part)
		}
		return true
	})
	if err != nil {
		return err
	}
	switch {
	case len(chatParts) == 0 && hadTool:
	case len(chatParts) == 1 && chatParts[0].Type == "text":
		out.Messages = append(out.Messages, chatMessage{Role: "user", Content: chatParts[0].Text})
	case len(chatParts) == 0:
		out.Messages = append(out.Messages, chatMessage{Role: "user", Content: ""})
	default:
		out.Messages = append(out.Messages, chatMessage{Role: "user", Content: chatParts})
	}
	return nil
}

// functionResponseToChat turns a functionResponse into a tool message. Its
// id is the response's own; without one, the first unanswered call of the
// last model turn with the same name, else the first unanswered call.
func (c *convo) functionResponseToChat(fr gjson.Result, path string, ci, pi int) (chatMessage, error) {
	if !fr.IsObject() {
		return chatMessage{}, inputErr(path, "must be an object")
	}
	id, err := optString(fr.Get("id"), field(path, "id"))
	if err != nil {
		return chatMessage{}, err
	}
	name, err := optString(fr.Get("name"), field(path, "name"))
	if err != nil {
		return chatMessage{}, err
	}
	if id != "" {
		for i := range c.pending {
			if c.pending[i].id == id {
				c.pending[i].answered = true
				break
			}
		}
	} else {
		id = c.match(name)
		if id == "" {
			id = syntheticID(ci, pi)
		}
	}
	resp := fr.Get("response")
	if resp.Exists() && resp.Type != gjson.Null && !resp.IsObject() {
		return chatMessage{}, inputErr(field(path, "response"), "must be an object")
	}
	return chatMessage{Role: "tool", ToolCallID: id, Content: responseText(resp)}, nil
}

func (c *convo) match(name string) string {
	for i := range c.pending {
		if !c.pending[i].answered && c.pending[i].name == name {
			c.pending[i].answered = true
			return c.pending[i].id
		}
	}
	for i := range c.pending {
		if !c.pending[i].answered {
			c.pending[i].answered = true
			return c.pending[i].id
		}
	}
	return ""
}

// responseText turns a functionResponse.response object into tool message
// text: {"output": s} (Gemini CLI's form, and this package's) is s,
// {"error": s} is "Error: s", anything else its compact JSON.
func responseText(resp gjson.Result) string {
	if !resp.IsObject() {
		return ""
	}
	n := 0
	resp.ForEach(func(_, _ gjson.Result) bool { n++; return n < 2 })
	if n == 1 {
		if o := resp.Get("output"); o.Type == gjson.String {
			return o.Str
		}
		if e := resp.Get("error"); e.Type == gjson.String {
			return "Error: " + e.Str
		}
	}
	if c := compactRaw(resp.Raw); c != nil {
		return string(c)
	}
	return ""
}

// partToChat converts a user Part; nil means no Chat form worth sending.
func partToChat(p gjson.Result, path string) (*chatPart, error) {
	if t := p.Get("text"); t.Exists() {
		s, err := optString(t, field(path, "text"))
		if err != nil || s == "" || p.Get("thought").Bool() {
			return nil, err
		}
		return &chatPart{Type: "text", Text: s}, nil
	}
	if d := pick(p, "inlineData", "inline_data"); d.Exists() {
		dp := field(path, "inlineData")
		if !d.IsObject() {
			return nil, inputErr(dp, "must be an object")
		}
		mt, err := optString(pick(d, "mimeType", "mime_type"), field(dp, "mimeType"))
		if err != nil {
			return nil, err
		}
		data, err := optString(d.Get("data"), field(dp, "data"))
		if err != nil {
			return nil, err
		}
		if mt == "" {
			return nil, inputErr(field(dp, "mimeType"), "is required")
		}
		url := "data:" + mt + ";base64," + data
		if strings.HasPrefix(mt, "image/") {
			return &chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: url}}, nil
		}
		if strings.HasPrefix(mt, "text/") {
			return nil, inputErr(dp, "inline %s data cannot be sent to an OpenAI-format upstream; send it as a text part", mt)
		}
		return &chatPart{Type: "file", File: &chatFile{Filename: "document" + extFor(mt), FileData: url}}, nil
	}
	if f := pick(p, "fileData", "file_data"); f.Exists() {
		fp := field(path, "fileData")
		if !f.IsObject() {
			return nil, inputErr(fp, "must be an object")
		}
		mt, _ := optString(pick(f, "mimeType", "mime_type"), field(fp, "mimeType"))
		uri, err := optString(pick(f, "fileUri", "file_uri"), field(fp, "fileUri"))
		if err != nil {
			return nil, err
		}
		if uri == "" {
			return nil, inputErr(field(fp, "fileUri"), "is required")
		}
		if (strings.HasPrefix(mt, "image/") || mt == "") && (strings.HasPrefix(uri, "https://") || strings.HasPrefix(uri, "http://")) {
			return &chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: uri}}, nil
		}
		return nil, inputErr(fp, "file %q (%s) is stored with Google and cannot be sent to an OpenAI-format upstream; send the data inline", truncate(uri, 200), mt)
	}
	// thought-only parts, executableCode, codeExecutionResult, videoMetadata:
	// nothing for a Chat model to read.
	return nil, nil
}

// extFor names a file extension for a document's media type.
func extFor(mt string) string {
	switch mt {
	case "application/pdf":
		return ".pdf"
	case "application/json":
		return ".json"
	}
	return ""
}

// toolsToChat converts functionDeclarations and toolConfig.
func toolsToChat(root gjson.Result, out *chatRequest) error {
	tools := root.Get("tools")
	if tools.Exists() && tools.Type != gjson.Null && !tools.IsArray() {
		return inputErr("tools", "must be an array")
	}
	var err error
	each(tools, func(i int, t gjson.Result) bool {
		tp := index("tools", i)
		if !t.IsObject() {
			err = inputErr(tp, "must be a Tool object")
			return false
		}
		decls := pick(t, "functionDeclarations", "function_declarations")
		if decls.Exists() && decls.Type != gjson.Null && !decls.IsArray() {
			err = inputErr(field(tp, "functionDeclarations"), "must be an array")
			return false
		}
		// googleSearch, codeExecution, urlContext, …: hosted by Google, dropped.
		each(decls, func(j int, d gjson.Result) bool {
			dp := index(field(tp, "functionDeclarations"), j)
			var def chatToolDef
			if def, err = declToChat(d, dp); err != nil {
				return false
			}
			out.Tools = append(out.Tools, chatTool{Type: "function", Function: def})
			return true
		})
		return err == nil
	})
	if err != nil || len(out.Tools) == 0 {
		return err
	}
	fcc := pick(pick(root, "toolConfig", "tool_config"), "functionCallingConfig", "function_calling_config")
	if !fcc.IsObject() {
		return nil
	}
	mode, err := optString(fcc.Get("mode"), "toolConfig.functionCallingConfig.mode")
	if err != nil {
		return err
	}
	var allowed []string
	each(pick(fcc, "allowedFunctionNames", "allowed_function_names"), func(_ int, n gjson.Result) bool {
		if n.Type == gjson.String && n.Str != "" {
			allowed = append(allowed, n.Str)
		}
		return true
	})
	switch strings.ToUpper(mode) {
	case "AUTO", "VALIDATED":
		out.ToolChoice = "auto"
	case "ANY":
		if len(allowed) == 1 {
			var c chatNamedChoice
			c.Type = "function"
			c.Function.Name = allowed[0]
			out.ToolChoice = c
		} else {
			out.ToolChoice = "required"
		}
	case "NONE":
		out.ToolChoice = "none"
	case "", "MODE_UNSPECIFIED":
	default:
		return inputErr("toolConfig.functionCallingConfig.mode", "unknown mode %q", mode)
	}
	return nil
}

// declToChat converts one FunctionDeclaration: parametersJsonSchema passes as
// it is, parameters (OpenAPI subset) becomes JSON Schema.
func declToChat(d gjson.Result, path string) (chatToolDef, error) {
	if !d.IsObject() {
		return chatToolDef{}, inputErr(path, "must be a FunctionDeclaration object")
	}
	name, err := optString(d.Get("name"), field(path, "name"))
	if err != nil {
		return chatToolDef{}, err
	}
	if name == "" {
		return chatToolDef{}, inputErr(field(path, "name"), "is required")
	}
	desc, err := optString(d.Get("description"), field(path, "description"))
	if err != nil {
		return chatToolDef{}, err
	}
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	if js := pick(d, "parametersJsonSchema", "parameters_json_schema"); js.IsObject() {
		params = compactRaw(js.Raw)
	} else if ps := d.Get("parameters"); ps.IsObject() {
		if p := schemaFromGemini(ps); p != nil {
			params = p
		}
	} else if ps.Exists() && ps.Type != gjson.Null {
		return chatToolDef{}, inputErr(field(path, "parameters"), "must be a Schema object")
	}
	return chatToolDef{Name: name, Description: desc, Parameters: params}, nil
}

// generationToChat maps generationConfig.
func generationToChat(g gjson.Result, out *chatRequest) error {
	if g.Type == gjson.Null || !g.Exists() {
		return nil
	}
	if !g.IsObject() {
		return inputErr("generationConfig", "must be an object")
	}
	const p = "generationConfig."
	var err error
	if n, ok, err := optInt(pick(g, "maxOutputTokens", "max_output_tokens"), p+"maxOutputTokens"); err != nil {
		return err
	} else if ok {
		out.MaxTokens = []byte(strconv.FormatInt(n, 10))
	}
	if out.Temperature, err = optNumber(g.Get("temperature"), p+"temperature"); err != nil {
		return err
	}
	if out.TopP, err = optNumber(pick(g, "topP", "top_p"), p+"topP"); err != nil {
		return err
	}
	if n, ok, err := optInt(pick(g, "candidateCount", "candidate_count"), p+"candidateCount"); err != nil {
		return err
	} else if ok && n > 1 {
		out.N = []byte(strconv.FormatInt(n, 10))
	}
	if out.PresencePenalty, err = optNumber(pick(g, "presencePenalty", "presence_penalty"), p+"presencePenalty"); err != nil {
		return err
	}
	if out.FrequencyPenalty, err = optNumber(pick(g, "frequencyPenalty", "frequency_penalty"), p+"frequencyPenalty"); err != nil {
		return err
	}
	if n, ok, err := optInt(g.Get("seed"), p+"seed"); err != nil {
		return err
	} else if ok {
		out.Seed = []byte(strconv.FormatInt(n, 10))
	}
	stops := pick(g, "stopSequences", "stop_sequences")
	if stops.Exists() && stops.Type != gjson.Null && !stops.IsArray() {
		return inputErr(p+"stopSequences", "must be an array of strings")
	}
	each(stops, func(i int, s gjson.Result) bool {
		if s.Type != gjson.String {
			err = inputErr(index(p+"stopSequences", i), "must be a string")
			return false
		}
		out.Stop = append(out.Stop, s.Str)
		return true
	})
	if err != nil {
		return err
	}
	if err := responseFormatToChat(g, out); err != nil {
		return err
	}
	return thinkingToChat(pick(g, "thinkingConfig", "thinking_config"), out)
}

// responseFormatToChat maps responseMimeType and responseSchema /
// responseJsonSchema to response_format.
func responseFormatToChat(g gjson.Result, out *chatRequest) error {
	mt, err := optString(pick(g, "responseMimeType", "response_mime_type"), "generationConfig.responseMimeType")
	if err != nil {
		return err
	}
	var schema json.RawMessage
	if js := pick(g, "responseJsonSchema", "response_json_schema", "_responseJsonSchema"); js.IsObject() {
		schema = compactRaw(js.Raw)
	} else if s := pick(g, "responseSchema", "response_schema"); s.IsObject() {
		schema = schemaFromGemini(s)
	}
	switch {
	case schema != nil:
		out.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": schema}}
	case mt == "application/json":
		out.ResponseFormat = map[string]any{"type": "json_object"}
	}
	return nil
}

// thinkingToChat maps thinkingConfig to reasoning_effort: thinkingLevel as
// it is, thinkingBudget by the thresholds in the package doc.
func thinkingToChat(th gjson.Result, out *chatRequest) error {
	if th.Type == gjson.Null || !th.Exists() {
		return nil
	}
	if !th.IsObject() {
		return inputErr("generationConfig.thinkingConfig", "must be an object")
	}
	if lvl := strings.ToLower(pick(th, "thinkingLevel", "thinking_level").String()); lvl != "" {
		switch lvl {
		case "minimal", "low", "medium", "high":
			out.ReasoningEffort = lvl
		}
		return nil
	}
	budget, ok, err := optInt(pick(th, "thinkingBudget", "thinking_budget"), "generationConfig.thinkingConfig.thinkingBudget")
	if err != nil || !ok {
		return err
	}
	out.ReasoningEffort = effortForBudget(budget)
	return nil
}
