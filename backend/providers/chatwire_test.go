package providers

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestChatBodyReplay (issue 41): the pivot's reasoning_content and
// thinking_blocks on an assistant message, as each Replay sends them; a body
// without them passes as it is, allocating nothing.
func TestChatBodyReplay(t *testing.T) {
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":"Hello!","reasoning_content":"I greet back.","thinking_blocks":[{"type":"thinking","thinking":"I greet back.","signature":"EqQBCgIYAhIM"}]},` +
		`{"role":"user","content":"how are you?"}]}`
	tests := []struct {
		replay                            Replay
		reasoningContent, reasoning, tbls bool
	}{
		{ReplayNone, false, false, false},
		{ReplayReasoningContent, true, false, false},
		{ReplayReasoning, false, true, false},
		{ReplayAll, true, false, true},
	}
	for _, tt := range tests {
		p := Provider{ID: "x", Format: FormatOpenAI, ReasoningReplay: tt.replay}
		out, err := p.ChatBody([]byte(body))
		if err != nil || !gjson.ValidBytes(out) {
			t.Fatalf("%q: %v %s", tt.replay, err, out)
		}
		msg := gjson.GetBytes(out, "messages.1")
		if msg.Get("reasoning_content").Exists() != tt.reasoningContent || msg.Get("thinking_blocks").Exists() != tt.tbls ||
			msg.Get("reasoning").Exists() != tt.reasoning || msg.Get("content").String() != "Hello!" {
			t.Errorf("%q: %s", tt.replay, out)
		}
		if tt.reasoning && msg.Get("reasoning").String() != "I greet back." {
			t.Errorf("%q: reasoning %s", tt.replay, msg.Get("reasoning"))
		}
		if n := len(gjson.GetBytes(out, "messages").Array()); n != 3 {
			t.Errorf("%q: %d messages", tt.replay, n)
		}
	}
	plain := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	p := Provider{ID: "x", Format: FormatOpenAI}
	if n := testing.AllocsPerRun(20, func() { _, _ = p.ChatBody(plain) }); n != 0 {
		t.Errorf("a body without pivot members: %v allocations", n)
	}
}
