//go:build clients

package clients

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

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

// TestStreamCutIsContinuedInEveryClient: the first connection's answers are
// cut after two text events (after the thinking block too, when thinking is
// on); the second connection takes the delivered text as a prefill and
// finishes the answer. The streaming SDKs and Claude Code — which first runs
// a scripted Bash call, then gets its answer cut — each get one complete
// answer: the continuation is a valid stream for each, Claude Code's with its
// thinking block first and the text going on in the open text block.
func TestStreamCutIsContinuedInEveryClient(t *testing.T) {
	newCutStack := func(t *testing.T, model string, afterChunks int, passFirst bool) *stack {
		s := newStack(t)
		s.addConn("anthropic-compatible", "key-an", 1, model)
		s.addConn("anthropic-compatible", "key-an2", 2, model)
		if passFirst { // the tool call goes through; the answer after it is cut
			s.up.AddFault("key-an", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 1, Times: 1})
		}
		s.up.AddFault("key-an", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: afterChunks})
		return s
	}
	for _, name := range []string{"chat-stream", "messages-stream", "responses-stream"} {
		t.Run(name, func(t *testing.T) {
			s := newCutStack(t, "kimi-k2", 2, false)
			// "Hello from key-an" cut after "Hello " goes on as the second's answer.
			if r, want := runSDK(t, s.base, s.key, "kimi-k2", name)[name], fakeupstream.Content("key-an2"); r.Error != "" || r.Text != want {
				t.Errorf("%+v, want %q", r, want)
			}
			if s.up.Hits("key-an") == 0 || s.up.Hits("key-an2") == 0 {
				t.Errorf("hits: first %d, second %d; want the cut and the continuation", s.up.Hits("key-an"), s.up.Hits("key-an2"))
			}
		})
	}
	// Codex: its answer after the tool round trip is cut and spliced into its
	// own response (one response id, one message item, the whole text in the
	// done events).
	t.Run("codex", func(t *testing.T) {
		s := newCutStack(t, "kimi-k2", 2, true)
		s.up.SetToolCalls(map[string]string{"exec_command": `{"cmd":"echo ` + toolMarker + `"}`})
		msg, code, out := runCodex(t, s, codexConfig(s.base, "kimi-k2"), "Run the marker command.", "OMNIROUTE_API_KEY="+s.key)
		if code != 0 || !strings.HasPrefix(msg, fakeupstream.ToolResultText("")) || !strings.HasSuffix(msg, toolMarker) {
			t.Errorf("codex exit %d, last message %q, want %q…%s\n%s", code, msg, fakeupstream.ToolResultText(""), toolMarker, out)
		}
		if s.up.Hits("key-an2") == 0 {
			t.Errorf("the second connection was never asked to continue")
		}
	})
	for _, c := range []struct {
		model    string
		thinking bool
	}{{"kimi-k2", false}, {"claude-sonnet-4-5", true}} {
		t.Run("claude-code/"+c.model, func(t *testing.T) {
			after := 2
			if c.thinking {
				after += fakeupstream.DefaultStreamChunks // the thinking block's deltas come first
			}
			s := newCutStack(t, c.model, after, true)
			s.up.SetToolCalls(map[string]string{"Bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})
			res, code, out := runClaude(t, s, c.model, "Run the marker command.")
			// (Claude Code adds a context reminder after the answer for Sonnet 4.5.)
			if want := fakeupstream.ToolResultText(toolMarker); code != 0 || res.IsError || !strings.HasPrefix(res.Result, want) {
				t.Errorf("claude exit %d, result %+v, want %q\n%s", code, res, want, out)
			}
			// Claude Code asks kimi-k2 for adaptive thinking (the fake then streams
			// none), Sonnet for budgeted thinking (the fake streams a thinking block).
			streamed := false
			for _, p := range s.rec.posts("/v1/messages") {
				streamed = streamed || gjson.GetBytes(p.Body, "thinking.type").String() == "enabled"
			}
			if streamed != c.thinking {
				t.Errorf("Claude Code asked for budgeted thinking: %v; the case wants %v", streamed, c.thinking)
			}
			if _, sent := s.up.LastRequest("key-an2"); len(sent) == 0 || gjson.GetBytes(sent, "thinking").Exists() {
				t.Errorf("the second connection was not asked to continue, or asked for thinking: %s", sent)
			}
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

// Connections that addFaultyNeighbours puts around an agent's own one.
const (
	keyLimited  = "key-429"  // priority 1: answers every request 429
	keyContinue = "key-cont" // the last priority: continues a cut answer
)

// addFaultyNeighbours makes an agent test's round trip meet both faults
// every agent must not notice: the agent's connection key (created by the
// caller at priority 2, provider, models) gets a first connection before it
// that answers 429 to everything, so the agent's first request is served
// after a failover; and key's answers to a tool result — the agent's final
// text — are cut after two text events, so a third connection that takes an
// assistant prefill (Anthropic-compatible natively; OpenAI-compatible
// declaring the vLLM prefill) has to continue it. The agent's printed answer
// must still be whole; checkFaultsInvisible checks both faults happened.
func (s *stack) addFaultyNeighbours(provider, key string, models ...string) {
	s.t.Helper()
	s.addConn(provider, keyLimited, 1, models...)
	var prefill map[string]any
	if provider == "openai-compatible" {
		prefill = map[string]any{"assistantPrefill": "vllm"}
	}
	s.addConnData(provider, keyContinue, 3, prefill, models...)
	s.up.SetFault(keyLimited, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429})
	s.up.SetFault(key, fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, ToolResultsOnly: true})
}

// checkFaultsInvisible asserts that addFaultyNeighbours' faults were met:
// the limited connection was asked, and the continuing one finished an answer.
func checkFaultsInvisible(t *testing.T, s *stack) {
	t.Helper()
	if s.up.Hits(keyLimited) == 0 || s.up.Hits(keyContinue) == 0 {
		t.Errorf("hits %v: want the 429 of %s and the continuation by %s", s.up.AllHits(), keyLimited, keyContinue)
	}
}
