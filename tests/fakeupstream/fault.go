package fakeupstream

import (
	"fmt"
	"slices"
)

// Mode selects how a Fault misbehaves.
type Mode string

const (
	// ModeStatus answers Fault.Status (default 500) with Fault.Headers and
	// Fault.Body (default: the provider's captured error body for that status).
	ModeStatus Mode = "status"
	// ModeResetBeforeHeaders hijacks the connection and closes it without
	// writing a byte: the client sees EOF, or ECONNRESET with HardReset.
	ModeResetBeforeHeaders Mode = "reset_before_headers"
	// ModeStallBeforeHeaders writes nothing until the client goes away, the
	// fake is closed, or StallMs passes (then it answers normally; StallMs 0
	// stalls for ever).
	ModeStallBeforeHeaders Mode = "stall_before_headers"
	// ModeStallMidStream sends 200, the stream preamble and AfterChunks content
	// chunks (for a non-streaming request: that many of the body's pieces),
	// flushes, then stalls like ModeStallBeforeHeaders and finishes normally if
	// StallMs passes.
	ModeStallMidStream Mode = "stall_mid_stream"
	// ModeSlowDrip answers normally but waits DripMs before each chunk (or body
	// piece) and before the closing frames.
	ModeSlowDrip Mode = "slow_drip"
	// ModeLatency waits LatencyMs before answering normally.
	ModeLatency Mode = "latency"
	// ModeResetMidStream sends 200, the preamble and AfterChunks chunks, then
	// hijacks and closes the connection: the client sees a truncated stream
	// (unexpected EOF, or ECONNRESET with HardReset).
	ModeResetMidStream Mode = "reset_mid_stream"
)

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
	// Body overrides the default error body of ModeStatus.
	Body string `json:"body,omitempty"`
	// StallMs bounds the stall modes; 0 stalls until the client cancels or
	// the fake is closed.
	StallMs int `json:"stallMs,omitempty"`
	// AfterChunks is how many content chunks the mid-stream modes send first.
	AfterChunks int `json:"afterChunks,omitempty"`
	// DripMs is the pause before each chunk in ModeSlowDrip.
	DripMs int `json:"dripMs,omitempty"`
	// LatencyMs is the delay of ModeLatency.
	LatencyMs int `json:"latencyMs,omitempty"`
	// Times is how many requests the fault applies to; 0 means until cleared.
	Times int `json:"times,omitempty"`
	// Models, when set, restricts the fault to requests for these models.
	Models []string `json:"models,omitempty"`
	// HardReset makes the reset modes close with SO_LINGER 0 (a TCP RST)
	// instead of a normal close. A RST may discard chunks the client has not
	// read yet, so mid-stream tests that count chunks leave it off.
	HardReset bool `json:"hardReset,omitempty"`
}

// Validate reports whether f is well formed, so bad scripts fail loudly at
// SetFault time rather than silently never matching.
func (f Fault) Validate() error {
	switch f.Mode {
	case ModeStatus, ModeResetBeforeHeaders, ModeStallBeforeHeaders, ModeStallMidStream,
		ModeSlowDrip, ModeLatency, ModeResetMidStream:
	default:
		return fmt.Errorf("fakeupstream: unknown fault mode %q", f.Mode)
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 999) {
		return fmt.Errorf("fakeupstream: bad fault status %d", f.Status)
	}
	if f.StallMs < 0 || f.AfterChunks < 0 || f.DripMs < 0 || f.LatencyMs < 0 || f.Times < 0 {
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

func (s *faultState) matches(model string) bool {
	return len(s.f.Models) == 0 || slices.Contains(s.f.Models, model)
}

// takeFault picks the first fault of list matching model, counts it down and
// returns the list without it when it is used up.
func takeFault(list []*faultState, model string) (*Fault, []*faultState) {
	for i, s := range list {
		if !s.matches(model) {
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
