package fakeupstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Format identifies the provider wire format of a route, so that answers and
// error bodies look like the provider a gateway connection expects.
type Format int

const (
	// FormatOpenAI is the OpenAI wire format (/v1/chat/completions, /v1/models).
	FormatOpenAI Format = iota
	// FormatAnthropic is the Anthropic wire format (/v1/messages).
	FormatAnthropic
	// FormatGemini is Google's Gemini API (/v1beta/models/…:generateContent,
	// streams with alt=sse): gemini.go.
	FormatGemini
	// formatGeminiArray is a Gemini stream without alt=sse: one JSON array.
	formatGeminiArray
)

// String names the format, for test output.
func (f Format) String() string {
	switch f {
	case FormatAnthropic:
		return "anthropic"
	case FormatGemini, formatGeminiArray:
		return "gemini"
	}
	return "openai"
}

// isGemini reports whether f is one of the Gemini framings.
func (f Format) isGemini() bool { return f == FormatGemini || f == formatGeminiArray }

// Provider error bodies in the shapes the providers really send (field
// names, types, codes and messages; ids and org names anonymised), so gateway
// tests can check that their error classification works on real payloads.
const (
	// OpenAIRateLimitBody is OpenAI's 429 for a requests-per-minute limit.
	OpenAIRateLimitBody = `{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-fake on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	// OpenAIQuotaExceededBody is OpenAI's 429 when the account is out of
	// credit; unlike a rate limit, retrying later does not help.
	OpenAIQuotaExceededBody = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	// OpenAIServerErrorBody is OpenAI's 500.
	OpenAIServerErrorBody = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	// OpenAIOverloadedBody is OpenAI's 503 when the engine is overloaded.
	OpenAIOverloadedBody = `{"error":{"message":"The engine is currently overloaded, please try again later.","type":"server_error","param":null,"code":null}}`
	// OpenAIInvalidKeyBody is OpenAI's 401 for a wrong API key.
	OpenAIInvalidKeyBody = `{"error":{"message":"Incorrect API key provided: sk-fake**********1234. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	// OpenAIMissingKeyBody is OpenAI's 401 when no Authorization header is sent.
	OpenAIMissingKeyBody = `{"error":{"message":"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":null}}`
	// OpenAIModelNotFoundBody is OpenAI's 404 for an unknown model.
	OpenAIModelNotFoundBody = "{\"error\":{\"message\":\"The model `fake-missing-model` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}"
	// OpenAIBadRequestBody is OpenAI's 400 for a prompt over the context window.
	OpenAIBadRequestBody = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130218 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`

	// AnthropicRateLimitBody is Anthropic's 429.
	AnthropicRateLimitBody = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (00000000-0000-0000-0000-000000000000) of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."}}`
	// AnthropicOverloadedBody is Anthropic's 529 (also used here for 503).
	AnthropicOverloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	// AnthropicServerErrorBody is Anthropic's 500.
	AnthropicServerErrorBody = `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`
	// AnthropicInvalidKeyBody is Anthropic's 401 for a wrong API key.
	AnthropicInvalidKeyBody = `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
	// AnthropicMissingKeyBody is Anthropic's 401 when no x-api-key is sent.
	AnthropicMissingKeyBody = `{"type":"error","error":{"type":"authentication_error","message":"x-api-key header is required"}}`
	// AnthropicNotFoundBody is Anthropic's 404 for an unknown model.
	AnthropicNotFoundBody = `{"type":"error","error":{"type":"not_found_error","message":"model: fake-missing-model"}}`
	// AnthropicBadRequestBody is Anthropic's 400 for a malformed request.
	AnthropicBadRequestBody = `{"type":"error","error":{"type":"invalid_request_error","message":"messages: Field required"}}`

	// AnthropicPrefillRejectedBody is the 400 of a model that does not take an
	// assistant prefill (ModeRejectPrefill).
	AnthropicPrefillRejectedBody = `{"type":"error","error":{"type":"invalid_request_error","message":"This model does not support assistant message prefill. The conversation must end with a user message."}}`

	// PrefillContinuation is how ModeHonourPrefill continues a prefill.
	PrefillContinuation = "."

	// AnthropicPrefillMismatchBody is the fake's 400 for a prefill that is not
	// the beginning of its answer (the gateway sent the wrong delivered text).
	AnthropicPrefillMismatchBody = `{"type":"error","error":{"type":"invalid_request_error","message":"fake: the assistant prefill is not a prefix of the answer"}}`

	// AnthropicPrefillWithThinkingBody is Anthropic's 400 for a prefill in a
	// request with thinking on: the last assistant message must then start
	// with a thinking block.
	AnthropicPrefillWithThinkingBody = `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.type: Expected ` + "`thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block. To avoid this requirement, disable `thinking`." + `"}}`

	// AnthropicTrailingWhitespaceBody is Anthropic's 400 for a prefill ending in white space.
	AnthropicTrailingWhitespaceBody = `{"type":"error","error":{"type":"invalid_request_error","message":"messages: final assistant content cannot end with trailing whitespace"}}`

	// GLMConcurrencyBody is Zhipu GLM's 429 (code 1302) for too many
	// concurrent requests ("并发数过高"), which gateways must treat as a
	// transient per-key limit.
	GLMConcurrencyBody = `{"error":{"code":"1302","message":"您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}`
)

// Bodies for requests whose tools the provider cannot read: a tool without a
// name where the format expects it (a request translated to the wrong
// format, typically).
const (
	// OpenAIMissingToolNameBody is OpenAI's 400 for tools[0] without function.name.
	OpenAIMissingToolNameBody = `{"error":{"message":"Missing required parameter: 'tools[0].function.name'.","type":"invalid_request_error","param":"tools[0].function.name","code":"missing_required_parameter"}}`
	// AnthropicMissingToolNameBody is Anthropic's 400 for tools[0] without name.
	AnthropicMissingToolNameBody = `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.name: Field required"}}`
)

// StrictMessageFields are the members OpenAI's Chat Completions reference
// defines for a message of messages[], whatever its role (ModeStrictFields).
var StrictMessageFields = []string{"role", "content", "name", "refusal", "audio", "tool_calls", "function_call", "tool_call_id"}

// StrictFieldBody is OpenAI's 400 for a message member its request schema
// does not define (ModeStrictFields): the member and the message's index.
func StrictFieldBody(field string, index int) string {
	return `{"error":{"message":"Additional properties are not allowed ('` + field + `' was unexpected) - 'messages.` +
		strconv.Itoa(index) + `'","type":"invalid_request_error","param":null,"code":null}}`
}

// strictFieldError is ModeStrictFields's 400 body for an OpenAI chat body
// with a message member outside StrictMessageFields ("" for none).
func strictFieldError(body []byte) string {
	bad := ""
	gjson.GetBytes(body, "messages").ForEach(func(i, m gjson.Result) bool {
		m.ForEach(func(k, _ gjson.Result) bool {
			if !slices.Contains(StrictMessageFields, k.String()) {
				bad = StrictFieldBody(k.String(), int(i.Int()))
			}
			return bad == ""
		})
		return bad == ""
	})
	return bad
}

// In-stream data of the stream-safety faults.
const (
	// OpenAIStreamErrorData is the data of the OpenAI in-stream error chunk
	// of ModeErrorEvent (Anthropic's is AnthropicOverloadedBody).
	OpenAIStreamErrorData = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error"}}`
	// MalformedOpenAIData is the data of the invalid chunk ModeMalformedEvent
	// sends on OpenAI streams: a chunk cut in the middle.
	MalformedOpenAIData = `{"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"malformed`
	// MalformedAnthropicData is the data of the invalid content_block_delta
	// event ModeMalformedEvent sends on Anthropic streams.
	MalformedAnthropicData = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"malformed`
)

// missingToolNameBody is the 400 body for a request whose first tool has no name.
func missingToolNameBody(format Format) string {
	if format == FormatAnthropic {
		return AnthropicMissingToolNameBody
	}
	return OpenAIMissingToolNameBody
}

// malformedFrame is the SSE frame of ModeMalformedEvent in format.
func malformedFrame(format Format) []byte {
	switch format {
	case FormatGemini:
		return []byte("data: " + MalformedGeminiData + "\r\n\r\n")
	case formatGeminiArray:
		return []byte(",\r\n" + MalformedGeminiData)
	}
	if format == FormatAnthropic {
		return []byte("event: content_block_delta\ndata: " + MalformedAnthropicData + "\n\n")
	}
	return []byte("data: " + MalformedOpenAIData + "\n\n")
}

// streamErrorData is the in-stream error data of ModeErrorEvent: f.Body, or
// the format's default.
func streamErrorData(format Format, f *Fault) string {
	switch {
	case f.Body != "":
		return f.Body
	case format == FormatAnthropic:
		return AnthropicOverloadedBody
	case format.isGemini():
		return GeminiStreamErrorData
	}
	return OpenAIStreamErrorData
}

// errorFrame is the SSE frame of ModeErrorEvent; multi-line data becomes
// several data lines, as SSE requires.
func errorFrame(format Format, f *Fault) []byte {
	if format.isGemini() {
		return geminiFrame(format, streamErrorData(format, f))
	}
	var b bytes.Buffer
	if format == FormatAnthropic {
		b.WriteString("event: error\n")
	}
	for _, line := range strings.Split(streamErrorData(format, f), "\n") {
		b.WriteString("data: ")
		b.WriteString(strings.TrimSuffix(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// heartbeatFrame is the keep-alive of ModeReasoningOnlyHeartbeat: an SSE
// comment for OpenAI-compatible streams, a ping event for Anthropic.
func heartbeatFrame(format Format) []byte {
	if format == formatGeminiArray {
		return []byte("\n") // white space between array elements
	}
	if format == FormatAnthropic {
		return []byte(anthropicPing)
	}
	return []byte(": keep-alive\n\n")
}

// ErrorBody returns the default error body the fake sends for status in
// format, used by status faults that give no body of their own.
func ErrorBody(format Format, status int) string {
	if format.isGemini() {
		return geminiErrorBody(status)
	}
	if format == FormatAnthropic {
		switch status {
		case http.StatusBadRequest:
			return AnthropicBadRequestBody
		case http.StatusUnauthorized:
			return AnthropicInvalidKeyBody
		case http.StatusNotFound:
			return AnthropicNotFoundBody
		case http.StatusTooManyRequests:
			return AnthropicRateLimitBody
		case http.StatusInternalServerError:
			return AnthropicServerErrorBody
		case http.StatusServiceUnavailable, 529:
			return AnthropicOverloadedBody
		}
		return string(mustJSON(anthropicError{Type: "error", Error: errDetail{Type: "api_error", Message: statusText(status)}}))
	}
	switch status {
	case http.StatusBadRequest:
		return OpenAIBadRequestBody
	case http.StatusUnauthorized:
		return OpenAIInvalidKeyBody
	case http.StatusNotFound:
		return OpenAIModelNotFoundBody
	case http.StatusTooManyRequests:
		return OpenAIRateLimitBody
	case http.StatusInternalServerError:
		return OpenAIServerErrorBody
	case http.StatusServiceUnavailable:
		return OpenAIOverloadedBody
	}
	return string(mustJSON(openAIError{Error: openAIErrDetail{Message: statusText(status), Type: "server_error"}}))
}

// missingKeyBody is the 401 body for a request without credentials.
func missingKeyBody(format Format) string {
	if format.isGemini() {
		return GeminiMissingKeyBody
	}
	if format == FormatAnthropic {
		return AnthropicMissingKeyBody
	}
	return OpenAIMissingKeyBody
}

func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "status " + strconv.Itoa(status)
}

type anthropicError struct {
	Type  string    `json:"type"`
	Error errDetail `json:"error"`
}

type errDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type openAIError struct {
	Error openAIErrDetail `json:"error"`
}

type openAIErrDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// mustJSON marshals v without HTML escaping (so raw bodies stay readable and
// greppable); v is always one of this package's own types.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("fakeupstream: marshal: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

type oaModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type oaModelList struct {
	Object string    `json:"object"`
	Data   []oaModel `json:"data"`
}

type anModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

type anModelList struct {
	Data    []anModel `json:"data"`
	HasMore bool      `json:"has_more"`
	FirstID *string   `json:"first_id"`
	LastID  *string   `json:"last_id"`
}

// buildModelPage renders one page of Anthropic's model list.
func buildModelPage(ids []string, hasMore bool) *answer {
	l := anModelList{Data: make([]anModel, 0, len(ids)), HasMore: hasMore}
	for _, id := range ids {
		l.Data = append(l.Data, anModel{Type: "model", ID: id, DisplayName: id, CreatedAt: "2023-11-14T22:13:20Z"})
	}
	if len(ids) > 0 {
		l.FirstID, l.LastID = &ids[0], &ids[len(ids)-1]
	}
	body := mustJSON(l)
	return &answer{body: body, bodyLen: []string{strconv.Itoa(len(body))}, parts: [][]byte{body}}
}

// buildModels renders the /v1/models answer in format for ids.
func buildModels(format Format, ids []string) *answer {
	var body []byte
	if format == FormatAnthropic {
		l := anModelList{Data: make([]anModel, 0, len(ids))}
		for _, id := range ids {
			l.Data = append(l.Data, anModel{Type: "model", ID: id, DisplayName: id, CreatedAt: "2023-11-14T22:13:20Z"})
		}
		if len(ids) > 0 {
			l.FirstID, l.LastID = &ids[0], &ids[len(ids)-1]
		}
		body = mustJSON(l)
	} else {
		l := oaModelList{Object: "list", Data: make([]oaModel, 0, len(ids))}
		for _, id := range ids {
			l.Data = append(l.Data, oaModel{ID: id, Object: "model", Created: fakeCreated, OwnedBy: "fakeupstream"})
		}
		body = mustJSON(l)
	}
	return &answer{body: body, bodyLen: []string{strconv.Itoa(len(body))}, parts: [][]byte{body}}
}
