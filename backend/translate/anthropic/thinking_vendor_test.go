package anthropic

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Vendor-reference answers (issue 41, M5): Anthropic's extended-thinking
// answer as its documentation shows it — a thinking block with its
// signature, a redacted_thinking block with its encrypted data, the text —
// whole and streamed (signature_delta ends the thinking block; a
// redacted_thinking block starts with its data and has no deltas).
const (
	vendorSig      = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."
	vendorRedacted = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP..."

	vendorThinkingAnswer = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
		`{"type":"thinking","thinking":"Let me analyze this step by step...","signature":"` + vendorSig + `"},` +
		`{"type":"redacted_thinking","data":"` + vendorRedacted + `"},` +
		`{"type":"text","text":"Based on my analysis..."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":6}}`
)

var vendorThinkingStream = []string{
	"message_start\t" + `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`,
	"content_block_start\t" + `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	"content_block_delta\t" + `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me analyze this step by step..."}}`,
	"content_block_delta\t" + `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"` + vendorSig + `"}}`,
	"content_block_stop\t" + `{"type":"content_block_stop","index":0}`,
	"content_block_start\t" + `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"` + vendorRedacted + `"}}`,
	"content_block_stop\t" + `{"type":"content_block_stop","index":1}`,
	"content_block_start\t" + `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
	"content_block_delta\t" + `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Based on my analysis..."}}`,
	"content_block_stop\t" + `{"type":"content_block_stop","index":2}`,
	"message_delta\t" + `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}}`,
	"message_stop\t" + `{"type":"message_stop"}`,
}

const vendorBlocks = `[{"type":"thinking","thinking":"Let me analyze this step by step...","signature":"` + vendorSig + `"},` +
	`{"type":"redacted_thinking","data":"` + vendorRedacted + `"},{"type":"text","text":"Based on my analysis..."}]`

// TestSignedThinkingThroughChat (M5): Anthropic's signed and redacted
// thinking cross Chat as thinking_blocks and come out to a Messages client
// unchanged, whole and streamed.
func TestSignedThinkingThroughChat(t *testing.T) {
	t.Run("non-stream", func(t *testing.T) {
		chat, err := ResponseToChat([]byte(vendorThinkingAnswer))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(gjson.GetBytes(chat, "choices.0.message.thinking_blocks").Array()); n != 2 {
			t.Fatalf("thinking_blocks: %s", chat)
		}
		out, err := ResponseFromChat(chat)
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(out, "content").Raw; got != vendorBlocks {
			t.Fatalf("content\n got %s\nwant %s", got, vendorBlocks)
		}
	})
	t.Run("stream", func(t *testing.T) {
		chat, err := runStream(t, NewStreamToChat("claude-sonnet-4-5"), sseInput(vendorThinkingStream...))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(chat), `"signature":"`+vendorSig+`"`) || !strings.Contains(string(chat), `"data":"`+vendorRedacted+`"`) {
			t.Fatalf("chat stream: %s", chat)
		}
		var lines []string
		for _, e := range parseOut(t, chat) {
			lines = append(lines, e.Data)
		}
		out, err := runStream(t, NewStreamFromChat("claude-sonnet-4-5"), sseInput(lines...))
		if err != nil {
			t.Fatal(err)
		}
		var blocks []map[string]string
		for _, e := range parseOut(t, out) {
			d := gjson.Parse(e.Data)
			switch e.Event {
			case "content_block_start":
				blocks = append(blocks, map[string]string{"type": d.Get("content_block.type").String(), "data": d.Get("content_block.data").String()})
			case "content_block_delta":
				b := blocks[len(blocks)-1]
				b["thinking"] += d.Get("delta.thinking").String()
				b["signature"] += d.Get("delta.signature").String()
				b["text"] += d.Get("delta.text").String()
			}
		}
		if len(blocks) != 3 || blocks[0]["signature"] != vendorSig || blocks[0]["thinking"] != "Let me analyze this step by step..." ||
			blocks[1]["type"] != "redacted_thinking" || blocks[1]["data"] != vendorRedacted || blocks[2]["text"] != "Based on my analysis..." {
			t.Fatalf("blocks %v\n%s", blocks, out)
		}
	})
}
