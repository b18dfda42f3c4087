// Package responses translates between the OpenAI Responses API (POST
// /v1/responses, spoken by Codex CLI) and OpenAI Chat Completions, the
// gateway's hub format:
//
//   - RequestToChat turns a Responses request into a Chat Completions request.
//   - ResponseFromChat turns a chat.completion into a Responses response object.
//   - NewStreamFromChat turns Chat Completions SSE chunks into the Responses
//     streaming event sequence.
//
// and the other way, for a Responses upstream (the ChatGPT Codex backend):
// RequestFromChat, ResponseToChat and NewStreamToChat (upstream.go,
// stream_upstream.go).
//
// The gateway is stateless, so everything that needs server-side state is
// refused (previous_response_id, conversation, prompt templates, item
// references, file_id images) rather than silently answered wrong. Hosted tools
// the Chat API has no slot for (web_search, file_search, local_shell, mcp, …)
// are dropped from the request without error; Codex only offers them as
// optional extras. Freeform "custom" tools (Codex's apply_patch) are offered to
// the Chat model as a function taking one string argument "input", and the
// model's calls are turned back into custom_tool_call items.
package responses

import (
	"fmt"
)

// Error is a constant error of this package, comparable with ==.
type Error string

// Error implements error.
func (e Error) Error() string { return string(e) }

// ErrPreviousResponse is returned by RequestToChat for a request that names a
// previous_response_id: the gateway keeps no response state, so the client must
// send the whole conversation in input. The caller maps it to a 400 with code
// CodePreviousResponseUnsupported.
const ErrPreviousResponse Error = "previous_response_id is not supported: the gateway keeps no response state; send the full conversation in input"

// CodePreviousResponseUnsupported is the error code for ErrPreviousResponse.
const CodePreviousResponseUnsupported = "PREVIOUS_RESPONSE_UNSUPPORTED"

// FieldError reports a request field that is malformed or cannot be
// translated. The caller maps it to a 400.
type FieldError struct {
	// Param is the offending field as a path, e.g. "input[2].call_id".
	Param string
	// Message says what is wrong with it.
	Message string
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return e.Param + ": " + e.Message
}

func fieldErr(param, format string, args ...any) error {
	return &FieldError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// UpstreamError is an error the upstream reported in place of an answer: an
// error chunk inside its stream, an error body, or bytes that are not a chat
// completion. It never becomes a normal end of the client's response.
type UpstreamError struct {
	// Code is the upstream's error code (or type), or a gateway code such as
	// "UPSTREAM_ERROR" or "MALFORMED_UPSTREAM_CHUNK".
	Code string
	// Type is the upstream's error type, when it gave one.
	Type string
	// Message is the upstream's human-readable message.
	Message string
}

// Error implements error.
func (e *UpstreamError) Error() string { return "upstream error " + e.Code + ": " + e.Message }

// Gateway error codes carried by UpstreamError.
const (
	// CodeUpstreamError is used when the upstream's error carries no code.
	CodeUpstreamError = "UPSTREAM_ERROR"
	// CodeMalformedChunk is used for a stream chunk that is not a JSON object.
	CodeMalformedChunk = "MALFORMED_UPSTREAM_CHUNK"
)
