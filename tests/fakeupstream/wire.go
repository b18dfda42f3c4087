package fakeupstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// Format identifies the provider wire format of a route, so that answers and
// error bodies look like the provider a gateway connection expects.
type Format int

const (
	// FormatOpenAI is the OpenAI wire format (/v1/chat/completions, /v1/models).
	FormatOpenAI Format = iota
	// FormatAnthropic is the Anthropic wire format (/v1/messages).
	FormatAnthropic
)

// String names the format, for test output.
func (f Format) String() string {
	if f == FormatAnthropic {
		return "anthropic"
	}
	return "openai"
}

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

	// GLMConcurrencyBody is Zhipu GLM's 429 (code 1302) for too many
	// concurrent requests ("并发数过高"), which gateways must treat as a
	// transient per-key limit.
	GLMConcurrencyBody = `{"error":{"code":"1302","message":"您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}`
)

// ErrorBody returns the default error body the fake sends for status in
// format, used by status faults that give no body of their own.
func ErrorBody(format Format, status int) string {
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

// Fixed values that make every answer deterministic.
const (
	fakeCreated      = 1700000000
	fakeCompletionID = "chatcmpl-fake"
	fakeMessageID    = "msg_fake01"
	fakePromptTokens = 10
)

// answer is everything needed to reply to one (format, model, label, chunks)
// combination, precomputed once so the happy path only copies bytes.
type answer struct {
	body    []byte   // complete non-streaming JSON
	bodyLen []string // Content-Length header value of body
	parts   [][]byte // body split into as many pieces as stream chunks, for drip/partial faults
	head    []byte   // SSE frames before the first content chunk
	chunks  [][]byte // one SSE frame per content chunk
	tail    []byte   // SSE frames after the last content chunk
}

// Content returns the deterministic assistant text the fake answers for the
// caller key label.
func Content(label string) string { return "Hello from " + label }

// splitContent splits s into n pieces on rune boundaries, as evenly as
// possible; pieces are empty when s has fewer than n runes.
func splitContent(s string, n int) []string {
	starts := make([]int, 0, len(s)+1) // byte offset of every rune, then len(s)
	for i := range s {
		starts = append(starts, i)
	}
	starts = append(starts, len(s))
	runes := len(starts) - 1
	out := make([]string, n)
	for i := range out {
		out[i] = s[starts[runes*i/n]:starts[runes*(i+1)/n]]
	}
	return out
}

// splitBytes splits b into n contiguous pieces (the last absorbs the rest).
func splitBytes(b []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := 0; i < n; i++ {
		out[i] = b[len(b)*i/n : len(b)*(i+1)/n]
	}
	return out
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type oaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type oaChoice struct {
	Index        int       `json:"index"`
	Message      oaMessage `json:"message"`
	FinishReason string    `json:"finish_reason"`
}

type oaCompletion struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []oaChoice `json:"choices"`
	Usage   oaUsage    `json:"usage"`
}

type oaDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type oaChunkChoice struct {
	Index        int     `json:"index"`
	Delta        oaDelta `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type oaChunk struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []oaChunkChoice `json:"choices"`
	Usage   *oaUsage        `json:"usage,omitempty"`
}

type anUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type anText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anMessage struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Role         string   `json:"role"`
	Model        string   `json:"model"`
	Content      []anText `json:"content"`
	StopReason   *string  `json:"stop_reason"`
	StopSequence *string  `json:"stop_sequence"`
	Usage        anUsage  `json:"usage"`
}

type anEvent struct {
	Type         string     `json:"type"`
	Message      *anMessage `json:"message,omitempty"`
	Index        *int       `json:"index,omitempty"`
	ContentBlock *anText    `json:"content_block,omitempty"`
	Delta        any        `json:"delta,omitempty"`
	Usage        *anUsage   `json:"usage,omitempty"`
}

type anTextDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anStopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

func sseData(b *bytes.Buffer, v any) {
	b.WriteString("data: ")
	b.Write(mustJSON(v))
	b.WriteString("\n\n")
}

func sseEvent(b *bytes.Buffer, name string, v any) {
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteByte('\n')
	sseData(b, v)
}

// buildAnswer renders the answer for one combination.
func buildAnswer(format Format, model, label string, n int) *answer {
	content := Content(label)
	pieces := splitContent(content, n)
	a := &answer{chunks: make([][]byte, n)}
	var b bytes.Buffer
	if format == FormatAnthropic {
		stop := "end_turn"
		a.body = mustJSON(anMessage{
			ID: fakeMessageID, Type: "message", Role: "assistant", Model: model,
			Content:    []anText{{Type: "text", Text: content}},
			StopReason: &stop,
			Usage:      anUsage{InputTokens: fakePromptTokens, OutputTokens: n},
		})
		zero := 0
		sseEvent(&b, "message_start", anEvent{Type: "message_start", Message: &anMessage{
			ID: fakeMessageID, Type: "message", Role: "assistant", Model: model,
			Content: []anText{}, Usage: anUsage{InputTokens: fakePromptTokens, OutputTokens: 1},
		}})
		sseEvent(&b, "content_block_start", anEvent{Type: "content_block_start", Index: &zero, ContentBlock: &anText{Type: "text"}})
		b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		a.head = bytes.Clone(b.Bytes())
		for i, p := range pieces {
			b.Reset()
			sseEvent(&b, "content_block_delta", anEvent{Type: "content_block_delta", Index: &zero, Delta: anTextDelta{Type: "text_delta", Text: p}})
			a.chunks[i] = bytes.Clone(b.Bytes())
		}
		b.Reset()
		sseEvent(&b, "content_block_stop", anEvent{Type: "content_block_stop", Index: &zero})
		sseEvent(&b, "message_delta", anEvent{Type: "message_delta", Delta: anStopDelta{StopReason: stop}, Usage: &anUsage{OutputTokens: n}})
		sseEvent(&b, "message_stop", anEvent{Type: "message_stop"})
		a.tail = bytes.Clone(b.Bytes())
	} else {
		usage := oaUsage{PromptTokens: fakePromptTokens, CompletionTokens: n, TotalTokens: fakePromptTokens + n}
		a.body = mustJSON(oaCompletion{
			ID: fakeCompletionID, Object: "chat.completion", Created: fakeCreated, Model: model,
			Choices: []oaChoice{{Message: oaMessage{Role: "assistant", Content: content}, FinishReason: "stop"}},
			Usage:   usage,
		})
		chunk := func(d oaDelta, finish *string, u *oaUsage) oaChunk {
			return oaChunk{ID: fakeCompletionID, Object: "chat.completion.chunk", Created: fakeCreated, Model: model,
				Choices: []oaChunkChoice{{Delta: d, FinishReason: finish}}, Usage: u}
		}
		empty := ""
		sseData(&b, chunk(oaDelta{Role: "assistant", Content: &empty}, nil, nil))
		a.head = bytes.Clone(b.Bytes())
		for i := range pieces {
			b.Reset()
			sseData(&b, chunk(oaDelta{Content: &pieces[i]}, nil, nil))
			a.chunks[i] = bytes.Clone(b.Bytes())
		}
		b.Reset()
		stop := "stop"
		sseData(&b, chunk(oaDelta{}, &stop, &usage))
		b.WriteString("data: [DONE]\n\n")
		a.tail = bytes.Clone(b.Bytes())
	}
	a.bodyLen = []string{strconv.Itoa(len(a.body))}
	a.parts = splitBytes(a.body, n)
	return a
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
