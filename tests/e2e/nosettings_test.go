package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// Issue 40: resilience with no settings changed. Each test runs the built
// binary on a fresh data directory whose settings are left as they are.

// errorReply reads an error answer's code and the reasons of its diagnostics.
func errorReply(body []byte) (code string, reasons []string) {
	var e struct {
		Error struct {
			Code        string `json:"code"`
			Diagnostics struct {
				Excluded []struct {
					Reason string `json:"reason"`
				} `json:"excluded"`
			} `json:"diagnostics"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	for _, x := range e.Error.Diagnostics.Excluded {
		reasons = append(reasons, x.Reason)
	}
	return e.Error.Code, reasons
}

// TestDeadOnlyComboAnswersAtOnce (issue 40 A): a combo whose only target
// answers 503 every time is never held waiting for the breaker's reset or
// a streak's cooldown (guide §4 waits on a 429 window only). Every request,
// the combo's and the plain model's, is answered in under 3 s; once the
// target is held by a timer the answer is 503 all_targets_cooling_down with
// the real return as Retry-After (the breaker's next probe once it opened),
// and without x-should-retry: false, as that return is within a minute.
func TestDeadOnlyComboAnswersAtOnce(t *testing.T) {
	t.Parallel()
	r := newRescue(t, false, nil, nil)
	r.gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/combos", map[string]any{"name": "dead", "strategy": "priority",
		"targets": []any{map[string]any{"model": "p/" + primaryModel}}})
	r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	hdr := map[string]string{"Authorization": "Bearer " + r.gw.key}
	deadline := time.Now().Add(45 * time.Second)
	opened := false
	for i := 0; time.Now().Before(deadline) && !opened; i++ {
		model := "dead"
		if i%2 == 1 {
			model = "p/" + primaryModel // a plain model answers the same way
		}
		start := time.Now()
		resp, body := r.gw.do(http.MethodPost, "/v1/chat/completions", chatBody(model, false), hdr)
		took := time.Since(start)
		if took >= 3*time.Second {
			t.Fatalf("request %d (%s) held %v: %d %s", i, model, took, resp.StatusCode, body)
		}
		code, reasons := errorReply(body)
		switch resp.StatusCode {
		case http.StatusBadGateway: // an attempt failed on a target not (yet) held by a timer
		case http.StatusServiceUnavailable:
			ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if code != "all_targets_cooling_down" || err != nil || ra < 1 || ra > 30 || resp.Header.Get("X-Should-Retry") != "" {
				t.Fatalf("request %d (%s): 503 %q, Retry-After %q, x-should-retry %q: %s", i, model, code,
					resp.Header.Get("Retry-After"), resp.Header.Get("X-Should-Retry"), body)
			}
			for _, reason := range reasons {
				opened = opened || reason == "circuit_open"
			}
		default:
			t.Fatalf("request %d (%s): %d %s", i, model, resp.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !opened {
		t.Fatal("the breaker never opened in 45 s of a dead upstream")
	}
	// Open: both names are answered at once with the breaker's next probe.
	for _, model := range []string{"dead", "p/" + primaryModel} {
		start := time.Now()
		resp, body := r.gw.do(http.MethodPost, "/v1/chat/completions", chatBody(model, true), hdr)
		if took := time.Since(start); took >= 3*time.Second || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s after the breaker opened: %d in %v (Retry-After %q): %s", model, resp.StatusCode, took, resp.Header.Get("Retry-After"), body)
		}
	}
}

// TestStreamWithoutHeadersMovesOn (issue 40 C): with no setting changed, a
// streaming request whose primary never sends its response headers is
// served by the fallback after streamFirstByteTimeoutMs (30 s), well under
// a minute, not after the 120 s first-byte wait non-streaming requests keep.
func TestStreamWithoutHeadersMovesOn(t *testing.T) {
	t.Parallel()
	r := newRescue(t, true, nil, nil)
	r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStallBeforeHeaders})
	// The rig's client gives up after 30 s: this one waits up to a minute.
	ask := chatBody(rescueCombo, true)
	ask["stream_options"] = map[string]any{"include_usage": true}
	body, _ := json.Marshal(ask)
	req, err := http.NewRequest(http.MethodPost, r.gw.base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.gw.key)
	start := time.Now()
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("no answer within a minute: %v", err)
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := reply{resp: resp, body: out, elapsed: time.Since(start)}
	r.answered(p, true)
	if p.model() != fallbackModel || p.elapsed >= 60*time.Second || p.elapsed < 29*time.Second {
		t.Fatalf("served by %q after %v, want the fallback after the 30 s header wait", p.model(), p.elapsed)
	}
}

// TestLeaseAndShortLockRetryAfter (issue 40 E): one connection held by
// another session's 30 min exclusive lease, the other rate limited for
// 2 min: the refusal's Retry-After is the lock's end (≤ 120 s), not the
// lease's 1800 s, and its message names the target that returns first.
func TestLeaseAndShortLockRetryAfter(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const model = "openai-compatible/gpt-4o-mini"
	m := s.gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{"name": "managed",
		"scopes": []string{"inference", "lease:exclusive"}, "allowedConnections": []string{s.primary, s.secondary}})
	key, _ := m["key"].(string)
	owner := "vlo_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1"
	resp, body := s.gw.do(http.MethodPost, "/api/v1/session-leases", map[string]any{"action": "acquire", "model": model, "ttlMs": 1_800_000},
		map[string]string{"Authorization": "Bearer " + key, "X-OmniRoute-Lease-Owner": owner})
	var lease struct {
		ConnectionID string `json:"connectionId"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &lease) != nil || lease.ConnectionID != s.primary {
		t.Fatalf("acquire: %d %s", resp.StatusCode, body)
	}
	s.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "120"}, Times: 1})
	plain := map[string]string{"Authorization": "Bearer " + key}
	if resp, body := s.gw.do(http.MethodPost, "/v1/chat/completions", chatBody(model, false), plain); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the 429 itself: %d %s", resp.StatusCode, body)
	}
	resp, body = s.gw.do(http.MethodPost, "/v1/chat/completions", chatBody(model, false), plain)
	ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	code, _ := errorReply(body)
	if resp.StatusCode != http.StatusTooManyRequests || code != "LEASE_CAPACITY_UNAVAILABLE" || err != nil || ra < 1 || ra > 120 ||
		!bytes.Contains(body, []byte(s.secondary)) { // its breaker key names the connection
		t.Fatalf("lease + 2 min lock: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestRecoveredPrimaryServesAgainWithin15s (issue 40 B): with no setting
// changed, a combo's primary answers 503 through a 25 s outage while its
// fallback serves every request; once it recovers it serves again within
// 15 s (the breaker's probe interval and the cap on streak cooldowns).
func TestRecoveredPrimaryServesAgainWithin15s(t *testing.T) {
	t.Parallel()
	r := newRescue(t, true, nil, nil)
	r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	for end := time.Now().Add(25 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		p := r.ask(false)
		r.answered(p, false)
		if p.model() != fallbackModel {
			t.Fatalf("during the outage served by %q", p.model())
		}
	}
	if ph, _ := r.hits(); ph == 0 {
		t.Fatal("the primary was never tried")
	}
	r.up.ClearFaults()
	recovered := time.Now()
	for {
		p := r.ask(false)
		r.answered(p, false)
		if p.model() == primaryModel {
			t.Logf("the primary serves again %v after recovering", time.Since(recovered))
			return
		}
		// 15 s, plus one polling step and a request's own time.
		if waited := time.Since(recovered); waited > 16*time.Second {
			t.Fatalf("the recovered primary still unused %v after recovering", waited)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCutStreamContinuedOnUndeclaredOpenAITarget (issue 40 F): with nothing
// declared, a stream cut on one OpenAI-format target is continued on the
// next OpenAI-compatible one, which honours a trailing assistant prefill;
// a target that refuses the prefill (a 400 naming it) leaves the client
// the original failure and is never asked for a prefill again.
func TestCutStreamContinuedOnUndeclaredOpenAITarget(t *testing.T) {
	t.Parallel()
	r := newRescue(t, true, nil, nil)
	r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
	p := r.ask(true)
	text, done := sseContent(t, p.body)
	if p.resp.StatusCode != http.StatusOK || !done || text != fakeupstream.Content(r.fallbackKey) ||
		!bytes.Contains(p.body, []byte(": omniroute continued the answer on openai-compatible/"+fallbackModel)) {
		t.Fatalf("not continued: %d %q (done %v):\n%s", p.resp.StatusCode, text, done, p.body)
	}

	// A fallback that refuses prefills is never asked for one again; the
	// answer is rescued by the restart (its text reproduces the delivered
	// "Hello ", then the rest: one request, no prefill).
	s := newRescue(t, true, nil, nil)
	s.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill})
	for i := 0; i < 2; i++ {
		s.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
		_, before := s.hits()
		p := s.ask(true)
		if bytes.Contains(p.body, []byte("omniroute continued")) || !bytes.Contains(p.body, []byte("omniroute restarted the answer")) {
			t.Fatalf("request %d: a refused prefill was continued, or not restarted:\n%s", i, p.body)
		}
		_, after := s.hits()
		if want := map[int]int{0: 2, 1: 1}[i]; after-before != want { // prefill refused + restart, then the restart only
			t.Fatalf("request %d: the refusing fallback was asked %d time(s), want %d", i, after-before, want)
		}
		if _, last := s.up.LastRequest(s.fallbackKey); bytes.Contains(last, []byte(`"role":"assistant"`)) {
			t.Fatalf("request %d: the restart carried a prefill: %s", i, last)
		}
	}
}
