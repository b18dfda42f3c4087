package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestCutStreamRestartedWithVerifiedSplice (issue 40): a stream cut on the
// primary whose fallback cannot continue it (it ignores the prefill and
// starts the answer over) is restarted there without a prefill; the
// restarted answer is held until it reproduced the delivered text, and the
// client gets one complete answer (the delivered text once, then the rest).
// A fallback (refusing the prefill) whose restarted answer departs from the
// delivered text leaves
// the client the original failure, none of the other answer's text. The
// request log names which happened.
func TestCutStreamRestartedWithVerifiedSplice(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode    fakeupstream.Mode
		spliced bool
	}{
		{fakeupstream.ModeRestartAnswer, true},
		{fakeupstream.ModeRestartDiverges, false},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			r := newRescue(t, true, nil, nil)
			tried := "CONTINUATION_RESTARTED" // the restart mode ignores a prefill: the guard sees it start over
			if !c.spliced {
				// A continuation that ignores the prefill with another text is
				// not told from a real one: this fallback refuses the prefill.
				r.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill, Times: 1})
				tried = `"status":400`
			}
			r.fallbackFault(fakeupstream.Fault{Mode: c.mode, AnswerAs: r.primaryKey})
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
			p := r.ask(true)
			s := string(p.body)
			if c.spliced {
				text, done := sseContent(t, p.body)
				if p.resp.StatusCode != http.StatusOK || !done || text != fakeupstream.Content(r.primaryKey) ||
					!strings.Contains(s, ": omniroute restarted the answer on openai-compatible/"+fallbackModel+" and spliced it after ") {
					t.Fatalf("not spliced: %d %q (done %v):\n%s", p.resp.StatusCode, text, done, s)
				}
			} else if strings.Contains(s, "[DONE]") || !strings.Contains(s, "stream interrupted") ||
				strings.Contains(s, "Help") || strings.Contains(s, "omniroute restarted") {
				t.Fatalf("a diverging restart reached the client:\n%s", s)
			}
			want := `"splice":"restarted-spliced"`
			if !c.spliced {
				want = `"splice":"restart-diverged"`
			}
			var attempts string
			waitFor(t, "the log row naming the splice", func() bool {
				m := r.gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs?limit=1", nil)
				logs, _ := m["logs"].([]any)
				if len(logs) != 1 {
					return false
				}
				switch v := logs[0].(map[string]any)["attempts"].(type) {
				case string:
					attempts = v
				default:
					b, _ := json.Marshal(v)
					attempts = string(b)
				}
				return strings.Contains(attempts, want)
			})
			if !strings.Contains(attempts, tried) {
				t.Fatalf("the continuation was not tried first: %s", attempts)
			}
		})
	}
}
