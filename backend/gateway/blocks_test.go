package gateway

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// blockEvent is one Messages event a client was sent: name "" sends it
// without an event line (its type names it).
type blockEvent struct{ name, data string }

var (
	thinkingStart = blockEvent{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`}
	textStart0    = blockEvent{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}
	textStart1    = blockEvent{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`}
	thinking1     = blockEvent{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}`}
	textDelta     = blockEvent{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`}
	stop          = blockEvent{"content_block_stop", `{"type":"content_block_stop","index":0}`}
)

// TestClientBlocksContinuation: where a continuation goes, from the blocks a
// client was sent, whether they were relayed as they came (with or without
// event lines) or written by a translator.
func TestClientBlocksContinuation(t *testing.T) {
	cases := []struct {
		name          string
		events        []blockEvent
		offset        int
		keepStart, ok bool
	}{
		{"no block", nil, 0, false, false},
		{"open text", []blockEvent{textStart0, textDelta}, 0, false, true},
		{"closed text", []blockEvent{textStart0, textDelta, stop}, 1, true, true},
		{"thinking, open text", []blockEvent{thinkingStart, stop, textStart1, textDelta}, 1, false, true},
		{"thinking, closed text", []blockEvent{thinkingStart, stop, textStart1, textDelta, stop}, 2, true, true},
		{"text, then thinking", []blockEvent{textStart0, textDelta, stop, thinking1}, 0, false, false},
		{"open thinking only", []blockEvent{thinkingStart}, 0, false, false},
		{"no event lines", []blockEvent{{"", thinkingStart.data}, {"", stop.data}, {"", textStart1.data}, {"", textDelta.data}}, 1, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var relayed, translated clientBlocks
			var wire []byte
			for _, ev := range c.events {
				relayed.noteEvent(ev.name, []byte(ev.data))
				name := ev.name
				if name == "" {
					name = gjson.Get(ev.data, "type").String()
				}
				wire = sse.Append(wire, name, []byte(ev.data))
			}
			// A translator's bytes arrive in pieces of any size: one event at a time here.
			for _, piece := range strings.SplitAfter(string(wire), "\n\n") {
				translated.noteWire([]byte(piece))
			}
			for what, b := range map[string]*clientBlocks{"relayed": &relayed, "translated": &translated} {
				if offset, keepStart, ok := b.continuation(); offset != c.offset || keepStart != c.keepStart || ok != c.ok {
					t.Errorf("%s: continuation() = %d, %v, %v; want %d, %v, %v", what, offset, keepStart, ok, c.offset, c.keepStart, c.ok)
				}
			}
		})
	}
}

// TestOpeningFilterAfterAClosedTextBlock: after a closed text block the
// continuation's text block is a new one, its start kept, numbered after the
// client's blocks.
func TestOpeningFilterAfterAClosedTextBlock(t *testing.T) {
	var in []byte
	in = sse.Append(in, "message_start", []byte(`{"type":"message_start","message":{"id":"x"}}`))
	in = sse.Append(in, "content_block_start", []byte(textStart0.data))
	in = sse.Append(in, "ping", []byte(`{"type":"ping"}`))
	in = sse.Append(in, "content_block_delta", []byte(textDelta.data))
	in = sse.Append(in, "content_block_stop", []byte(stop.data))
	out := string(openingFilter(translate.Messages, false, &clientBlocks{started: 2, lastText: true})(in))
	if strings.Contains(out, "message_start") || strings.Contains(out, "ping") || strings.Count(out, "event: content_block_start") != 1 ||
		strings.Count(out, `"index":2`) != 3 || strings.Contains(out, `"index":0`) {
		t.Fatalf("filter output:\n%s", out)
	}
}

// TestWithoutThinkingEdits: a prefill request keeps its other context edits
// and loses those that clear thinking (or context_management, when nothing
// is left in it).
func TestWithoutThinkingEdits(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`, `{"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`},
		{`{"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"},{"type":"clear_tool_uses_20250919"}]}}`,
			`{"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`},
		{`{"context_management":{"edits":[{"type":"clear_thinking_20251015"}]},"b":2}`, `{"b":2}`},
		{`{"context_management":{"edits":[{"type":"clear_thinking_20251015"}],"other":true}}`, `{"context_management":{"other":true}}`},
	}
	for _, c := range cases {
		if got, err := withoutThinkingEdits([]byte(c.in)); err != nil || !jsonEqual(string(got), c.want) {
			t.Errorf("withoutThinkingEdits(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// jsonEqual compares two JSON texts without their white space (members in
// the same order).
func jsonEqual(a, b string) bool {
	return gjson.Parse(a).Get("@ugly").Raw == gjson.Parse(b).Get("@ugly").Raw
}
