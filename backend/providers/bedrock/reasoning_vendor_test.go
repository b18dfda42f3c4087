package bedrock

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/anthropic"
	"omniroute/backend/translate/sse"
)

// Vendor-reference answers (issue 41, M5), as the Bedrock Runtime API
// reference shapes them: a Converse output message whose content holds a
// ReasoningContentBlock — the union of reasoningText {text, signature} and
// redactedContent (base64 bytes) — before the text; and the ConverseStream
// contentBlockDelta events whose delta.reasoningContent
// (ReasoningContentBlockDelta) carries one of text, signature or
// redactedContent.
const (
	vendorReasoningText      = "The user asks for the capital of France. That is Paris."
	vendorReasoningSignature = "EqgBCkgIARABGAIiQE0ycGPdLtHNi0wnHAXW6AYMuCkMMuOSYmr0LDSaWfJYJHWHyXVdUGahcaFWjcUcXgRk5ROkN8WYmzyIb2mnOUYSDKTGHcT1rHeKn8Pb0RoMnRHCsv6EmnXO1NU5IjB/GCshBqG5d+UAsDhXi5qZAn3aUW0SnBTKVTj/sygkNbqYPRJM9ZE8hmFqSC5UA1UqEGcBqw=="
	vendorRedacted           = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfUXG7sxRZtIvu8OFvkGtoP1zHlCVj7h0vJk/gz2lVtKhIoBUCC+e7oU3Xo0hT3cAZ0PsR3GgD4MVfEMy4zfbyzj2cr0bfQbXM="

	vendorConverseReasoning = `{"output":{"message":{"role":"assistant","content":[` +
		`{"reasoningContent":{"reasoningText":{"text":"` + vendorReasoningText + `","signature":"` + vendorReasoningSignature + `"}}},` +
		`{"reasoningContent":{"redactedContent":"` + vendorRedacted + `"}},` +
		`{"text":"The capital of France is Paris."}]}},` +
		`"stopReason":"end_turn","usage":{"inputTokens":42,"outputTokens":87,"totalTokens":129},"metrics":{"latencyMs":2313}}`
)

// vendorConverseReasoningStream is the same answer as ConverseStream sends it.
func vendorConverseReasoningStream() []byte {
	var b bytes.Buffer
	for _, ev := range [][2]string{
		{"messageStart", `{"role":"assistant"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"The user asks for the capital of France."}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":" That is Paris."}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"` + vendorReasoningSignature + `"}}}`},
		{"contentBlockStop", `{"contentBlockIndex":0}`},
		{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"` + vendorRedacted + `"}}}`},
		{"contentBlockStop", `{"contentBlockIndex":1}`},
		{"contentBlockDelta", `{"contentBlockIndex":2,"delta":{"text":"The capital of France is Paris."}}`},
		{"contentBlockStop", `{"contentBlockIndex":2}`},
		{"messageStop", `{"stopReason":"end_turn"}`},
		{"metadata", `{"usage":{"inputTokens":42,"outputTokens":87,"totalTokens":129},"metrics":{"latencyMs":2313}}`},
	} {
		b.Write(event(ev[0], ev[1]))
	}
	return b.Bytes()
}

// wantBlocks are the Anthropic blocks a Messages client must get for the answer.
const wantBlocks = `[{"type":"thinking","thinking":"` + vendorReasoningText + `","signature":"` + vendorReasoningSignature + `"},` +
	`{"type":"redacted_thinking","data":"` + vendorRedacted + `"},{"type":"text","text":"The capital of France is Paris."}]`

// TestConverseReasoningKept (M5): a Converse answer's reasoning signature
// and redacted reasoning reach a Chat client as reasoning_content plus
// thinking_blocks, and a Messages client as a signed thinking block and a
// redacted_thinking block with its data.
func TestConverseReasoningKept(t *testing.T) {
	chat, err := FromConverse([]byte(vendorConverseReasoning), "chatcmpl-1", "m", 1)
	if err != nil {
		t.Fatal(err)
	}
	msg := gjson.GetBytes(chat, "choices.0.message")
	if msg.Get("reasoning_content").String() != vendorReasoningText || msg.Get("content").String() != "The capital of France is Paris." {
		t.Fatalf("chat: %s", chat)
	}
	if got, want := msg.Get("thinking_blocks").Raw, `[{"type":"thinking","thinking":"`+vendorReasoningText+`","signature":"`+vendorReasoningSignature+`"},{"type":"redacted_thinking","data":"`+vendorRedacted+`"}]`; got != want {
		t.Fatalf("thinking_blocks\n got %s\nwant %s", got, want)
	}
	msgs, err := anthropic.ResponseFromChat(chat)
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(msgs, "content").Raw; got != wantBlocks {
		t.Fatalf("messages content\n got %s\nwant %s", got, wantBlocks)
	}
}

// TestConverseStreamReasoningKept (M5): the streamed signature and redacted
// reasoning reach a Chat client as thinking_blocks deltas, and a Messages
// client as a signature_delta ending the thinking block and a
// redacted_thinking block carrying its data.
func TestConverseStreamReasoningKept(t *testing.T) {
	body, err := io.ReadAll(NewSSEReader(io.NopCloser(bytes.NewReader(vendorConverseReasoningStream())), "chatcmpl-1", "m", 1))
	if err != nil {
		t.Fatal(err)
	}
	var reasoning, sig, redacted string
	var events []sse.Event
	var p sse.Parser
	_ = p.Feed(body, func(ev sse.Event) bool {
		d := gjson.GetBytes(ev.Data, "choices.0.delta")
		reasoning += d.Get("reasoning_content").String()
		sig += d.Get(`thinking_blocks.#(type=="thinking").signature`).String()
		redacted += d.Get(`thinking_blocks.#(type=="redacted_thinking").data`).String()
		events = append(events, sse.Event{Event: ev.Event, Data: bytes.Clone(ev.Data)})
		return true
	})
	if reasoning != vendorReasoningText || sig != vendorReasoningSignature || redacted != vendorRedacted {
		t.Fatalf("chat stream: reasoning %q signature %q redacted %q\n%s", reasoning, sig, redacted, body)
	}
	tr := anthropic.NewStreamFromChat("m")
	var out []byte
	for _, ev := range events {
		if out, err = tr.Event(out, ev); err != nil {
			t.Fatal(err)
		}
	}
	out = tr.End(out)
	// Rebuild the content blocks a Messages SDK accumulates from the events.
	var blocks []map[string]string
	var q sse.Parser
	_ = q.Feed(out, func(ev sse.Event) bool {
		d := gjson.ParseBytes(ev.Data)
		switch ev.Event {
		case "content_block_start":
			cb := d.Get("content_block")
			blocks = append(blocks, map[string]string{"type": cb.Get("type").String(), "data": cb.Get("data").String()})
		case "content_block_delta":
			b := blocks[len(blocks)-1]
			b["thinking"] += d.Get("delta.thinking").String()
			b["signature"] += d.Get("delta.signature").String()
			b["text"] += d.Get("delta.text").String()
		}
		return true
	})
	if len(blocks) != 3 || blocks[0]["type"] != "thinking" || blocks[0]["thinking"] != vendorReasoningText || blocks[0]["signature"] != vendorReasoningSignature ||
		blocks[1]["type"] != "redacted_thinking" || blocks[1]["data"] != vendorRedacted ||
		blocks[2]["type"] != "text" || blocks[2]["text"] != "The capital of France is Paris." {
		t.Fatalf("messages blocks %v\n%s", blocks, out)
	}
}

// TestConverseReasoningReplayed (M5): a Messages client replaying the signed
// thinking and redacted_thinking blocks of the last turn sends them back to
// Converse as reasoningContent blocks, unmodified and first in the
// assistant message, as the reference asks.
func TestConverseReasoningReplayed(t *testing.T) {
	req := `{"model":"m","max_tokens":1024,"messages":[{"role":"user","content":"What is the capital of France?"},` +
		`{"role":"assistant","content":` + wantBlocks + `},{"role":"user","content":"And of Spain?"}]}`
	chat, err := anthropic.RequestToChat([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	body, err := ToConverse(chat)
	if err != nil {
		t.Fatal(err)
	}
	got := gjson.GetBytes(body, "messages.1")
	want := `{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"signature":"` + vendorReasoningSignature + `","text":"` + vendorReasoningText + `"}}},` +
		`{"reasoningContent":{"redactedContent":"` + vendorRedacted + `"}},{"text":"The capital of France is Paris."}]}`
	if got.Raw != want {
		t.Fatalf("assistant turn\n got %s\nwant %s", got.Raw, want)
	}
	// Unsigned reasoning (nothing to verify it by) is not sent back.
	plain := strings.Replace(req, `,"signature":"`+vendorReasoningSignature+`"`, "", 1)
	if chat, err = anthropic.RequestToChat([]byte(plain)); err != nil {
		t.Fatal(err)
	}
	if body, err = ToConverse(chat); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(body), "reasoningText"); n != 0 {
		t.Fatalf("unsigned reasoning replayed: %s", body)
	}
}
