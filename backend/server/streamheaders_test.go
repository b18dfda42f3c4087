package server_test

import (
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// TestStreamHeadersWaitIsShort (issue 40 C): streamFirstByteTimeoutMs
// bounds only a streaming request's wait for response headers: a stream
// whose upstream sends none moves on to the next connection after it,
// while a non-streaming request waits the whole firstByteTimeoutMs; and a
// stream whose headers came at once keeps the long wait for its first
// token (a slow first token is not cut at the header limit).
func TestStreamHeadersWaitIsShort(t *testing.T) {
	e := newEnvClock(t, true)
	e.patchSettings(map[string]any{"firstByteTimeoutMs": 3000, "streamFirstByteTimeoutMs": 1000})
	e.addConn("stalled", "key-a", 1)
	second := e.addConn("backup", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStallBeforeHeaders})
	for _, tt := range []struct {
		stream   bool
		min, max time.Duration
	}{{true, time.Second, 2900 * time.Millisecond}, {false, 3 * time.Second, 10 * time.Second}} {
		start := time.Now()
		resp, body := e.chat("gpt-4o-mini", tt.stream, nil)
		took := time.Since(start)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second || took < tt.min || took > tt.max {
			t.Fatalf("stream %v: %d by %s after %v, want the backup after [%v, %v]: %s", tt.stream, resp.StatusCode,
				resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), took, tt.min, tt.max, body)
		}
	}
	// Headers at once, first token after 2 s: past the header limit, within
	// the first-byte wait: served by the stalled connection's model itself.
	e.up.ClearFaults()
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeSlowFirstToken, LatencyMs: 2000})
	resp, body := e.chat("gpt-4o-mini", true, nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") == second {
		t.Fatalf("slow first token: %d by %s: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
}
