package gemini

import "fmt"

// InputError reports a body this package cannot translate: not JSON, a field
// of the wrong type, or content with no counterpart in the other format. The
// caller answers 400 for a client body (502 for an upstream answer).
type InputError struct {
	Field string // JSON path of the offending field, "" for the whole body
	Msg   string
}

// Error returns "field: message".
func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func inputErr(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// UpstreamStreamError is an error the upstream reported inside its stream (a
// Gemini chunk holding {"error": …} or an OpenAI chunk with an "error"
// object). Stream translators return it from Event so the caller ends the
// client's stream with an error instead of a normal end.
type UpstreamStreamError struct {
	Code    string // Google's status (e.g. "RESOURCE_EXHAUSTED") or the upstream's code
	Message string
}

// Error describes the upstream's error with its code.
func (e *UpstreamStreamError) Error() string {
	if e.Code == "" {
		return "upstream stream error: " + e.Message
	}
	return "upstream stream error (" + e.Code + "): " + e.Message
}
