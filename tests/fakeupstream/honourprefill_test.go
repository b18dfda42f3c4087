package fakeupstream

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestHonourPrefillContinuesAnyPrefill: ModeHonourPrefill continues a
// trailing assistant message that is not the start of the key's answer
// (which the fake otherwise refuses as a wrong delivered text) with
// PrefillContinuation, on both wires; without it the same prefill is a 400.
func TestHonourPrefillContinuesAnyPrefill(t *testing.T) {
	bodies := map[Format]string{
		FormatOpenAI:    `{"model":"m","max_tokens":1,"continue_final_message":true,"add_generation_prompt":false,"messages":[{"role":"user","content":"say X"},{"role":"assistant","content":"MARKER"}]}`,
		FormatAnthropic: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"say X"},{"role":"assistant","content":"MARKER"}]}`,
	}
	text := map[Format]string{FormatOpenAI: "choices.0.message.content", FormatAnthropic: "content.0.text"}
	for format, raw := range bodies {
		t.Run(format.String(), func(t *testing.T) {
			f := newFixture(t)
			if resp, body := f.do(t, call{format: format, key: "k", raw: raw}); resp.StatusCode != 400 {
				t.Fatalf("without the mode: %d %s", resp.StatusCode, body)
			}
			f.u.SetFault("k", Fault{Mode: ModeHonourPrefill})
			resp, body := f.do(t, call{format: format, key: "k", raw: raw})
			if got := gjson.GetBytes(body, text[format]).String(); resp.StatusCode != 200 || got != PrefillContinuation {
				t.Fatalf("honoured: %d %q\n%s", resp.StatusCode, got, body)
			}
		})
	}
}
