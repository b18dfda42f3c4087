package prefillcap

import (
	"strconv"
	"strings"
)

// Marker is the probe's trailing assistant message: the user message asks
// for exactly this word, and the assistant turn already holds it. A target
// that continues the assistant turn has nothing left to say (an empty
// answer, a stop, punctuation); one that ignores it starts the word over.
const Marker = "OMNIROUTEPREFILLPROBE"

// ProbeQuestion is the probe's user message.
const ProbeQuestion = "Reply with exactly this word and nothing else: " + Marker

// Finding is what one probe found, with the sentence the Test shows.
type Finding struct {
	State   State
	Message string
}

// Judge reads the probe's answer: its status, its body (for a 400 naming
// the prefill) and its text (the first output token or so; "" for none).
func Judge(status int, body []byte, text string) Finding {
	switch {
	case RefusesPrefill(status, body):
		return Finding{Refused, "refused: the upstream answered 400 to a trailing assistant message; a cut stream is never continued on this model"}
	case status >= 200 && status <= 299 && startsOver(text):
		return Finding{Refused, "ignored: the answer started over instead of continuing the trailing assistant message; a cut stream is never continued on this model"}
	case status >= 200 && status <= 299:
		return Finding{Honoured, "honoured: the model continued a trailing assistant message; a cut stream can be finished on it"}
	case status == 0:
		return Finding{Unknown, "not known: the upstream did not answer the probe"}
	}
	return Finding{Unknown, "not known: the upstream answered " + strconv.Itoa(status) + " to the probe"}
}

// startsOver reports an answer that begins the marker again (or is part
// of its beginning: a one-token answer holds only its first piece).
func startsOver(text string) bool {
	t := strings.ToUpper(strings.TrimLeft(strings.TrimSpace(text), "\"'`*"))
	if t == "" {
		return false
	}
	return strings.HasPrefix(Marker, t) || strings.HasPrefix(t, Marker)
}
