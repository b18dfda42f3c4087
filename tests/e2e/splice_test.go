package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

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
// request log names which happened. A Gemini client's SSE stream is
// restarted the same way (no comment line: Google's SDK reads only data
// events). A Responses (Codex) client gets the
// restarted answer in its own response: one response id, one message item,
// sequence numbers that only grow.
func TestCutStreamRestartedWithVerifiedSplice(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		client  string // "chat", "responses" (a Codex client) or "gemini" (streamGenerateContent)
		mode    fakeupstream.Mode
		spliced bool
	}{
		{"chat", fakeupstream.ModeRestartAnswer, true},
		{"chat", fakeupstream.ModeRestartDiverges, false},
		{"responses", fakeupstream.ModeRestartAnswer, true},
		{"responses", fakeupstream.ModeRestartDiverges, false},
		{"gemini", fakeupstream.ModeRestartAnswer, true},
		{"gemini", fakeupstream.ModeRestartDiverges, false},
	} {
		t.Run(c.client+"/"+string(c.mode), func(t *testing.T) {
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
			var p reply
			switch c.client {
			case "responses":
				p = r.askResponses()
			case "gemini":
				p = r.askGemini()
			default:
				p = r.ask(true)
			}
			s := string(p.body)
			if c.client == "responses" {
				checkResponsesSplice(t, p, fakeupstream.Content(r.primaryKey), c.spliced)
			} else if c.client == "gemini" {
				checkGeminiSplice(t, p, fakeupstream.Content(r.primaryKey), c.spliced)
			} else if c.spliced {
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

// askResponses asks the combo as a Codex client does: a streamed Responses
// request.
func (r *rescueRig) askResponses() reply {
	r.t.Helper()
	start := time.Now()
	resp, out := r.gw.do(http.MethodPost, "/v1/responses", map[string]any{"model": rescueCombo, "stream": true, "input": "hi"},
		map[string]string{"Authorization": "Bearer " + r.gw.key})
	return reply{resp: resp, body: out, elapsed: time.Since(start)}
}

// checkResponsesSplice checks a Responses client's restarted stream: when
// spliced, one response (one response.created, one id), one message item,
// sequence numbers that only grow, the deltas making want once and the done
// events and response.completed carrying it whole; when diverged, the
// original failure and none of the other answer.
func checkResponsesSplice(t *testing.T, p reply, want string, spliced bool) {
	t.Helper()
	s := string(p.body)
	if !spliced {
		if strings.Contains(s, "response.completed") || !strings.Contains(s, "response.failed") ||
			strings.Contains(s, "Help") || strings.Contains(s, "omniroute restarted") {
			t.Fatalf("a diverging restart reached the client:\n%s", s)
		}
		return
	}
	if p.resp.StatusCode != http.StatusOK || strings.Contains(s, "response.failed") || strings.Count(s, "event: response.created") != 1 ||
		!strings.Contains(s, ": omniroute restarted the answer on openai-compatible/"+fallbackModel+" and spliced it after ") {
		t.Fatalf("not spliced (%d):\n%s", p.resp.StatusCode, s)
	}
	var text strings.Builder
	ids, items := map[string]bool{}, map[string]bool{}
	lastSeq := int64(-1)
	var doneText, completedText string
	for _, line := range strings.Split(s, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !strings.HasPrefix(data, "{") {
			continue
		}
		r := gjson.Parse(data)
		if seq := r.Get("sequence_number").Int(); seq <= lastSeq {
			t.Fatalf("sequence number %d after %d:\n%s", seq, lastSeq, s)
		} else {
			lastSeq = seq
		}
		if id := r.Get("response.id").String(); id != "" {
			ids[id] = true
		}
		if id := r.Get("item_id").String(); id != "" {
			items[id] = true
		}
		switch r.Get("type").String() {
		case "response.output_text.delta":
			text.WriteString(r.Get("delta").String())
		case "response.output_text.done":
			doneText = r.Get("text").String()
		case "response.completed":
			completedText = r.Get("response.output.0.content.0.text").String()
			items[r.Get("response.output.0.id").String()] = true
		}
	}
	if text.String() != want || doneText != want || completedText != want || len(ids) != 1 || len(items) != 1 {
		t.Fatalf("deltas %q, done %q, completed %q (want %q); response ids %v, items %v:\n%s",
			text.String(), doneText, completedText, want, ids, items, s)
	}
}

// askGemini asks the combo as a Gemini SDK does: streamGenerateContent as SSE.
func (r *rescueRig) askGemini() reply {
	r.t.Helper()
	start := time.Now()
	resp, out := r.gw.do(http.MethodPost, "/v1beta/models/"+rescueCombo+":streamGenerateContent?alt=sse", map[string]any{
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}},
		map[string]string{"x-goog-api-key": r.gw.key})
	return reply{resp: resp, body: out, elapsed: time.Since(start)}
}

// checkGeminiSplice checks a Gemini client's restarted stream: when spliced,
// its chunks' text makes want once and the last chunk finishes; when
// diverged, the original failure and none of the other answer. Neither has
// a comment line.
func checkGeminiSplice(t *testing.T, p reply, want string, spliced bool) {
	t.Helper()
	s := string(p.body)
	if strings.Contains(s, ": omniroute") {
		t.Fatalf("a comment line reached a Gemini client:\n%s", s)
	}
	var text strings.Builder
	finish := ""
	for _, line := range strings.Split(s, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !strings.HasPrefix(data, "{") {
			continue
		}
		c := gjson.Get(data, "candidates.0")
		for _, part := range c.Get("content.parts").Array() {
			if !part.Get("thought").Bool() {
				text.WriteString(part.Get("text").String())
			}
		}
		if f := c.Get("finishReason").String(); f != "" {
			finish = f
		}
	}
	if !spliced {
		if finish != "" || strings.Contains(s, "Help") || !strings.Contains(s, "error") {
			t.Fatalf("a diverging restart reached the client:\n%s", s)
		}
		return
	}
	if p.resp.StatusCode != http.StatusOK || text.String() != want || finish == "" {
		t.Fatalf("not spliced (%d): text %q, want %q, finish %q:\n%s", p.resp.StatusCode, text.String(), want, finish, s)
	}
}
