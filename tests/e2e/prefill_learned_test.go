package e2e

import (
	"bytes"
	"net/http"
	"testing"

	"omniroute/tests/fakeupstream"
)

// newRestartableRescue is newRescue's two-connection rig whose gateway can
// be restarted (its cleanup stops whichever gateway runs then).
func newRestartableRescue(t *testing.T) *rescueRig {
	t.Helper()
	r := &rescueRig{t: t, up: fakeupstream.New(), two: true, primaryKey: "key-a", fallbackKey: "key-b"}
	base := r.up.Start()
	t.Cleanup(r.up.Close)
	r.gw = startGateway(t, t.TempDir(), 0)
	t.Cleanup(func() {
		if !r.gw.hasExited() {
			r.gw.stop()
		}
	})
	r.primaryConn = r.addPrefixed("p", base, "key-a", primaryModel)
	r.fallbackCon = r.addPrefixed("f", base, "key-b", fallbackModel)
	r.combo("p/"+primaryModel, "f/"+fallbackModel)
	return r
}

// restart stops the rig's gateway and starts it again on the same data
// directory (connections, combo and what was learned are on disk).
func (r *rescueRig) restart() {
	r.t.Helper()
	dir := r.gw.dir
	r.gw.stop()
	r.gw = startGateway(r.t, dir, 0)
}

// prefillOf is what GET /api/providers shows of model's prefill on conn.
func (r *rescueRig) prefillOf(conn, model string) (prefill, source any) {
	r.t.Helper()
	m := r.gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/providers", nil)
	for _, c := range m["connections"].([]any) {
		if c := c.(map[string]any); c["id"] == conn {
			e, _ := c["modelPrefill"].(map[string]any)[model].(map[string]any)
			return e["prefill"], e["prefillSource"]
		}
	}
	r.t.Fatalf("connection %s not listed: %v", conn, m)
	return nil, nil
}

// TestLearnedPrefillSurvivesARestart (issue 40): with nothing declared, what
// a continuation learns of the next target's prefill is stored per
// (connection, model): after a restart a target that honoured is shown so
// and a cut stream is continued on it again, and a target that refused (a
// 400 naming the prefill) is shown so and never asked for a prefill again
// (the answer is restarted on it instead).
func TestLearnedPrefillSurvivesARestart(t *testing.T) {
	t.Parallel()
	cut := fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1}
	t.Run("honoured", func(t *testing.T) {
		t.Parallel()
		r := newRestartableRescue(t)
		if p, src := r.prefillOf(r.fallbackCon, fallbackModel); p != "unknown" || src != nil {
			t.Fatalf("before any continuation: %v %v", p, src)
		}
		for i, when := range []string{"before the restart", "after the restart"} {
			if i == 1 {
				r.restart()
				if p, src := r.prefillOf(r.fallbackCon, fallbackModel); p != "honoured" || src != "learned" {
					t.Fatalf("after the restart the fallback shows %v (%v), want honoured, learned", p, src)
				}
			}
			r.fault(cut)
			p := r.ask(true)
			text, done := sseContent(t, p.body)
			if p.resp.StatusCode != http.StatusOK || !done || text != fakeupstream.Content(r.fallbackKey) ||
				!bytes.Contains(p.body, []byte(": omniroute continued the answer on openai-compatible/"+fallbackModel)) {
				t.Fatalf("%s: not continued: %d %q (done %v):\n%s", when, p.resp.StatusCode, text, done, p.body)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		r := newRestartableRescue(t)
		r.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill})
		for i, when := range []string{"before the restart", "after the restart"} {
			if i == 1 {
				r.restart()
				if p, src := r.prefillOf(r.fallbackCon, fallbackModel); p != "refused" || src != "learned" {
					t.Fatalf("after the restart the fallback shows %v (%v), want refused, learned", p, src)
				}
			}
			r.fault(cut)
			_, before := r.hits()
			p := r.ask(true)
			// The fallback cannot continue, so the answer is restarted on
			// it and spliced (its answer reproduces the delivered text).
			if !bytes.Contains(p.body, []byte("[DONE]")) || bytes.Contains(p.body, []byte("omniroute continued")) ||
				!bytes.Contains(p.body, []byte(": omniroute restarted the answer on openai-compatible/"+fallbackModel)) {
				t.Fatalf("%s: want a restarted, spliced answer (no continuation):\n%s", when, p.body)
			}
			_, after := r.hits()
			// Before: the prefill (refused, 400) and the restart; after the
			// restart: only the restart.
			if want := []int{2, 1}[i]; after-before != want {
				t.Fatalf("%s: the refusing fallback was asked %d time(s), want %d", when, after-before, want)
			}
			if _, last := r.up.LastRequest(r.fallbackKey); bytes.Contains(last, []byte(`"role":"assistant"`)) {
				t.Fatalf("%s: the fallback's last request carried a prefill: %s", when, last)
			}
		}
	})
}
