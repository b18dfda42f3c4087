package translate

import (
	"encoding/json"

	"omniroute/backend/translate/sse"
)

// Format names a wire format.
type Format string

// Wire formats.
const (
	Chat      Format = "openai"    // POST /v1/chat/completions
	Messages  Format = "anthropic" // POST /v1/messages
	Responses Format = "responses" // POST /v1/responses
	// The OpenAI endpoints beside chat, served by OpenAI-compatible
	// upstreams under the same path (their bodies pass through); a legacy
	// completion without a suffix is also translated to chat for others.
	Completions Format = "completions" // POST /v1/completions
	Embeddings  Format = "embeddings"  // POST /v1/embeddings
	// Ollama's native API under /ollama (answers as JSON or NDJSON lines).
	OllamaChat     Format = "ollama-chat"     // POST /ollama/api/chat
	OllamaGenerate Format = "ollama-generate" // POST /ollama/api/generate
	OllamaEmbed    Format = "ollama-embed"    // POST /ollama/api/embed
	// Gemini is Google's Gemini API: POST /v1beta/models/{model}:generateContent
	// and :streamGenerateContent (SSE with alt=sse).
	Gemini Format = "gemini"
	// GeminiEmbed is an upstream wire only: Gemini's
	// POST models/{model}:batchEmbedContents, what an embeddings request
	// (OpenAI's or Ollama's) becomes for a Gemini-native connection.
	GeminiEmbed Format = "gemini-embed"
	// GeminiEmbedIn is a client wire only: Google's
	// POST models/{model}:embedContent and :batchEmbedContents (the
	// @google/genai SDK's embedContent), served like /v1/embeddings.
	GeminiEmbedIn Format = "gemini-embed-in"
)

// IsGemini reports whether f is a client wire of Google's Gemini API, whose
// errors are in Google's shape.
func IsGemini(f Format) bool { return f == Gemini || f == GeminiEmbedIn }

// IsOllama reports whether f is one of Ollama's endpoints, whose errors are
// {"error": "…"} and whose streams are NDJSON, not SSE.
func IsOllama(f Format) bool {
	return f == OllamaChat || f == OllamaGenerate || f == OllamaEmbed
}

// Usage is token usage, never lost across a translation.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int
}

// StreamTranslator turns upstream SSE events into the client's SSE bytes.
type StreamTranslator interface {
	// Event translates one upstream event, appending client wire bytes to dst.
	Event(dst []byte, ev sse.Event) ([]byte, error)
	// End appends the client's closing events after the upstream ended cleanly.
	// It must not claim completion the upstream did not signal: when Complete()
	// is false the caller writes an error event instead of calling End.
	End(dst []byte) []byte
	// Complete reports whether the upstream signalled a proper end of its answer.
	Complete() bool
	// Usage returns the token usage seen so far.
	Usage() Usage
}

// ErrorEvent renders an in-band stream error in the client's format, so a
// client whose stream failed after bytes were sent sees why.
func ErrorEvent(dst []byte, f Format, code, message string) []byte {
	return ErrorEventTyped(dst, f, "", code, message)
}

// ErrorEventTyped is ErrorEvent with the error type a Messages client gets:
// the upstream's own Anthropic error type (overloaded_error, which clients
// retry on, rate_limit_error, …) when it reported one (AnthropicErrorType),
// api_error when errType is empty. Other formats ignore errType.
func ErrorEventTyped(dst []byte, f Format, errType, code, message string) []byte {
	var body any
	if errType == "" {
		errType = "api_error"
	}
	event := "error"
	if IsOllama(f) {
		b, _ := json.Marshal(map[string]any{"error": message})
		return append(append(dst, b...), '\n')
	}
	switch f {
	case Messages:
		body = map[string]any{"type": "error", "error": map[string]any{"type": errType, "message": message, "code": code}}
	case Responses:
		body = map[string]any{"type": "error", "code": code, "message": message, "param": nil}
	case Gemini:
		// Google's error object, as a streamGenerateContent?alt=sse data event.
		// (The JSON-array framing ends differently: gemini.ErrorWriter.)
		event = ""
		body = map[string]any{"error": map[string]any{"code": 500, "message": message, "status": geminiStatus(code)}}
	default:
		event = ""
		body = map[string]any{"error": map[string]any{"message": message, "type": "upstream_error", "code": code}}
	}
	b, _ := json.Marshal(body)
	return sse.Append(dst, event, b)
}

// geminiStatus names the google.rpc.Code for an error code in a Gemini
// stream: one of Google's status names passes as it is, anything else
// (a gateway code) is INTERNAL.
func geminiStatus(code string) string {
	switch code {
	case "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
		"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
		"UNAUTHENTICATED":
		return code
	}
	return "INTERNAL"
}

// AnthropicErrorType reports t if it is one of the error types of
// Anthropic's API reference (the "error.type" of an error body or stream
// event), "" otherwise.
func AnthropicErrorType(t string) string {
	switch t {
	case "invalid_request_error", "authentication_error", "billing_error", "permission_error", "not_found_error",
		"request_too_large", "rate_limit_error", "api_error", "timeout_error", "overloaded_error":
		return t
	}
	return ""
}
