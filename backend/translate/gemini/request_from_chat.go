package gemini

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
)

// maxStopSequences is Gemini's limit on stopSequences; more are dropped.
const maxStopSequences = 5

// skipSignature is the value Google documents for a function call in history
// that has no thought signature (a conversation that did not come from
// Gemini): Gemini 3 rejects a function call turn without one.
const skipSignature = "skip_thought_signature_validator"

// RequestFromChat translates an OpenAI Chat Completions request into a Gemini
// generateContent body, for a Gemini upstream. The model and whether to
// stream are not part of a Gemini body: the caller puts them in the URL
// (models/{model}:generateContent or :streamGenerateContent?alt=sse).
func RequestFromChat(body []byte) ([]byte, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return nil, err
	}
	msgs := root.Get("messages")
	if !msgs.IsArray() {
		return nil, inputErr("messages", "must be an array")
	}
	var out gemRequest
	b := contentBuilder{names: map[string]string{}}
	var system []gemPart
	each(msgs, func(i int, m gjson.Result) bool {
		var sys string
		var isSys bool
		if sys, isSys, err = b.add(m, index("messages", i)); err != nil {
			return false
		}
		if isSys && sys != "" {
			system = append(system, textPart(sys))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out.Contents = b.contents
	if len(system) > 0 {
		out.SystemInstruction = &gemContent{Parts: system}
	}
	if err := toolsFromChat(root, &out); err != nil {
		return nil, err
	}
	g, err := generationFromChat(root)
	if err != nil {
		return nil, err
	}
	if !g.empty() {
		out.GenerationConfig = g
	}
	if len(out.Contents) == 0 {
		return nil, inputErr("messages", "holds no user or assistant content; Gemini needs at least one non-empty message besides the system prompt")
	}
	return marshal(out)
}

// contentBuilder accumulates Gemini contents: consecutive user-side messages
// (tool results and the user text after them) share one user Content, and
// function responses get the name of the call they answer.
type contentBuilder struct {
	contents []gemContent
	names    map[string]string // tool call id → function name
}

// appendParts adds parts to the last Content when it has the same role.
func (b *contentBuilder) appendParts(role string, parts []gemPart) {
	if len(parts) == 0 {
		return
	}
	if n := len(b.contents); n > 0 && b.contents[n-1].Role == role {
		b.contents[n-1].Parts = append(b.contents[n-1].Parts, parts...)
		return
	}
	b.contents = append(b.contents, gemContent{Role: role, Parts: parts})
}

// add converts one Chat message; a system/developer message is returned as text.
func (b *contentBuilder) add(m gjson.Result, path string) (system string, isSystem bool, err error) {
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
		parts, err := userPartsFromChat(content, cpath)
		if err != nil {
			return "", false, err
		}
		// An empty message has no Gemini form: a part must hold data, and
		// {"text":""} is read as holding none (proto3 JSON), a 400.
		b.appendParts("user", parts)
		return "", false, nil
	case "assistant":
		parts, err := b.assistantFromChat(m, path)
		if err != nil {
			return "", false, err
		}
		b.appendParts("model", parts)
		return "", false, nil
	case "tool":
		part, err := b.toolFromChat(m, path)
		if err != nil {
			return "", false, err
		}
		b.appendParts("user", []gemPart{part})
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
			key := "text"
			switch p.Get("type").String() {
			case "text", "input_text", "output_text":
			case "refusal":
				key = "refusal"
			default:
				return true
			}
			var s string
			if s, err = optString(p.Get(key), field(pp, key)); err != nil {
				return false
			}
			sb.WriteString(s)
			return true
		})
		return sb.String(), err
	}
	return "", inputErr(path, "must be a string or an array of content parts")
}

// userPartsFromChat converts user content into Gemini parts.
func userPartsFromChat(content gjson.Result, path string) ([]gemPart, error) {
	switch {
	case content.Type == gjson.Null:
		return nil, nil
	case content.Type == gjson.String:
		if content.Str == "" {
			return nil, nil
		}
		return []gemPart{textPart(content.Str)}, nil
	case !content.IsArray():
		return nil, inputErr(path, "must be a string or an array of content parts")
	}
	var out []gemPart
	var err error
	each(content, func(i int, p gjson.Result) bool {
		var part *gemPart
		if part, err = partFromChat(p, index(path, i)); err != nil {
			return false
		}
		if part != nil {
			out = append(out, *part)
		}
		return true
	})
	return out, err
}

// partFromChat converts one Chat content part; nil means nothing to send.
func partFromChat(p gjson.Result, path string) (*gemPart, error) {
	if !p.IsObject() {
		return nil, inputErr(path, "must be a content part")
	}
	switch t := p.Get("type").String(); t {
	case "text", "input_text":
		s, err := optString(p.Get("text"), field(path, "text"))
		if err != nil || s == "" {
			return nil, err
		}
		part := textPart(s)
		return &part, nil
	case "image_url":
		u := p.Get("image_url")
		if u.IsObject() {
			u = u.Get("url")
		}
		url, err := optString(u, field(path, "image_url.url"))
		if err != nil {
			return nil, err
		}
		return mediaFromURL(url, field(path, "image_url.url"))
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
			return nil, inputErr(field(path, "file"), "only inline file_data can be sent to a Gemini upstream")
		}
		mt, b64, ok := parseDataURL(data)
		if !ok {
			return nil, inputErr(field(path, "file.file_data"), "must be a base64 data: URL")
		}
		return &gemPart{InlineData: &gemBlob{MimeType: mt, Data: b64}}, nil
	case "":
		return nil, inputErr(field(path, "type"), "is required")
	default:
		return nil, inputErr(field(path, "type"), "content part type %q cannot be sent to a Gemini upstream", t)
	}
}

// mediaFromURL turns an image URL into inlineData (data: URLs) or fileData.
func mediaFromURL(url, p string) (*gemPart, error) {
	if strings.HasPrefix(url, "data:") {
		mt, b64, ok := parseDataURL(url)
		if !ok {
			return nil, inputErr(p, "data: URLs must be base64-encoded")
		}
		return &gemPart{InlineData: &gemBlob{MimeType: mt, Data: b64}}, nil
	}
	if url == "" {
		return nil, inputErr(p, "is required")
	}
	return &gemPart{FileData: &gemFileData{MimeType: imageTypeFor(url), FileURI: url}}, nil
}

// imageTypeFor guesses an image URL's media type from its extension (Gemini
// needs one with fileData).
func imageTypeFor(url string) string {
	u, _, _ := strings.Cut(url, "?")
	switch strings.ToLower(path.Ext(u)) {
	case ".png":
		return "image/png"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".heic":
		return "image/heic"
	}
	return "image/jpeg"
}

// assistantFromChat converts an assistant message into model parts: text,
// then function calls. Reasoning text has no signature to replay and is left
// out; a call's thought signature comes from extra_content, and the first
// call of the turn without one gets Google's documented placeholder.
func (b *contentBuilder) assistantFromChat(m gjson.Result, p string) ([]gemPart, error) {
	var out []gemPart
	text, err := textOf(m.Get("content"), field(p, "content"))
	if err != nil {
		return nil, err
	}
	if text != "" {
		out = append(out, textPart(text))
	}
	calls := m.Get("tool_calls")
	if calls.Exists() && calls.Type != gjson.Null && !calls.IsArray() {
		return nil, inputErr(field(p, "tool_calls"), "must be an array")
	}
	first := true
	each(calls, func(i int, c gjson.Result) bool {
		var part gemPart
		if part, err = b.toolCallFromChat(c, index(field(p, "tool_calls"), i)); err != nil {
			return false
		}
		if first && part.ThoughtSignature == "" {
			part.ThoughtSignature = skipSignature
		}
		first = false
		out = append(out, part)
		return true
	})
	return out, err
}

func (b *contentBuilder) toolCallFromChat(c gjson.Result, p string) (gemPart, error) {
	if !c.IsObject() {
		return gemPart{}, inputErr(p, "must be an object")
	}
	id, err := optString(c.Get("id"), field(p, "id"))
	if err != nil {
		return gemPart{}, err
	}
	fn := c.Get("function")
	if !fn.IsObject() {
		return gemPart{}, inputErr(field(p, "function"), "must be an object")
	}
	name, err := optString(fn.Get("name"), field(p, "function.name"))
	if err != nil {
		return gemPart{}, err
	}
	if name == "" {
		return gemPart{}, inputErr(field(p, "function.name"), "is required")
	}
	args := fn.Get("arguments")
	var a json.RawMessage
	switch {
	case args.Type == gjson.String:
		a = argumentsToArgs(args.Str)
	case args.IsObject():
		a = compactRaw(args.Raw)
	case args.Type == gjson.Null:
		a = json.RawMessage("{}")
	default:
		return gemPart{}, inputErr(field(p, "function.arguments"), "must be a string")
	}
	if id != "" {
		b.names[id] = name
	}
	sig, _ := optString(c.Get("extra_content.google.thought_signature"), field(p, "extra_content.google.thought_signature"))
	return gemPart{FunctionCall: &gemFunctionCall{ID: wireID(id), Name: name, Args: a}, ThoughtSignature: sig}, nil
}

// wireID is the id sent to Gemini: none for an id this package made up.
func wireID(id string) string {
	if strings.HasPrefix(id, syntheticIDPrefix) {
		return ""
	}
	return id
}

// toolFromChat converts a role "tool" message into a functionResponse part
// named after the call it answers: a JSON object result is the response
// itself, other text {"output": text}.
func (b *contentBuilder) toolFromChat(m gjson.Result, p string) (gemPart, error) {
	id := m.Get("tool_call_id")
	if id.Type != gjson.String || id.Str == "" {
		return gemPart{}, inputErr(field(p, "tool_call_id"), "must be a non-empty string")
	}
	name := b.names[id.Str]
	if name == "" {
		if n := m.Get("name"); n.Type == gjson.String && n.Str != "" {
			name = n.Str
		} else {
			return gemPart{}, inputErr(field(p, "tool_call_id"), "answers no tool call of an earlier assistant message; Gemini needs the function's name")
		}
	}
	text, err := textOf(m.Get("content"), field(p, "content"))
	if err != nil {
		return gemPart{}, err
	}
	var resp json.RawMessage
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") && jsonv.Valid([]byte(t)) && gjson.Parse(t).IsObject() {
		resp = compactRaw(t)
	}
	if resp == nil {
		resp, _ = marshal(map[string]string{"output": text})
	}
	return gemPart{FunctionResponse: &gemFunctionResp{ID: wireID(id.Str), Name: name, Response: resp}}, nil
}

// toolsFromChat converts tools and tool_choice.
func toolsFromChat(root gjson.Result, out *gemRequest) error {
	tools := root.Get("tools")
	if tools.Exists() && tools.Type != gjson.Null && !tools.IsArray() {
		return inputErr("tools", "must be an array")
	}
	var decls []gemFunctionDecl
	var err error
	each(tools, func(i int, t gjson.Result) bool {
		p := index("tools", i)
		if !t.IsObject() {
			err = inputErr(p, "must be an object")
			return false
		}
		if typ := t.Get("type").String(); typ != "function" && typ != "" {
			return true // custom and hosted tools have no Gemini form
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
		ps := fn.Get("parameters")
		if ps.Exists() && ps.Type != gjson.Null && !ps.IsObject() {
			err = inputErr(field(p, "function.parameters"), "must be an object")
			return false
		}
		decls = append(decls, gemFunctionDecl{Name: name, Description: desc, Parameters: schemaToGemini(ps)})
		return true
	})
	if err != nil || len(decls) == 0 {
		return err
	}
	out.Tools = []gemTool{{FunctionDeclarations: decls}}
	tc := root.Get("tool_choice")
	var cfg gemFCConfig
	switch {
	case tc.Type == gjson.Null || !tc.Exists():
		return nil
	case tc.Type == gjson.String:
		switch tc.Str {
		case "auto":
			cfg.Mode = "AUTO"
		case "required":
			cfg.Mode = "ANY"
		case "none":
			cfg.Mode = "NONE"
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
			cfg = gemFCConfig{Mode: "ANY", AllowedFunctionNames: []string{name}}
		case "allowed_tools":
			cfg.Mode = "AUTO"
			if tc.Get("allowed_tools.mode").String() == "required" {
				cfg.Mode = "ANY"
			}
			each(tc.Get("allowed_tools.tools"), func(_ int, t gjson.Result) bool {
				if n := t.Get("function.name").String(); n != "" {
					cfg.AllowedFunctionNames = append(cfg.AllowedFunctionNames, n)
				}
				return true
			})
		default:
			return inputErr("tool_choice.type", "unknown tool_choice type %q", tc.Get("type").String())
		}
	default:
		return inputErr("tool_choice", "must be a string or an object")
	}
	out.ToolConfig = &gemToolCfg{FunctionCallingConfig: cfg}
	return nil
}

// generationFromChat maps sampling, limits, response_format and reasoning to
// generationConfig.
func generationFromChat(root gjson.Result) (*gemGenConfig, error) {
	g := &gemGenConfig{}
	var err error
	maxTok, ok, err := optInt(root.Get("max_completion_tokens"), "max_completion_tokens")
	if err != nil {
		return nil, err
	}
	if !ok {
		if maxTok, ok, err = optInt(root.Get("max_tokens"), "max_tokens"); err != nil {
			return nil, err
		}
	}
	if ok {
		g.MaxOutputTokens = json.RawMessage(jsonInt(maxTok))
	}
	if g.Temperature, err = optNumber(root.Get("temperature"), "temperature"); err != nil {
		return nil, err
	}
	if g.TopP, err = optNumber(root.Get("top_p"), "top_p"); err != nil {
		return nil, err
	}
	if n, ok, err := optInt(root.Get("n"), "n"); err != nil {
		return nil, err
	} else if ok && n > 1 {
		g.CandidateCount = json.RawMessage(jsonInt(n))
	}
	if g.PresencePenalty, err = optNumber(root.Get("presence_penalty"), "presence_penalty"); err != nil {
		return nil, err
	}
	if g.FrequencyPenalty, err = optNumber(root.Get("frequency_penalty"), "frequency_penalty"); err != nil {
		return nil, err
	}
	if n, ok, err := optInt(root.Get("seed"), "seed"); err != nil {
		return nil, err
	} else if ok {
		g.Seed = json.RawMessage(jsonInt(n))
	}
	stop := root.Get("stop")
	switch {
	case stop.Type == gjson.String:
		if stop.Str != "" {
			g.StopSequences = []string{stop.Str}
		}
	case stop.IsArray():
		each(stop, func(i int, s gjson.Result) bool {
			if s.Type != gjson.String {
				err = inputErr(index("stop", i), "must be a string")
				return false
			}
			if s.Str != "" && len(g.StopSequences) < maxStopSequences {
				g.StopSequences = append(g.StopSequences, s.Str)
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	case stop.Type != gjson.Null:
		return nil, inputErr("stop", "must be a string or an array of strings")
	}
	if err := responseFormatFromChat(root.Get("response_format"), g); err != nil {
		return nil, err
	}
	if err := thinkingFromChat(root, g); err != nil {
		return nil, err
	}
	return g, nil
}

func jsonInt(n int64) string { return string(appendInt(nil, int(n))) }

// responseFormatFromChat maps response_format to responseMimeType and responseSchema.
func responseFormatFromChat(rf gjson.Result, g *gemGenConfig) error {
	if rf.Type == gjson.Null || !rf.Exists() {
		return nil
	}
	if !rf.IsObject() {
		return inputErr("response_format", "must be an object")
	}
	switch rf.Get("type").String() {
	case "json_object":
		g.ResponseMimeType = "application/json"
	case "json_schema":
		g.ResponseMimeType = "application/json"
		s := rf.Get("json_schema.schema")
		if s.Exists() && s.Type != gjson.Null && !s.IsObject() {
			return inputErr("response_format.json_schema.schema", "must be an object")
		}
		g.ResponseSchema = schemaToGemini(s)
	}
	return nil
}

// thinkingFromChat maps reasoning_effort (or OpenRouter's reasoning object)
// to thinkingConfig, asking for the thoughts back when thinking is on.
func thinkingFromChat(root gjson.Result, g *gemGenConfig) error {
	effort, err := optString(root.Get("reasoning_effort"), "reasoning_effort")
	if err != nil {
		return err
	}
	var budget int64
	have := false
	if r := root.Get("reasoning"); r.IsObject() {
		if effort == "" {
			effort = r.Get("effort").String()
		}
		if n, ok, err := optInt(r.Get("max_tokens"), "reasoning.max_tokens"); err != nil {
			return err
		} else if ok && n >= 0 {
			budget, have = n, true
		}
		if r.Get("enabled").Type == gjson.False {
			budget, have = 0, true
		}
	}
	if !have {
		budget, have = budgetForEffort(effort)
	}
	if !have {
		return nil
	}
	b := budget
	g.ThinkingConfig = &gemThinking{ThinkingBudget: &b, IncludeThoughts: budget > 0}
	return nil
}
