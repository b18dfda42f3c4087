//go:build clients

package clients

import (
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// textCases are sdk.mjs's plain-answer cases, streaming and not.
var textCases = []string{"chat", "chat-stream", "messages", "messages-stream", "responses", "responses-stream"}

// TestStreamCutIsAnErrorInEveryClient: every upstream answer is cut after
// two content events. No client may take the partial answer for a complete
// one: each reports an error. Each client gets a fresh gateway, so it meets
// the cut itself, not the cooldown an earlier cut left.
func TestStreamCutIsAnErrorInEveryClient(t *testing.T) {
	cut := fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2}
	for _, u := range []struct{ provider, key, model string }{
		{"openai-compatible", "key-oa", "glm-4.6"},
		{"anthropic-compatible", "key-an", "kimi-k2"},
	} {
		t.Run(u.provider, func(t *testing.T) {
			cutStack := func(t *testing.T) *stack {
				s := newStack(t)
				s.addConn(u.provider, u.key, 1, u.model)
				s.up.SetFault("*", cut)
				return s
			}
			for _, name := range textCases {
				t.Run(name, func(t *testing.T) {
					s := cutStack(t)
					r := runSDK(t, s.base, s.key, u.model, name)[name]
					t.Logf("error: %.200s", r.Error)
					if r.Error == "" {
						t.Fatalf("a cut answer was taken as a success: %+v", r)
					}
					if strings.HasSuffix(name, "-stream") && strings.HasPrefix(r.Error, "5") {
						t.Errorf("the stream was refused (%q), not cut: the test no longer covers a cut", r.Error)
					}
					if s.up.Hits(u.key) == 0 {
						t.Errorf("the upstream was never asked")
					}
				})
			}
			t.Run("claude-code", func(t *testing.T) {
				s := cutStack(t)
				res, code, out := runClaude(t, s, u.model, "Say hello.")
				t.Logf("claude: exit %d, %.200q", code, res.Result)
				if code == 0 || !res.IsError {
					t.Errorf("claude exit %d, result %+v: a cut answer was taken as a success\n%s", code, res, out)
				}
				if s.up.Hits(u.key) == 0 {
					t.Errorf("the upstream was never asked")
				}
			})
			if u.provider != "openai-compatible" {
				return // Codex speaks Responses: one upstream format shows its stream failing
			}
			t.Run("codex", func(t *testing.T) {
				s := cutStack(t)
				msg, code, out := runCodex(t, s, codexConfig(s.base, u.model), "Say hello.", "OMNIROUTE_API_KEY="+s.key)
				if code == 0 {
					t.Errorf("codex exit 0 with last message %q: a cut answer was taken as a success\n%s", msg, out)
				}
				if s.up.Hits(u.key) == 0 {
					t.Errorf("the upstream was never asked")
				}
			})
		})
	}
}

// TestRateLimitOnFirstConnectionIsInvisible: the first connection answers
// 429; every client, on its first request, gets its answer from the second
// one without noticing.
func TestRateLimitOnFirstConnectionIsInvisible(t *testing.T) {
	limited := fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429}
	newLimitedStack := func(t *testing.T, model string) *stack {
		s := newStack(t)
		s.addConn("openai-compatible", "key-limited", 1, model)
		s.addConn("openai-compatible", "key-ok", 2, model)
		s.up.SetFault("key-limited", limited)
		return s
	}
	checkFailover := func(t *testing.T, s *stack) {
		t.Helper()
		if s.up.Hits("key-limited") == 0 || s.up.Hits("key-ok") == 0 {
			t.Errorf("hits: limited %d, ok %d; want the 429 seen and the request served by the second connection",
				s.up.Hits("key-limited"), s.up.Hits("key-ok"))
		}
	}
	t.Run("sdks", func(t *testing.T) {
		for _, name := range textCases {
			t.Run(name, func(t *testing.T) {
				s := newLimitedStack(t, "glm-4.6")
				got := runSDK(t, s.base, s.key, "glm-4.6", name)
				if r := got[name]; r.Error != "" || r.Text != fakeupstream.Content("key-ok") {
					t.Errorf("%+v, want %q", r, fakeupstream.Content("key-ok"))
				}
				checkFailover(t, s)
			})
		}
	})
	t.Run("claude-code", func(t *testing.T) {
		s := newLimitedStack(t, "glm-4.6")
		s.up.SetToolCalls(map[string]string{"Bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})
		res, code, out := runClaude(t, s, "glm-4.6", "Run the marker command.")
		if code != 0 || res.IsError || res.Result != fakeupstream.ToolResultText(toolMarker) {
			t.Errorf("claude exit %d, result %+v\n%s", code, res, out)
		}
		checkFailover(t, s)
	})
	t.Run("codex", func(t *testing.T) {
		s := newLimitedStack(t, "glm-4.6")
		s.up.SetToolCalls(map[string]string{"exec_command": `{"cmd":"echo ` + toolMarker + `"}`})
		msg, code, out := runCodex(t, s, codexConfig(s.base, "glm-4.6"), "Run the marker command.", "OMNIROUTE_API_KEY="+s.key)
		if code != 0 || !strings.HasPrefix(msg, fakeupstream.ToolResultText("")) || !strings.HasSuffix(msg, toolMarker) {
			t.Errorf("codex exit %d, last message %q\n%s", code, msg, out)
		}
		checkFailover(t, s)
	})
}
