package responses

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
)

// CodeMalformedResponse is the UpstreamError code for a non-stream upstream
// body that is not a chat completion.
const CodeMalformedResponse = "MALFORMED_UPSTREAM_RESPONSE"

// ResponseFromChat translates a chat.completion into a Responses API response
// object. req is the client's original Responses request: the response echoes
// its instructions, tools, tool_choice, reasoning, text, metadata and sampling
// settings as the API does, and its custom tools decide which tool calls come
// back as custom_tool_call items. An unparsable req is treated as empty.
//
// The output holds, in order: a reasoning item when the message has
// reasoning_content (or reasoning) as its summary text (and, when the request
// includes reasoning.encrypted_content, the message's signed thinking_blocks
// sealed in its encrypted_content), a message item when it
// has text or a refusal, and one function_call item per tool call (call_id is
// the Chat tool call id). finish_reason "length" gives status "incomplete" with
// reason "max_output_tokens", "content_filter" reason "content_filter". An
// error body returns an *UpstreamError.
func ResponseFromChat(body []byte, req []byte) ([]byte, error) {
	if !jsonv.Valid(body) {
		return nil, &UpstreamError{Code: CodeMalformedResponse, Message: "the upstream answer is not valid JSON"}
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, &UpstreamError{Code: CodeMalformedResponse, Message: "the upstream answer is not a JSON object"}
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		return nil, upstreamError(e)
	}
	r := newResult(parseEcho(req))
	if m := root.Get("model"); m.Type == gjson.String && m.Str != "" {
		r.model = m.Str
	}
	if c := root.Get("created"); c.Type == gjson.Number && c.Int() > 0 {
		r.created = c.Int()
	}
	choice := root.Get("choices.0")
	msg := choice.Get("message")
	blocks := readBlocks(msg.Get("thinking_blocks"))
	if rs := reasoningText(msg); rs != "" || len(blocks) > 0 {
		it := r.add(kindReasoning)
		it.text = append(it.text, rs...)
		it.blocks, it.sealed = blocks, r.echo.sealed
	}
	text, refusal := contentText(msg.Get("content")), msg.Get("refusal").String()
	if text != "" || refusal != "" {
		it := r.add(kindMessage)
		if text != "" {
			it.parts = append(it.parts, part{text: []byte(text)})
		}
		if refusal != "" {
			it.parts = append(it.parts, part{refusal: true, text: []byte(refusal)})
		}
	}
	msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		fn := tc.Get("function")
		if !fn.IsObject() {
			return true
		}
		r.addCall(tc.Get("id").String(), fn.Get("name").String(), []byte(fn.Get("arguments").String()))
		return true
	})
	if fc := msg.Get("function_call"); fc.IsObject() { // legacy single function call
		r.addCall("", fc.Get("name").String(), []byte(fc.Get("arguments").String()))
	}
	status, reason := statusFor(choice.Get("finish_reason").String())
	for _, it := range r.items {
		it.status = "completed"
	}
	if status == "incomplete" && len(r.items) > 0 {
		r.items[len(r.items)-1].status = "incomplete"
	}
	r.usage = parseUsage(root.Get("usage"))
	return marshal(r.object(status, reason, nil))
}

// statusFor maps a Chat finish_reason to a response status and, for an
// incomplete one, its reason.
func statusFor(finish string) (status, reason string) {
	switch finish {
	case "length":
		return "incomplete", "max_output_tokens"
	case "content_filter":
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

func reasoningText(msg gjson.Result) string {
	if s := msg.Get("reasoning_content"); s.Type == gjson.String && s.Str != "" {
		return s.Str
	}
	if s := msg.Get("reasoning"); s.Type == gjson.String {
		return s.Str
	}
	return ""
}

// contentText returns a Chat content value's text: the string itself, or the
// text parts of an array joined.
func contentText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	if !c.IsArray() {
		return ""
	}
	var b []byte
	c.ForEach(func(_, p gjson.Result) bool {
		if t := p.Get("text"); t.Type == gjson.String {
			b = append(b, t.Str...)
		}
		return true
	})
	return string(b)
}

func upstreamError(e gjson.Result) *UpstreamError {
	if e.Type == gjson.String {
		return &UpstreamError{Code: CodeUpstreamError, Message: e.Str}
	}
	u := &UpstreamError{Code: CodeUpstreamError, Type: e.Get("type").String(), Message: e.Get("message").String()}
	if c := e.Get("code"); (c.Type == gjson.String && c.Str != "") || c.Type == gjson.Number {
		u.Code = c.String()
	} else if u.Type != "" {
		u.Code = u.Type
	}
	if u.Message == "" {
		u.Message = "the upstream reported an error"
		if e.Raw != "" {
			u.Message += ": " + e.Raw
		}
	}
	return u
}

// usageJSON is the Responses usage object.
type usageJSON struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

// parseUsage maps a Chat usage object; nil when there is none.
func parseUsage(u gjson.Result) *usageJSON {
	if !u.IsObject() {
		return nil
	}
	var o usageJSON
	o.InputTokens = u.Get("prompt_tokens").Int()
	o.OutputTokens = u.Get("completion_tokens").Int()
	o.InputTokensDetails.CachedTokens = u.Get("prompt_tokens_details.cached_tokens").Int()
	if o.InputTokensDetails.CachedTokens == 0 { // DeepSeek's spelling
		o.InputTokensDetails.CachedTokens = u.Get("prompt_cache_hit_tokens").Int()
	}
	o.OutputTokensDetails.ReasoningTokens = u.Get("completion_tokens_details.reasoning_tokens").Int()
	o.TotalTokens = u.Get("total_tokens").Int()
	if o.TotalTokens == 0 {
		o.TotalTokens = o.InputTokens + o.OutputTokens
	}
	return &o
}

func (u *usageJSON) usage() translate.Usage {
	if u == nil {
		return translate.Usage{}
	}
	return translate.Usage{
		InputTokens:     int(u.InputTokens),
		OutputTokens:    int(u.OutputTokens),
		CacheReadTokens: int(u.InputTokensDetails.CachedTokens),
		ReasoningTokens: int(u.OutputTokensDetails.ReasoningTokens),
	}
}

// echo holds what a response object repeats from the request.
type echo struct {
	model           string
	background      bool
	instructions    json.RawMessage
	maxOutputTokens json.RawMessage
	reasoning       json.RawMessage
	temperature     json.RawMessage
	text            json.RawMessage
	toolChoice      json.RawMessage
	tools           json.RawMessage
	topP            json.RawMessage
	metadata        json.RawMessage
	parallel        bool
	store           bool
	truncation      string
	user            *string
	custom          map[string]bool
	// sealed: the request's include asks for reasoning.encrypted_content,
	// which then carries a reasoning item's signed blocks (sealBlocks).
	sealed bool
}

func rawIf(v gjson.Result, ok bool, def string) json.RawMessage {
	if ok {
		return json.RawMessage(v.Raw)
	}
	if def == "" {
		return nil
	}
	return json.RawMessage(def)
}

// parseEcho reads the echoed fields from the client's request; an invalid
// request yields the defaults.
func parseEcho(req []byte) *echo {
	root := gjson.Result{}
	if jsonv.Valid(req) {
		if r := gjson.ParseBytes(req); r.IsObject() {
			root = r
		}
	}
	e := &echo{parallel: true, truncation: "disabled"}
	e.model = root.Get("model").String()
	e.background = root.Get("background").Type == gjson.True
	ins := root.Get("instructions")
	e.instructions = rawIf(ins, ins.Type == gjson.String || ins.IsArray(), "")
	mot := root.Get("max_output_tokens")
	e.maxOutputTokens = rawIf(mot, mot.Type == gjson.Number, "")
	effort, summary := root.Get("reasoning.effort"), root.Get("reasoning.summary")
	reasoning := struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	}{}
	if effort.Type == gjson.String {
		reasoning.Effort = &effort.Str
	}
	if summary.Type == gjson.String {
		reasoning.Summary = &summary.Str
	}
	e.reasoning, _ = marshal(reasoning)
	t := root.Get("temperature")
	e.temperature = rawIf(t, t.Type == gjson.Number, "")
	tp := root.Get("top_p")
	e.topP = rawIf(tp, tp.Type == gjson.Number, "")
	txt := root.Get("text")
	e.text = rawIf(txt, txt.IsObject(), `{"format":{"type":"text"}}`)
	tc := root.Get("tool_choice")
	e.toolChoice = rawIf(tc, tc.Type == gjson.String || tc.IsObject(), `"auto"`)
	tools := root.Get("tools")
	e.tools = rawIf(tools, tools.IsArray(), `[]`)
	md := root.Get("metadata")
	e.metadata = rawIf(md, md.IsObject(), `{}`)
	if p := root.Get("parallel_tool_calls"); p.IsBool() {
		e.parallel = p.Bool()
	}
	e.store = root.Get("store").Type == gjson.True
	if tr := root.Get("truncation"); tr.Type == gjson.String {
		e.truncation = tr.Str
	}
	if u := root.Get("user"); u.Type == gjson.String {
		e.user = &u.Str
	}
	if tools.IsArray() {
		e.custom = customToolNames(tools)
	}
	root.Get("include").ForEach(func(_, v gjson.Result) bool {
		e.sealed = e.sealed || v.String() == "reasoning.encrypted_content"
		return !e.sealed
	})
	return e
}

type itemKind uint8

const (
	kindMessage itemKind = iota
	kindReasoning
	kindFunctionCall
	kindCustomCall
)

// part is one content part of a message item.
type part struct {
	refusal bool
	text    []byte
}

// item is one output item being built.
type item struct {
	kind   itemKind
	index  int // output_index
	id     string
	status string
	parts  []part // message
	text   []byte // reasoning summary text
	// blocks are a reasoning item's signed thinking and redacted blocks,
	// sealed into encrypted_content when the client asked for it; cut is
	// how much of text the blocks already hold (streams).
	blocks []signedBlock
	cut    int
	sealed bool
	callID string
	name   string
	args   []byte // function arguments, or a custom call's raw Chat arguments
}

// result is a response under construction, shared by the one-shot and the
// streaming translation so both produce the same object.
type result struct {
	id      string
	created int64
	model   string
	items   []*item
	usage   *usageJSON
	echo    *echo
}

func newResult(e *echo) *result {
	return &result{id: "resp_" + randHex(), created: time.Now().Unix(), model: e.model, echo: e}
}

// randHex returns 24 random hex digits.
func randHex() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *result) add(k itemKind) *item {
	prefix := [...]string{kindMessage: "msg_", kindReasoning: "rs_", kindFunctionCall: "fc_", kindCustomCall: "ctc_"}[k]
	it := &item{kind: k, index: len(r.items), id: prefix + randHex(), status: "in_progress"}
	r.items = append(r.items, it)
	return it
}

// addCall adds a completed tool call item; a custom tool's call becomes a
// custom_tool_call.
func (r *result) addCall(id, name string, args []byte) *item {
	k := kindFunctionCall
	if r.echo.custom[name] {
		k = kindCustomCall
	}
	it := r.add(k)
	if id == "" {
		id = "call_" + randHex()
	}
	it.callID, it.name, it.args = id, name, args
	return it
}

// customInput extracts a custom tool's raw input from the Chat arguments the
// model produced for it ({"input": "..."}); anything else passes as is.
func customInput(args []byte) string {
	if jsonv.Valid(args) {
		if in := gjson.GetBytes(args, "input"); in.Type == gjson.String {
			return in.Str
		}
	}
	return string(args)
}

type outputTextJSON struct {
	Type        string     `json:"type"`
	Text        string     `json:"text"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
}

type refusalJSON struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

type messageJSON struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type summaryJSON struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type reasoningJSON struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	Summary          []summaryJSON `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

type functionCallJSON struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

type customCallJSON struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

func partJSON(p part) any {
	if p.refusal {
		return refusalJSON{Type: "refusal", Refusal: string(p.text)}
	}
	return outputTextJSON{Type: "output_text", Text: string(p.text), Annotations: []struct{}{}, Logprobs: []struct{}{}}
}

// json returns the item's wire shape. A streaming item that is still open has
// its content so far.
func (it *item) json() any {
	switch it.kind {
	case kindReasoning:
		s := []summaryJSON{}
		if len(it.text) > 0 || it.status != "in_progress" {
			s = append(s, summaryJSON{Type: "summary_text", Text: string(it.text)})
		}
		out := reasoningJSON{ID: it.id, Type: "reasoning", Summary: s}
		if it.sealed && it.status != "in_progress" {
			out.EncryptedContent = sealBlocks(it.blocks)
		}
		return out
	case kindFunctionCall:
		return functionCallJSON{ID: it.id, Type: "function_call", Status: it.status, Arguments: string(it.args), CallID: it.callID, Name: it.name}
	case kindCustomCall:
		input := ""
		if it.status != "in_progress" {
			input = customInput(it.args)
		}
		return customCallJSON{ID: it.id, Type: "custom_tool_call", Status: it.status, CallID: it.callID, Name: it.name, Input: input}
	}
	content := make([]any, 0, len(it.parts))
	for _, p := range it.parts {
		content = append(content, partJSON(p))
	}
	return messageJSON{ID: it.id, Type: "message", Status: it.status, Role: "assistant", Content: content}
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// OmnirouteCode is the gateway's own code when Code had to be mapped
	// into the spec's enum (errorCodeFor).
	OmnirouteCode string `json:"omniroute_code,omitempty"`
}

// specErrorCode reports a code of the enum of a Response's error.code in
// OpenAI's API reference (ResponseError.code): typed clients with a closed
// enum reject any other value.
func specErrorCode(code string) bool {
	switch code {
	case "server_error", "rate_limit_exceeded", "invalid_prompt", "vector_store_timeout",
		"invalid_image", "invalid_image_format", "invalid_base64_image", "invalid_image_url",
		"image_too_large", "image_too_small", "image_parse_error", "image_content_policy_violation",
		"invalid_image_mode", "image_file_too_large", "unsupported_image_media_type",
		"empty_image_file", "failed_to_download_image", "image_file_not_found":
		return true
	}
	return false
}

// errorCodeFor is a response.failed error for a gateway (or upstream) code:
// a code of the spec's enum passes as it is; any other is mapped into the
// enum — rate and concurrency limits and quotas to rate_limit_exceeded, a
// request the upstream refused (context length, content policy, bad
// request) to invalid_prompt (Codex CLI does not retry it), anything else to
// server_error — and kept in omniroute_code.
func errorCodeFor(code, message string) *errorJSON {
	if specErrorCode(code) {
		return &errorJSON{Code: code, Message: message}
	}
	spec := "server_error"
	switch code {
	case "UPSTREAM_RATE_LIMITED", "UPSTREAM_CONCURRENCY_LIMITED", "UPSTREAM_QUOTA_EXHAUSTED", "CREDITS_EXHAUSTED",
		"insufficient_quota", "rate_limit_error":
		spec = "rate_limit_exceeded"
	case "CONTEXT_LENGTH_EXCEEDED", "CONTENT_POLICY_VIOLATION", "UPSTREAM_BAD_REQUEST", "UPSTREAM_REQUEST_REJECTED",
		"context_length_exceeded", "content_policy_violation":
		spec = "invalid_prompt"
	}
	return &errorJSON{Code: spec, Message: message, OmnirouteCode: code}
}

type incompleteJSON struct {
	Reason string `json:"reason"`
}

// responseJSON is the Responses response object; field order is the wire
// order.
type responseJSON struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	CreatedAt          int64           `json:"created_at"`
	Status             string          `json:"status"`
	Background         bool            `json:"background"`
	Error              *errorJSON      `json:"error"`
	IncompleteDetails  *incompleteJSON `json:"incomplete_details"`
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    json.RawMessage `json:"max_output_tokens"`
	Model              string          `json:"model"`
	Output             []any           `json:"output"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Reasoning          json.RawMessage `json:"reasoning"`
	Store              bool            `json:"store"`
	Temperature        json.RawMessage `json:"temperature"`
	Text               json.RawMessage `json:"text"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              json.RawMessage `json:"tools"`
	TopP               json.RawMessage `json:"top_p"`
	Truncation         string          `json:"truncation"`
	Usage              *usageJSON      `json:"usage"`
	User               *string         `json:"user,omitempty"`
	Metadata           json.RawMessage `json:"metadata"`
}

// object returns the response object with the given status.
func (r *result) object(status, incompleteReason string, e *errorJSON) responseJSON {
	o := responseJSON{
		ID: r.id, Object: "response", CreatedAt: r.created, Status: status,
		Background: r.echo.background, Error: e,
		Instructions: r.echo.instructions, MaxOutputTokens: r.echo.maxOutputTokens,
		Model: r.model, Output: make([]any, 0, len(r.items)),
		ParallelToolCalls: r.echo.parallel, Reasoning: r.echo.reasoning, Store: r.echo.store,
		Temperature: r.echo.temperature, Text: r.echo.text, ToolChoice: r.echo.toolChoice,
		Tools: r.echo.tools, TopP: r.echo.topP, Truncation: r.echo.truncation,
		Usage: r.usage, User: r.echo.user, Metadata: r.echo.metadata,
	}
	if incompleteReason != "" {
		o.IncompleteDetails = &incompleteJSON{Reason: incompleteReason}
	}
	for _, it := range r.items {
		o.Output = append(o.Output, it.json())
	}
	return o
}
