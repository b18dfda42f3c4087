package fakeupstream

import (
	"fmt"
	"slices"
	"sync"
)

// Mode selects how a Fault misbehaves.
type Mode string

const (
	// ModeStatus answers Fault.Status (default 500) with Fault.Headers and
	// Fault.Body (default: the provider's captured error body for that status),
	// after LatencyMs when set.
	ModeStatus Mode = "status"
	// ModeResetBeforeHeaders hijacks the connection and closes it without
	// writing a byte: the client sees EOF, or ECONNRESET with HardReset.
	ModeResetBeforeHeaders Mode = "reset_before_headers"
	// ModeStallBeforeHeaders writes nothing until the client goes away, the
	// fake is closed, or StallMs passes (then it answers normally; StallMs 0
	// stalls for ever).
	ModeStallBeforeHeaders Mode = "stall_before_headers"
	// ModeStallMidStream sends 200, the stream preamble and AfterChunks content
	// events (for a non-streaming request: that many of the body's pieces),
	// flushes, then stalls like ModeStallBeforeHeaders and finishes normally if
	// StallMs passes. It is also the "stall after N events" mode: see
	// ModeStallAfterEvents.
	ModeStallMidStream Mode = "stall_mid_stream"
	// ModeSlowDrip answers normally but waits DripMs before each content event
	// (or body piece) and before the closing frames.
	ModeSlowDrip Mode = "slow_drip"
	// ModeLatency waits LatencyMs before answering normally.
	ModeLatency Mode = "latency"
	// ModeResetMidStream sends 200, the preamble and AfterChunks events, then
	// hijacks and closes the connection: the client sees a truncated stream
	// (unexpected EOF, or ECONNRESET with HardReset).
	ModeResetMidStream Mode = "reset_mid_stream"

	// ModeCutAfterEvents sends 200, the preamble and AfterChunks content
	// events, then ends the response cleanly at the HTTP and TCP level
	// (terminating chunk, no reset) WITHOUT the closing frames: no finish
	// chunk, no usage chunk, no "data: [DONE]"; for Anthropic no
	// content_block_stop, message_delta or message_stop. AfterChunks at or past
	// the event count sends every content event and still no closing frame.
	// Non-streaming requests get 200 without Content-Length and the first
	// AfterChunks body pieces, then a clean end: truncated JSON (the whole
	// body when AfterChunks reaches the piece count).
	ModeCutAfterEvents Mode = "cut_after_events"
	// ModeNoDone sends the whole stream, finish_reason chunk (and usage chunk
	// when requested) included, but not "data: [DONE]"; for Anthropic
	// everything but message_stop (content_block_stop and message_delta with
	// the stop_reason are sent). Non-streaming requests are answered normally.
	ModeNoDone Mode = "no_done"
	// ModeMalformedEvent sends the preamble and AfterChunks content events,
	// then one event whose data is not valid JSON (MalformedOpenAIData /
	// MalformedAnthropicData, the latter as a content_block_delta event), then
	// the rest of the normal stream. Non-streaming requests get 200 with that
	// data inserted after AfterChunks body pieces (invalid JSON, exact
	// Content-Length).
	ModeMalformedEvent Mode = "malformed_event"
	// ModeSlowFirstToken sends 200 and the stream preamble at once, waits
	// LatencyMs, then sends the content events and closing frames normally.
	// Non-streaming requests get 200 headers at once and the body after
	// LatencyMs (unlike ModeLatency, which delays the headers too).
	ModeSlowFirstToken Mode = "slow_first_token"
	// ModeReasoningOnlyHeartbeat answers as if the request asked for reasoning
	// (see the package doc) and, after the preamble, sends AfterChunks
	// reasoning frames carrying HeartbeatThought (OpenAI-compatible
	// delta.reasoning_content chunks; Anthropic thinking_delta events in the
	// thinking block the preamble opened) DripMs apart, then only heartbeats
	// every DripMs (OpenAI: the SSE comment line ": keep-alive"; Anthropic:
	// "event: ping"). The heartbeats go on until the client goes away or the
	// fake is closed, or, when StallMs is set, until StallMs has passed since
	// the first heartbeat wait began; then the normal answer follows (its own
	// reasoning, content and closing frames). DripMs 0 means
	// DefaultHeartbeatMs. Non-streaming requests (which cannot carry
	// heartbeats) wait like ModeStallBeforeHeaders, then get the JSON answer
	// with reasoning.
	ModeReasoningOnlyHeartbeat Mode = "reasoning_only_heartbeat"
	// ModeErrorEvent sends the preamble and AfterChunks content events, then
	// an in-stream error and a clean end without closing frames. OpenAI: a
	// data chunk OpenAIStreamErrorData; Anthropic: "event: error" with
	// AnthropicOverloadedBody. Fault.Body, when set, replaces the error data.
	// Non-streaming requests get 200 whose body is that error object, as some
	// providers report failures that happen after the status is sent.
	// LatencyMs, when set, pauses between the content events (flushed) and the
	// error, so the content surely reaches the client first.
	ModeErrorEvent Mode = "error_event"
	// ModeRejectPrefill answers 400 (AnthropicPrefillRejectedBody) to a
	// request ending with an assistant message, as a model without prefill
	// support does; other requests are answered normally.
	ModeRejectPrefill Mode = "reject_prefill"
	// ModeIgnorePrefill answers a request ending with an assistant message
	// as if that message were not there (the whole answer from its start),
	// as an endpoint that does not honour a prefill does; other requests are
	// answered normally.
	ModeIgnorePrefill Mode = "ignore_prefill"
	// ModeHonourPrefill continues any trailing assistant message with
	// PrefillContinuation, whatever it holds (not only the beginning of the
	// key's own answer), as a server that honours a prefill does: the
	// connection Test's probe sends one that is not. Other requests are
	// answered normally.
	ModeHonourPrefill Mode = "honour_prefill"
	// ModeNoUsage answers normally but reports no usage, as some
	// OpenAI-compatible servers do: a JSON answer without its "usage"
	// member, a stream without its usage chunk even when the request sets
	// stream_options.include_usage. OpenAI format only: Anthropic and Gemini
	// answers (whose usage is part of their framing) are answered normally.
	ModeNoUsage Mode = "no_usage"
	// ModeRestartAnswer answers every chat or messages request, one ending
	// with an assistant message included (the message ignored), with the
	// whole answer of key Fault.AnswerAs (Content(AnswerAs); the request's
	// own key when empty) from its start: a deterministic target that
	// restarts the answer a stream cut on that key had begun.
	ModeRestartAnswer Mode = "restart_answer"
	// ModeRestartDiverges is ModeRestartAnswer with another text,
	// DivergentContent(AnswerAs), which departs from Content(AnswerAs) at
	// its fourth byte: a target whose restarted answer is not the one a cut
	// stream had begun.
	ModeRestartDiverges Mode = "restart_diverges"
	// ModeStrictFields answers 400 (StrictFieldBody) to an OpenAI chat
	// request one of whose messages carries a member OpenAI's Chat
	// Completions reference does not define for a message (StrictMessageFields),
	// as a strict OpenAI-compatible vendor validating its request schema
	// does; other requests are answered normally.
	ModeStrictFields Mode = "strict_fields"
)

// DivergentContent is ModeRestartDiverges's answer for label: it begins
// like Content(label) and departs from it at the fourth byte.
func DivergentContent(label string) string { return "Help from " + label }

// ModeStallAfterEvents is "stall after N events": it is ModeStallMidStream
// (same wire value, "stall_mid_stream"), AfterChunks being N.
const ModeStallAfterEvents = ModeStallMidStream

// DefaultHeartbeatMs is the heartbeat period of ModeReasoningOnlyHeartbeat
// when Fault.DripMs is 0.
const DefaultHeartbeatMs = 100

// Fault is a scripted misbehaviour, applied per API key (see
// Upstream.SetFault) so that two gateway connections to one fake can behave
// differently. Its JSON form is what POST /_fake/faults accepts.
type Fault struct {
	// Mode is the kind of misbehaviour; required.
	Mode Mode `json:"mode"`
	// Status is the HTTP status of ModeStatus; 0 means 500.
	Status int `json:"status,omitempty"`
	// Headers are added to the response of every mode that writes headers,
	// e.g. {"Retry-After":"7"}.
	Headers map[string]string `json:"headers,omitempty"`
	// Body overrides the default error body of ModeStatus and the error
	// data of ModeErrorEvent.
	Body string `json:"body,omitempty"`
	// StallMs bounds the stall modes and the heartbeats of
	// ModeReasoningOnlyHeartbeat; 0 waits until the client cancels or the
	// fake is closed.
	StallMs int `json:"stallMs,omitempty"`
	// AfterChunks is how many content events (text, reasoning or tool
	// argument deltas; body pieces for non-streaming requests) the mid-stream
	// modes send first, and how many reasoning frames
	// ModeReasoningOnlyHeartbeat sends before its heartbeats.
	AfterChunks int `json:"afterChunks,omitempty"`
	// DripMs is the pause before each event in ModeSlowDrip, and the period
	// of the reasoning frames and heartbeats of ModeReasoningOnlyHeartbeat.
	DripMs int `json:"dripMs,omitempty"`
	// LatencyMs is the delay of ModeLatency, ModeSlowFirstToken and ModeStatus,
	// and the pause before ModeErrorEvent's error.
	LatencyMs int `json:"latencyMs,omitempty"`
	// Times is how many requests the fault applies to; 0 means until cleared.
	Times int `json:"times,omitempty"`
	// Models, when set, restricts the fault to requests for these models.
	Models []string `json:"models,omitempty"`
	// ToolResultsOnly restricts the fault to chat and messages requests whose
	// last message is a tool result: the answer after an agent ran a tool, so
	// an agent's tool call goes through and its final text answer misbehaves,
	// however many side requests (titles, summaries) the agent sends.
	ToolResultsOnly bool `json:"toolResultsOnly,omitempty"`
	// HardReset makes the reset modes close with SO_LINGER 0 (a TCP RST)
	// instead of a normal close. A RST may discard chunks the client has not
	// read yet, so mid-stream tests that count chunks leave it off.
	HardReset bool `json:"hardReset,omitempty"`
	// Gather (ModeStatus only) holds each request under this fault until
	// Gather of them have arrived, then answers them all at the same moment:
	// a herd that fails together. Later requests are answered at once. The
	// count is per installation (SetFault / AddFault / POST /_fake/faults);
	// the fake closing or a client going away ends a request's wait.
	Gather int `json:"gather,omitempty"`
	// AnswerAs is the key whose answer ModeRestartAnswer and
	// ModeRestartDiverges give (empty: the request's own).
	AnswerAs string `json:"answerAs,omitempty"`

	gate *gather // the installation's barrier when Gather > 0
}

// gather is one installed fault's barrier: open is closed once n requests
// have arrived.
type gather struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

// arrive counts one request and returns the channel to wait on.
func (g *gather) arrive() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.arrived++
	if g.arrived == g.n {
		close(g.open)
	}
	return g.open
}

// Validate reports whether f is well formed, so bad scripts fail loudly at
// SetFault time rather than silently never matching.
func (f Fault) Validate() error {
	switch f.Mode {
	case ModeStatus, ModeResetBeforeHeaders, ModeStallBeforeHeaders, ModeStallMidStream,
		ModeSlowDrip, ModeLatency, ModeResetMidStream, ModeCutAfterEvents, ModeNoDone,
		ModeMalformedEvent, ModeSlowFirstToken, ModeReasoningOnlyHeartbeat, ModeErrorEvent, ModeRejectPrefill, ModeIgnorePrefill, ModeHonourPrefill, ModeNoUsage,
		ModeRestartAnswer, ModeRestartDiverges, ModeStrictFields, ModeReasoningDetails, ModeReasoningOpaque:
	default:
		return fmt.Errorf("fakeupstream: unknown fault mode %q", f.Mode)
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 999) {
		return fmt.Errorf("fakeupstream: bad fault status %d", f.Status)
	}
	if f.StallMs < 0 || f.AfterChunks < 0 || f.DripMs < 0 || f.LatencyMs < 0 || f.Times < 0 || f.Gather < 0 {
		return fmt.Errorf("fakeupstream: negative fault field in %+v", f)
	}
	return nil
}

// faultState is an installed fault and how many more requests it applies to
// (-1: unlimited).
type faultState struct {
	f    Fault
	left int
}

func (s *faultState) matches(model string, toolResult bool) bool {
	return (len(s.f.Models) == 0 || slices.Contains(s.f.Models, model)) && (!s.f.ToolResultsOnly || toolResult)
}

// takeFault picks the first fault of list matching model, counts it down and
// returns the list without it when it is used up; toolResult says the
// request ends with a tool result (Fault.ToolResultsOnly).
func takeFault(list []*faultState, model string, toolResult bool) (*Fault, []*faultState) {
	for i, s := range list {
		if !s.matches(model, toolResult) {
			continue
		}
		f := s.f
		if s.left > 0 {
			s.left--
			if s.left == 0 {
				list = slices.Delete(list, i, i+1)
			}
		}
		return &f, list
	}
	return nil, list
}
