package anthropic

import "fmt"

// InputError reports a body this package cannot translate: not JSON, a field
// of the wrong type, or content with no counterpart in the other format. The
// caller answers 400 for a client body (502 for an upstream answer).
type InputError struct {
	Field string // JSON path of the offending field, "" for the whole body
	Msg   string
	// Kind, when set, is a machine-readable reason a client may act on, e.g.
	// KindMidConversationSystem.
	Kind string
}

// KindMidConversationSystem marks a role "system" message inside messages
// that cannot be translated. It is the error_code Claude Code looks for to
// resend the conversation without mid-conversation system messages.
const KindMidConversationSystem = "mid_conversation_system_not_supported"

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

// UpstreamStreamError is an error the upstream reported inside its stream (an
// Anthropic "error" event or an OpenAI chunk with an "error" object). Stream
// translators return it from Event so the caller ends the client's stream with
// an error event instead of a normal end.
type UpstreamStreamError struct {
	Code    string // the upstream's error type or code, e.g. "overloaded_error"
	Message string
}

// Error describes the upstream's error with its code.
func (e *UpstreamStreamError) Error() string {
	if e.Code == "" {
		return "upstream stream error: " + e.Message
	}
	return "upstream stream error (" + e.Code + "): " + e.Message
}
