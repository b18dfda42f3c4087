package fakeupstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// The fake Gemini API (generativelanguage v1beta), written from Google's
// public API reference:
//
//   - POST /v1beta/models/{model}:generateContent: a GenerateContentResponse;
//   - POST /v1beta/models/{model}:streamGenerateContent?alt=sse: one
//     "data: {chunk}" event per chunk (CRLF-terminated, as Google writes
//     them); without alt=sse the chunks are the elements of one JSON array,
//     written as they come ("[{…}", ",\r\n{…}", "]");
//   - POST /v1beta/models/{model}:countTokens: {"totalTokens": N};
//   - POST /v1beta/models/{model}:batchEmbedContents {requests:[{model:
//     "models/{model}", content:{parts:[{text}]}, outputDimensionality?}]}:
//     {embeddings:[{values:[…]}]}, one per request in order, the values
//     those of the OpenAI route's vector for the text (cut to
//     outputDimensionality), and no token counts (Google sends none);
//     an item naming another model is Google's 400;
//   - GET /v1beta/models (pageSize, pageToken → nextPageToken) and
//     GET /v1beta/models/{model}.
//
// The key is x-goog-api-key (or ?key=); without one Google answers 403
// PERMISSION_DENIED. A request breaking the wire contract gets Google's 400
// INVALID_ARGUMENT (GeminiContractError says what): the fields Google would
// not know (a Chat body, "additionalProperties" or "$schema" in a function's
// parameters), an empty properties object, roles other than user and model,
// empty parts, a part without data ({"text":""} is none), a function-call turn answered by a different number of
// function responses, and, for gemini-3 models, a function-call turn whose
// first call has no thoughtSignature.
//
// Answers follow the package rules in Gemini's shape: a user turn holding a
// functionResponse (the last content) is answered ToolResultText(its
// response.output, or the response's JSON); a request with
// functionDeclarations gets a call to the first one (or the scripted tool
// of SetToolCalls) with ToolArguments as args, WITHOUT an id (Google's API
// sends none) and with GeminiThoughtSignature; otherwise Content(key).
// generationConfig.thinkingConfig.includeThoughts asks for ReasoningText as
// thought parts first. Streams send each block in DefaultStreamChunks chunks
// (a function call in one chunk: Gemini streams calls whole), then a last
// chunk with finishReason STOP and the usageMetadata (thoughtsTokenCount
// counting the reasoning chunks). Faults apply per key as on the other
// routes, with Google's error bodies (ErrorBody(FormatGemini, status)).

// GeminiThoughtSignature is the thoughtSignature on the fake's function calls.
const GeminiThoughtSignature = "ZmFrZS10aG91Z2h0LXNpZ25hdHVyZQ=="

// fakeGeminiResponseID is the responseId of every Gemini answer.
const fakeGeminiResponseID = "fake-gemini-response"

// DefaultGeminiModels is the model list GET /v1beta/models answers unless
// SetGeminiModels says otherwise.
func DefaultGeminiModels() []string {
	return []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro-preview"}
}

// Google's error bodies, in the shape generativelanguage sends them.
const (
	// GeminiRateLimitBody is the 429 of a per-minute quota (retry in 37 s).
	GeminiRateLimitBody = `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"10"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`
	// GeminiQuotaPerDayBody is the 429 of an exhausted daily quota: its
	// RetryInfo names seconds, yet the quota is only back the next day.
	GeminiQuotaPerDayBody = `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-pro"},"quotaValue":"50"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"22s"}]}}`
	// GeminiUnavailableBody is the 503 of an overloaded model.
	GeminiUnavailableBody = `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`
	// GeminiServerErrorBody is Google's 500.
	GeminiServerErrorBody = `{"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}}`
	// GeminiPermissionDeniedBody is the 403 of a project where the API is disabled.
	GeminiPermissionDeniedBody = `{"error":{"code":403,"message":"Generative Language API has not been used in project 000000000000 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/generativelanguage.googleapis.com/overview?project=000000000000 then retry.","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com","consumer":"projects/000000000000"}}]}}`
	// GeminiMissingKeyBody is the 403 for a request without a key.
	GeminiMissingKeyBody = `{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}`
	// GeminiInvalidKeyBody is the 400 for a wrong API key.
	GeminiInvalidKeyBody = `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`
	// GeminiInvalidArgumentBody is a 400 for a malformed request.
	GeminiInvalidArgumentBody = `{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`
	// GeminiFailedPreconditionBody is the 400 of a region without API access.
	GeminiFailedPreconditionBody = `{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}`
	// GeminiNotFoundBody is the 404 for an unknown model.
	GeminiNotFoundBody = `{"error":{"code":404,"message":"models/fake-missing-model is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.","status":"NOT_FOUND"}}`
	// GeminiStreamErrorData is the in-stream error chunk of ModeErrorEvent.
	GeminiStreamErrorData = GeminiUnavailableBody
	// MalformedGeminiData is the invalid chunk of ModeMalformedEvent.
	MalformedGeminiData = `{"candidates":[{"content":{"parts":[{"text":"malformed`
)

// geminiErrorBody is Google's error body for status.
func geminiErrorBody(status int) string {
	switch status {
	case http.StatusBadRequest:
		return GeminiInvalidArgumentBody
	case http.StatusForbidden:
		return GeminiPermissionDeniedBody
	case http.StatusNotFound:
		return GeminiNotFoundBody
	case http.StatusTooManyRequests:
		return GeminiRateLimitBody
	case http.StatusInternalServerError:
		return GeminiServerErrorBody
	case http.StatusServiceUnavailable:
		return GeminiUnavailableBody
	}
	return googleError(status, geminiStatus(status), statusText(status))
}

// geminiStatus is the google.rpc.Code name Google pairs with an HTTP status.
func geminiStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// googleError renders {"error":{code, message, status}}.
func googleError(code int, status, message string) string {
	return string(mustJSON(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}}))
}

// geminiKey is the caller's key: x-goog-api-key, else ?key=.
func geminiKey(r *http.Request) (string, bool) {
	if k := strings.TrimSpace(r.Header.Get("X-Goog-Api-Key")); k != "" {
		return k, true
	}
	if k := r.URL.Query().Get("key"); k != "" {
		return k, true
	}
	return "", false
}

// geminiTopLevel are the fields of a GenerateContentRequest (both spellings).
var geminiTopLevel = map[string]bool{
	"contents": true, "tools": true, "toolConfig": true, "tool_config": true,
	"safetySettings": true, "safety_settings": true, "systemInstruction": true,
	"system_instruction": true, "generationConfig": true, "generation_config": true,
	"cachedContent": true, "cached_content": true, "model": true,
}

// geminiSchemaFields are the fields of Gemini's Schema object.
var geminiSchemaFields = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "maxItems": true, "minItems": true, "properties": true, "required": true,
	"minProperties": true, "maxProperties": true, "minLength": true, "maxLength": true,
	"pattern": true, "example": true, "anyOf": true, "propertyOrdering": true,
	"default": true, "items": true, "minimum": true, "maximum": true,
	"max_items": true, "min_items": true, "property_ordering": true, "any_of": true,
}

// GeminiContractError reports what a generateContent body for model gets
// wrong ("" when nothing), as the message of Google's 400.
func GeminiContractError(model string, body []byte) string {
	if !gjson.ValidBytes(body) {
		return "Invalid JSON payload received."
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return "Invalid JSON payload received. Expected an object."
	}
	var msg string
	root.ForEach(func(k, _ gjson.Result) bool {
		if !geminiTopLevel[k.Str] {
			msg = `Invalid JSON payload received. Unknown name "` + k.Str + `": Cannot find field.`
		}
		return msg == ""
	})
	if msg != "" {
		return msg
	}
	contents := root.Get("contents")
	if !contents.IsArray() || len(contents.Array()) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified"
	}
	var calls int // function calls of the last model turn still to be answered
	signed := strings.HasPrefix(model, "gemini-3")
	for i, c := range contents.Array() {
		at := "contents[" + strconv.Itoa(i) + "]"
		role := c.Get("role").String()
		if role != "" && role != "user" && role != "model" {
			return "Please use a valid role: user, model."
		}
		parts := c.Get("parts").Array()
		if len(parts) == 0 {
			return "* GenerateContentRequest." + at + ".parts: contents.parts must not be empty."
		}
		var fc, fr int
		firstCall := true
		for j, p := range parts {
			if !partHasData(p) {
				return "* GenerateContentRequest." + at + ".parts[" + strconv.Itoa(j) + "].data: required oneof field 'data' must have one initialized field"
			}
			if p.Get("functionCall").Exists() || p.Get("function_call").Exists() {
				fc++
				if signed && firstCall && p.Get("thoughtSignature").String() == "" && p.Get("thought_signature").String() == "" {
					return "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:" +
						p.Get("functionCall.name").String() + "` , position " + strconv.Itoa(i+1) + ". Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
				}
				firstCall = false
			}
			if p.Get("functionResponse").Exists() || p.Get("function_response").Exists() {
				fr++
			}
		}
		if calls > 0 && fr != calls {
			return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
		}
		calls = 0
		if role == "model" {
			calls = fc
		}
	}
	for i, t := range root.Get("tools").Array() {
		decls := t.Get("functionDeclarations")
		if !decls.Exists() {
			decls = t.Get("function_declarations")
		}
		for j, d := range decls.Array() {
			at := "tools[" + strconv.Itoa(i) + "].function_declarations[" + strconv.Itoa(j) + "]"
			if d.Get("name").String() == "" {
				return "* GenerateContentRequest." + at + ".name: Invalid function name. Must start with a letter or an underscore."
			}
			if p := d.Get("parameters"); p.Exists() {
				if m := schemaError(p, at+".parameters"); m != "" {
					return m
				}
			}
		}
	}
	return ""
}

// partHasData reports whether a Part sets one of its data fields: proto3
// JSON reads {"text":""} as no text at all.
func partHasData(p gjson.Result) bool {
	if p.Get("text").String() != "" {
		return true
	}
	for _, k := range []string{"inlineData", "inline_data", "fileData", "file_data", "functionCall", "function_call",
		"functionResponse", "function_response", "executableCode", "executable_code", "codeExecutionResult", "code_execution_result"} {
		if p.Get(k).IsObject() {
			return true
		}
	}
	return false
}

// schemaError checks a Schema: no unknown field, no empty properties.
func schemaError(s gjson.Result, at string) string {
	if !s.IsObject() {
		return "Invalid JSON payload received. Expected an object at '" + at + "'."
	}
	var msg string
	s.ForEach(func(k, v gjson.Result) bool {
		switch {
		case !geminiSchemaFields[k.Str]:
			msg = `Invalid JSON payload received. Unknown name "` + k.Str + `" at '` + at + `': Cannot find field.`
		case k.Str == "properties":
			if !v.IsObject() || v.Raw == "{}" || len(v.Map()) == 0 {
				if strings.EqualFold(s.Get("type").String(), "object") {
					msg = "* GenerateContentRequest." + at + ".properties: should be non-empty for OBJECT type"
				}
				return msg == ""
			}
			v.ForEach(func(name, p gjson.Result) bool {
				msg = schemaError(p, at+".properties["+name.Str+"].value")
				return msg == ""
			})
		case k.Str == "items":
			msg = schemaError(v, at+".items")
		case k.Str == "anyOf" || k.Str == "any_of":
			for n, alt := range v.Array() {
				if msg = schemaError(alt, at+".any_of["+strconv.Itoa(n)+"]"); msg != "" {
					break
				}
			}
		}
		return msg == ""
	})
	return msg
}

// geminiRequest reads what the fake needs from a generateContent body.
func geminiRequest(model string, body []byte, scripted map[string]string) request {
	req := request{model: model}
	root := gjson.ParseBytes(body)
	gen := root.Get("generationConfig")
	if !gen.Exists() {
		gen = root.Get("generation_config")
	}
	req.shape.reasoning = gen.Get("thinkingConfig.includeThoughts").Bool() || gen.Get("thinking_config.include_thoughts").Bool()
	last := lastElement(root.Get("contents"))
	if last.Get("role").String() != "model" {
		var result string
		found := false
		last.Get("parts").ForEach(func(_, p gjson.Result) bool {
			fr := p.Get("functionResponse")
			if !fr.Exists() {
				fr = p.Get("function_response")
			}
			if !fr.Exists() {
				return true
			}
			found = true
			if o := fr.Get("response.output"); o.Type == gjson.String {
				result = o.Str
			} else {
				result = fr.Get("response").Raw
			}
			return false
		})
		if found {
			req.shape.kind, req.shape.result = kindToolResult, result
			return req
		}
	}
	var names []string
	root.Get("tools").ForEach(func(_, t gjson.Result) bool {
		decls := t.Get("functionDeclarations")
		if !decls.Exists() {
			decls = t.Get("function_declarations")
		}
		decls.ForEach(func(_, d gjson.Result) bool {
			names = append(names, d.Get("name").String())
			return true
		})
		return true
	})
	if len(names) > 0 {
		req.shape.kind, req.shape.tool = kindToolCall, names[0]
		for _, n := range names {
			if args, ok := scripted[n]; ok {
				req.shape.tool, req.shape.args = n, args
				break
			}
		}
	}
	return req
}

// geminiPart is one part of a Gemini answer.
func geminiPart(kind blockKind, piece, tool string) map[string]any {
	switch kind {
	case blockReasoning:
		return map[string]any{"text": piece, "thought": true}
	case blockTool:
		return map[string]any{"functionCall": map[string]any{"name": tool, "args": json.RawMessage(piece)}, "thoughtSignature": GeminiThoughtSignature}
	}
	return map[string]any{"text": piece}
}

func geminiChunk(model string, parts []any, finish string, usage map[string]any) []byte {
	cand := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	m := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": fakeGeminiResponseID}
	if usage != nil {
		m["usageMetadata"] = usage
	}
	return mustJSON(m)
}

// buildGemini renders a Gemini answer; array selects the JSON-array stream
// framing instead of SSE.
func buildGemini(model string, s shape, text string, n int, array bool) *answer {
	blocks := plan(s, text, n)
	var parts []any
	var events [][]byte
	candidates, thoughts := 0, 0
	for _, b := range blocks {
		if b.kind == blockTool {
			b.pieces = []string{b.text} // Gemini streams a call whole
		}
		var whole strings.Builder
		for _, p := range b.pieces {
			whole.WriteString(p)
			if b.kind == blockReasoning {
				thoughts++
			} else {
				candidates++
			}
			events = append(events, geminiChunk(model, []any{geminiPart(b.kind, p, s.tool)}, "",
				map[string]any{"promptTokenCount": fakePromptTokens, "totalTokenCount": fakePromptTokens}))
		}
		parts = append(parts, geminiPart(b.kind, whole.String(), s.tool))
	}
	usage := map[string]any{"promptTokenCount": fakePromptTokens, "candidatesTokenCount": candidates,
		"totalTokenCount": fakePromptTokens + candidates + thoughts}
	if thoughts > 0 {
		usage["thoughtsTokenCount"] = thoughts
	}
	a := &answer{body: geminiChunk(model, parts, "STOP", usage)}
	last := geminiChunk(model, []any{map[string]any{"text": ""}}, "STOP", usage)
	thought := geminiChunk(model, []any{geminiPart(blockReasoning, HeartbeatThought, "")}, "", nil)
	if array {
		a.ctype = []string{"application/json; charset=UTF-8"}
		a.head = []byte("[")
		for i, e := range events {
			if i > 0 {
				e = append([]byte(",\r\n"), e...)
			}
			a.chunks = append(a.chunks, e)
		}
		a.tail = append(append([]byte(",\r\n"), last...), ']')
		a.done = 1
		a.thought = append([]byte(",\r\n"), thought...) // only after a first chunk
	} else {
		for _, e := range events {
			a.chunks = append(a.chunks, geminiSSE(e))
		}
		a.tail = geminiSSE(last)
		a.done = len(a.tail)
		a.thought = geminiSSE(thought)
	}
	a.bodyLen = []string{strconv.Itoa(len(a.body))}
	a.parts = splitBytes(a.body, len(a.chunks))
	return a
}

// geminiSSE frames one chunk as Google does: "data: …" and a CRLF blank line.
func geminiSSE(chunk []byte) []byte {
	out := make([]byte, 0, len(chunk)+10)
	out = append(out, "data: "...)
	out = append(out, chunk...)
	return append(out, "\r\n\r\n"...)
}

// geminiCall serves POST /v1beta/models/{model}:{method}.
func (u *Upstream) geminiCall(w http.ResponseWriter, r *http.Request) {
	key, authed := geminiKey(r)
	body, err := readBody(w, r)
	if err != nil {
		u.writeError(w, http.StatusBadRequest, GeminiInvalidArgumentBody)
		return
	}
	call := r.PathValue("call")
	i := strings.LastIndexByte(call, ':')
	if i <= 0 {
		u.writeError(w, http.StatusNotFound, googleError(404, "NOT_FOUND", "Requested entity was not found."))
		return
	}
	model, method := call[:i], call[i+1:]
	f, n, _ := u.begin(key, r.URL.Path, r.Header, body, model, authed)
	defer u.end()
	format := FormatGemini
	switch method {
	case "generateContent", "countTokens", "batchEmbedContents":
	case "streamGenerateContent":
		if r.URL.Query().Get("alt") != "sse" {
			format = formatGeminiArray
		}
	default:
		u.writeError(w, http.StatusNotFound, googleError(404, "NOT_FOUND", "Method not found: "+method))
		return
	}
	u.modelBegin(model)
	defer func() { u.modelEnd(model, r.Context().Err() != nil) }()
	switch {
	case !authed:
		u.writeError(w, http.StatusForbidden, GeminiMissingKeyBody)
		return
	case f != nil && f.Mode == ModeStatus:
		if f.gate != nil {
			select {
			case <-f.gate.arrive():
			case <-r.Context().Done():
				return
			case <-u.done:
				return
			}
		}
		if u.pause(r.Context(), ms(f.LatencyMs), false) != elapsed {
			return
		}
		u.writeStatusFault(w, FormatGemini, f)
		return
	}
	switch method {
	case "countTokens":
		u.geminiCount(w, body)
		return
	case "batchEmbedContents":
		u.geminiBatchEmbed(w, model, body)
		return
	}
	if msg := GeminiContractError(model, body); msg != "" {
		u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", msg))
		return
	}
	req := geminiRequest(model, body, u.scriptedToolCalls())
	if f != nil && f.Mode == ModeReasoningOnlyHeartbeat {
		req.shape.reasoning = true
	}
	var text string
	switch req.shape.kind {
	case kindText:
		text = Content(key)
	case kindToolResult:
		text = ToolResultText(req.shape.result)
	}
	a := buildGemini(model, req.shape, text, n, format == formatGeminiArray)
	u.respond(w, r, format, a, method == "streamGenerateContent", f)
}

// geminiBatchEmbed answers :batchEmbedContents for the URL's model.
func (u *Upstream) geminiBatchEmbed(w http.ResponseWriter, model string, body []byte) {
	root := gjson.ParseBytes(body)
	reqs := root.Get("requests")
	if !gjson.ValidBytes(body) || !reqs.IsArray() || len(reqs.Array()) == 0 {
		u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests: requests is not specified"))
		return
	}
	var embs []any
	for i, r := range reqs.Array() {
		if m := r.Get("model").String(); m != "models/"+model {
			u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT",
				"Model name in request "+strconv.Itoa(i)+" ("+m+") does not match the batch model (models/"+model+")."))
			return
		}
		var text strings.Builder
		r.Get("content.parts").ForEach(func(_, p gjson.Result) bool {
			text.WriteString(p.Get("text").String())
			return true
		})
		if text.Len() == 0 {
			u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests["+strconv.Itoa(i)+"].content: contents is not specified"))
			return
		}
		v := vector(text.String())
		if d := int(r.Get("outputDimensionality").Int()); d > 0 && d < len(v) {
			v = v[:d]
		}
		embs = append(embs, map[string]any{"values": v})
	}
	writeJSON(w, map[string]any{"embeddings": embs})
}

// geminiCount answers :countTokens: one token per four characters of the
// text parts (at least 1), for a body {"contents": …} or
// {"generateContentRequest": …}.
func (u *Upstream) geminiCount(w http.ResponseWriter, body []byte) {
	if !gjson.ValidBytes(body) {
		u.writeError(w, http.StatusBadRequest, GeminiInvalidArgumentBody)
		return
	}
	root := gjson.ParseBytes(body)
	if g := root.Get("generateContentRequest"); g.Exists() {
		root = g
	}
	chars := 0
	root.Get("contents").ForEach(func(_, c gjson.Result) bool {
		c.Get("parts").ForEach(func(_, p gjson.Result) bool {
			chars += utf8.RuneCountInString(p.Get("text").String())
			return true
		})
		return true
	})
	if !root.Get("contents").IsArray() {
		u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "* CountTokensRequest.contents: contents is not specified"))
		return
	}
	total := max(1, (chars+3)/4)
	u.writeError(w, http.StatusOK, string(mustJSON(map[string]any{"totalTokens": total,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": total}}})))
}

// geminiModel is one entry of the model list.
func geminiModel(id string) map[string]any {
	return map[string]any{
		"name": "models/" + id, "version": "001", "displayName": id, "description": "Fake " + id,
		"inputTokenLimit": 1048576, "outputTokenLimit": 65536,
		"supportedGenerationMethods": []string{"generateContent", "countTokens"},
		"temperature":                1, "topP": 0.95, "topK": 64, "maxTemperature": 2, "thinking": true,
	}
}

// geminiModels serves GET /v1beta/models: pageSize (default 50, at most 1000,
// and at most the SetModelsPageSize value when one is set: a server may
// answer fewer than asked) models from pageToken on, with nextPageToken while
// more remain.
func (u *Upstream) geminiModels(w http.ResponseWriter, r *http.Request) {
	key, authed := geminiKey(r)
	f, _, _ := u.begin(key, r.URL.Path, r.Header, nil, "", authed)
	defer u.end()
	switch {
	case !authed:
		u.writeError(w, http.StatusForbidden, GeminiMissingKeyBody)
		return
	case f != nil && f.Mode == ModeStatus:
		u.writeStatusFault(w, FormatGemini, f)
		return
	}
	u.mu.Lock()
	ids, limit := u.geminiModelIDs, u.modelsPage
	u.mu.Unlock()
	size := 0
	q := r.URL.Query()
	if ps := q.Get("pageSize"); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 0 {
			u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "Invalid value at 'page_size' (TYPE_INT32), \""+ps+"\""))
			return
		}
		size = n
	}
	if size <= 0 {
		size = 50
	}
	size = min(size, 1000)
	if limit > 0 {
		size = min(size, limit)
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "page-"))
		if err != nil || !strings.HasPrefix(tok, "page-") || n < 0 || n > len(ids) {
			u.writeError(w, http.StatusBadRequest, googleError(400, "INVALID_ARGUMENT", "Invalid page token."))
			return
		}
		start = n
	}
	end := min(start+size, len(ids))
	models := make([]any, 0, end-start)
	for _, id := range ids[start:end] {
		models = append(models, geminiModel(id))
	}
	out := map[string]any{"models": models}
	if end < len(ids) {
		out["nextPageToken"] = "page-" + strconv.Itoa(end)
	}
	u.writeError(w, http.StatusOK, string(mustJSON(out)))
}

// geminiGetModel serves GET /v1beta/models/{model}.
func (u *Upstream) geminiGetModel(w http.ResponseWriter, r *http.Request) {
	key, authed := geminiKey(r)
	id := r.PathValue("call")
	f, _, _ := u.begin(key, r.URL.Path, r.Header, nil, id, authed)
	defer u.end()
	switch {
	case !authed:
		u.writeError(w, http.StatusForbidden, GeminiMissingKeyBody)
		return
	case f != nil && f.Mode == ModeStatus:
		u.writeStatusFault(w, FormatGemini, f)
		return
	}
	u.mu.Lock()
	ids := u.geminiModelIDs
	u.mu.Unlock()
	for _, m := range ids {
		if m == id {
			u.writeError(w, http.StatusOK, string(mustJSON(geminiModel(id))))
			return
		}
	}
	u.writeError(w, http.StatusNotFound, googleError(404, "NOT_FOUND", "models/"+id+" is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."))
}

// SetGeminiModels sets the model list GET /v1beta/models answers.
func (u *Upstream) SetGeminiModels(ids []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.geminiModelIDs = append([]string(nil), ids...)
}

// geminiFrame is a non-content frame in the Gemini framings.
func geminiFrame(format Format, data string) []byte {
	if format == formatGeminiArray {
		return []byte(",\r\n" + data + "]")
	}
	var b bytes.Buffer
	b.WriteString("data: ")
	b.WriteString(data)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}
