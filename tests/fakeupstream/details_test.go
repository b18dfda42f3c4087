package fakeupstream

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestReasoningMembersModes: ModeReasoningDetails answers with OpenRouter's
// reasoning_details (JSON: the whole array on the message; stream: the text
// in pieces, then the signature, then the encrypted entry) and
// ModeReasoningOpaque with Copilot's reasoning_text and reasoning_opaque;
// each refuses a tool-calling turn given back without its members and
// answers one given back with them.
func TestReasoningMembersModes(t *testing.T) {
	f := newFixture(t)
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`
	ask := `{"model":"m","stream":%s,` + tools + `,"messages":[{"role":"user","content":"weather?"}]}`
	call1 := func(key string, stream bool) []byte {
		s := "false"
		if stream {
			s = "true"
		}
		resp, body := f.do(t, call{format: FormatOpenAI, key: key, raw: strings.Replace(ask, "%s", s, 1)})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", key, resp.StatusCode, body)
		}
		return body
	}
	f.u.SetFault("k-details", Fault{Mode: ModeReasoningDetails})
	f.u.SetFault("k-opaque", Fault{Mode: ModeReasoningOpaque})

	msg := gjson.GetBytes(call1("k-details", false), "choices.0.message")
	if msg.Get("reasoning_details.0.signature").String() != DetailsSignature || msg.Get("reasoning_details.1.data").String() != DetailsEncrypted ||
		msg.Get("reasoning_details.0.format").String() != DetailsFormat || msg.Get("tool_calls.0.id").String() != ToolCallIDOpenAI {
		t.Fatalf("details answer: %s", msg.Raw)
	}
	frames, err := readFrames(strings.NewReader(string(call1("k-details", true))))
	if err != nil {
		t.Fatal(err)
	}
	var text, sig, data string
	for _, fr := range frames {
		gjson.Get(fr.data, "choices.0.delta.reasoning_details").ForEach(func(_, e gjson.Result) bool {
			text += e.Get("text").String()
			sig += e.Get("signature").String()
			data += e.Get("data").String()
			return true
		})
	}
	if text != ReasoningText || sig != DetailsSignature || data != DetailsEncrypted {
		t.Fatalf("details stream: %q %q %q", text, sig, data)
	}

	msg = gjson.GetBytes(call1("k-opaque", false), "choices.0.message")
	if msg.Get("reasoning_text").String() != ReasoningText || msg.Get("reasoning_opaque").String() != CopilotOpaque {
		t.Fatalf("opaque answer: %s", msg.Raw)
	}
	frames, err = readFrames(strings.NewReader(string(call1("k-opaque", true))))
	if err != nil {
		t.Fatal(err)
	}
	text, sig = "", ""
	for _, fr := range frames {
		text += gjson.Get(fr.data, "choices.0.delta.reasoning_text").String()
		sig += gjson.Get(fr.data, "choices.0.delta.reasoning_opaque").String()
	}
	if text != ReasoningText || sig != CopilotOpaque {
		t.Fatalf("opaque stream: %q %q", text, sig)
	}

	turn := func(members string) string {
		return `{"model":"m",` + tools + `,"messages":[{"role":"user","content":"weather?"},` +
			`{"role":"assistant","content":null` + members + `,"tool_calls":[{"id":"call_fake_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"call_fake_1","content":"sunny"}]}`
	}
	details := `,"reasoning_details":[{"type":"reasoning.text","text":"` + ReasoningText + `","signature":"` + DetailsSignature + `","format":"` + DetailsFormat + `"},` +
		`{"type":"reasoning.encrypted","data":"` + DetailsEncrypted + `","format":"` + DetailsFormat + `"}]`
	opaque := `,"reasoning_text":"` + ReasoningText + `","reasoning_opaque":"` + CopilotOpaque + `"`
	for _, tt := range []struct {
		key, members string
		status       int
	}{
		{"k-details", "", 400},
		{"k-details", strings.Replace(details, DetailsSignature, "tampered", 1), 400},
		{"k-details", details, 200},
		{"k-opaque", "", 400},
		{"k-opaque", opaque, 200},
	} {
		resp, body := f.do(t, call{format: FormatOpenAI, key: tt.key, raw: turn(tt.members)})
		if resp.StatusCode != tt.status || tt.status == 200 && gjson.GetBytes(body, "choices.0.message.content").String() != ToolResultText("sunny") {
			t.Errorf("%s %q: %d %s", tt.key, tt.members, resp.StatusCode, body)
		}
	}
}
