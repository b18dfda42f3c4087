package gateway

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
	tanthropic "omniroute/backend/translate/anthropic"
	tgemini "omniroute/backend/translate/gemini"
	"omniroute/backend/translate/responses"
	"omniroute/backend/translate/sse"
)

// Vendor-reference streams (issue 41, M1): what each upstream sends per its
// public API reference — Anthropic's "Streaming Messages" basic example,
// Gemini's streamGenerateContent?alt=sse, OpenAI's Responses streaming events
// (the Codex wire). Never the gateway's own output.
const (
	vendorAnthropicStream = "event: message_start\n" +
		`data: {"type": "message_start", "message": {"id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}` + "\n\n" +
		"event: content_block_start\n" +
		`data: {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}` + "\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: content_block_delta\n" +
		`data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}}` + "\n\n" +
		"event: content_block_stop\n" +
		`data: {"type": "content_block_stop", "index": 0}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence":null}, "usage": {"output_tokens": 15}}` + "\n\n" +
		"event: message_stop\n" +
		`data: {"type": "message_stop"}` + "\n\n"

	vendorGeminiStream = `data: {"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 1,"totalTokenCount": 9},"modelVersion": "gemini-2.0-flash"}` + "\r\n\r\n" +
		`data: {"candidates": [{"content": {"parts": [{"text": " there!"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 3,"totalTokenCount": 11},"modelVersion": "gemini-2.0-flash"}` + "\r\n\r\n"

	vendorResponsesStream = "event: response.created\n" +
		`data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654","object":"response","created_at":1741290958,"status":"in_progress","model":"gpt-4.1-2025-04-14","output":[],"usage":null}}` + "\n\n" +
		"event: response.output_item.added\n" +
		`data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654","type":"message","status":"in_progress","role":"assistant","content":[]}}` + "\n\n" +
		"event: response.output_text.delta\n" +
		`data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654","output_index":0,"content_index":0,"delta":"Hi there!"}` + "\n\n" +
		"event: response.completed\n" +
		`data: {"type":"response.completed","sequence_number":3,"response":{"id":"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654","object":"response","created_at":1741290958,"status":"completed","model":"gpt-4.1-2025-04-14","output":[{"id":"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi there!","annotations":[]}]}],"usage":{"input_tokens":37,"input_tokens_details":{"cached_tokens":0},"output_tokens":11,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":48}}}` + "\n\n"
)

// runVendorStream feeds a vendor's stream through tr and returns the client
// events' data.
func runVendorStream(t *testing.T, tr translate.StreamTranslator, stream string) []string {
	t.Helper()
	var out []byte
	var p sse.Parser
	var err error
	if perr := p.Feed([]byte(stream), func(ev sse.Event) bool {
		out, err = tr.Event(out, ev)
		return err == nil
	}); perr != nil || err != nil {
		t.Fatalf("feed: %v %v", perr, err)
	}
	if !tr.Complete() {
		t.Fatal("the vendor's stream is not complete")
	}
	out = tr.End(out)
	var datas []string
	var q sse.Parser
	_ = q.Feed(out, func(ev sse.Event) bool { datas = append(datas, string(ev.Data)); return true })
	return datas
}

// TestTranslatedStreamHidesUnaskedUsage (M1): a Chat client that did not ask
// for usage gets no usage chunk and no "usage" member from an Anthropic,
// Gemini or Codex (Responses) upstream — as from an OpenAI-compatible one —
// while the usage is still counted for the log and the bill.
func TestTranslatedStreamHidesUnaskedUsage(t *testing.T) {
	cases := []struct {
		name   string
		toChat func() translate.StreamTranslator
		stream string
	}{
		{"anthropic", func() translate.StreamTranslator { return tanthropic.NewStreamToChat("claude-sonnet-4-5") }, vendorAnthropicStream},
		{"gemini", func() translate.StreamTranslator { return tgemini.NewStreamToChat("gemini-2.0-flash") }, vendorGeminiStream},
		{"codex", func() translate.StreamTranslator { return responses.NewStreamToChat("gpt-5-codex") }, vendorResponsesStream},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The translation alone writes the usage chunk (for a client that asked).
			asked := runVendorStream(t, c.toChat(), c.stream)
			if !strings.Contains(strings.Join(asked, "\n"), `"usage"`) {
				t.Fatalf("the translation wrote no usage: %q", asked)
			}
			tr := hidingUsage(c.toChat())
			got := runVendorStream(t, tr, c.stream)
			if len(got) == 0 || got[len(got)-1] != "[DONE]" {
				t.Fatalf("stream does not end with [DONE]: %q", got)
			}
			text := ""
			for _, d := range got[:len(got)-1] {
				r := gjson.Parse(d)
				if r.Get("usage").Exists() {
					t.Errorf("client got usage it did not ask for: %s", d)
				}
				if !r.Get("choices").IsArray() || len(r.Get("choices").Array()) == 0 {
					t.Errorf("chunk without a choice: %s", d)
				}
				text += r.Get("choices.0.delta.content").String()
			}
			if !strings.Contains(text, "!") {
				t.Errorf("text lost: %q", text)
			}
			if u := tr.Usage(); u.InputTokens == 0 || u.OutputTokens == 0 {
				t.Errorf("usage not counted for the log: %+v", u)
			}
		})
	}
}
