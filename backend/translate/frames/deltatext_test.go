package frames_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/resilience/watchdog"
	"omniroute/backend/translate"
	"omniroute/backend/translate/frames"
	"omniroute/backend/translate/sse"
)

// gjsonDeltaText is the reference DeltaText replaced: the same text read by
// a general JSON library.
func gjsonDeltaText(f translate.Format, event string, data []byte) string {
	if f == translate.Messages {
		if event == "content_block_delta" || gjson.GetBytes(data, "type").String() == "content_block_delta" {
			return gjson.GetBytes(data, "delta.text").String()
		}
		return ""
	}
	if f == translate.Responses {
		typ := gjson.GetBytes(data, "type")
		name := typ.Str // a type that is not a string names nothing: the event's name counts
		if name == "" {
			name = event
		}
		if name == "response.output_text.delta" {
			return gjson.GetBytes(data, "delta").String()
		}
		return ""
	}
	if f == translate.Gemini {
		var b strings.Builder
		gjson.GetBytes(data, "candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
			if p.Get("thought").Raw != "true" && p.Get("functionCall").Type != gjson.JSON && p.Get("text").Type == gjson.String {
				b.WriteString(p.Get("text").Str)
			}
			return true
		})
		return b.String()
	}
	return gjson.GetBytes(data, "choices.0.delta.content").String()
}

var deltaTextCases = []struct {
	name  string
	f     translate.Format
	event string
	data  string
	want  string
}{
	{"chat content", translate.Chat, "", `{"choices":[{"index":0,"delta":{"content":"word "}}]}`, "word "},
	{"chat escapes", translate.Chat, "", `{"choices":[{"delta":{"content":"a\nb \"q\" \u00e9\ud83d\ude00"}}]}`, "a\nb \"q\" é😀"},
	{"chat second choice ignored", translate.Chat, "", `{"choices":[{"delta":{}},{"delta":{"content":"x"}}]}`, ""},
	{"chat role only", translate.Chat, "", `{"choices":[{"delta":{"role":"assistant"}}]}`, ""},
	{"chat null content", translate.Chat, "", `{"choices":[{"delta":{"content":null}}]}`, ""},
	{"chat no choices", translate.Chat, "", `{"usage":{"prompt_tokens":1}}`, ""},
	{"chat choices not an array", translate.Chat, "", `{"choices":{"delta":{"content":"x"}}}`, ""},
	{"chat content after nested values", translate.Chat, "", `{"id":"c","x":[1,{"y":[2]}],"choices":[{"logprobs":{"a":[1]},"delta":{"tool_calls":[],"content":"ok"}}]}`, "ok"},
	{"chat white space", translate.Chat, "", "{ \"choices\" : [ { \"delta\" : { \"content\" : \"sp\" } } ] }", "sp"},
	{"messages delta by event", translate.Messages, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, "hi"},
	{"messages delta by type", translate.Messages, "", `{"type":"content_block_delta","delta":{"text":"a\tb"}}`, "a\tb"},
	{"messages other event", translate.Messages, "message_delta", `{"type":"message_delta","delta":{"text":"no"}}`, ""},
	{"messages tool input", translate.Messages, "content_block_delta", `{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{}"}}`, ""},
	{"responses text delta", translate.Responses, "response.output_text.delta", `{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"Hi \"there\"\n"}`, "Hi \"there\"\n"},
	{"responses delta by event name", translate.Responses, "response.output_text.delta", `{"delta":"x"}`, "x"},
	{"responses type wins over event", translate.Responses, "response.output_text.delta", `{"type":"response.refusal.delta","delta":"no"}`, ""},
	{"responses refusal", translate.Responses, "", `{"type":"response.refusal.delta","delta":"no"}`, ""},
	{"responses tool arguments", translate.Responses, "", `{"type":"response.function_call_arguments.delta","delta":"{\"a\":1"}`, ""},
	{"responses reasoning", translate.Responses, "", `{"type":"response.reasoning_summary_text.delta","delta":"plan"}`, ""},
	{"responses text done", translate.Responses, "", `{"type":"response.output_text.done","text":"all"}`, ""},
	{"responses first type and delta", translate.Responses, "", `{"type":"response.output_text.delta","delta":"a","type":"x","delta":"b"}`, "a"},
	{"responses escaped key", translate.Responses, "", `{"ty\u0070e":"response.output_text.delta","delta":"k"}`, "k"},
	{"gemini text", translate.Gemini, "", `{"candidates":[{"content":{"parts":[{"text":"a\nb \u00e9"}],"role":"model"},"index":0}]}`, "a\nb é"},
	{"gemini parts joined, thoughts skipped", translate.Gemini, "", `{"candidates":[{"content":{"parts":[{"text":"x","thought":true},{"text":"a"},{"text":"b"}]}}]}`, "ab"},
	{"gemini second candidate ignored", translate.Gemini, "", `{"candidates":[{"content":{"parts":[]}},{"content":{"parts":[{"text":"no"}]}}]}`, ""},
	{"gemini function call", translate.Gemini, "", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}]}`, ""},
}

func TestDeltaText(t *testing.T) {
	for _, c := range deltaTextCases {
		t.Run(c.name, func(t *testing.T) {
			got := frames.DeltaText(c.f, c.event, []byte(c.data))
			if got != c.want {
				t.Fatalf("DeltaText = %q, want %q", got, c.want)
			}
			if ref := gjsonDeltaText(c.f, c.event, []byte(c.data)); ref != c.want {
				t.Fatalf("the gjson reference reads %q, the case wants %q", ref, c.want)
			}
		})
	}
}

// FuzzDeltaText: on valid JSON whose text is a string where the formats put
// it (choices an array, for Chat), the scanner reads the text gjson reads;
// elsewhere it reads nothing; on any bytes it does not panic.
func FuzzDeltaText(f *testing.F) {
	for _, c := range deltaTextCases {
		f.Add(c.data, c.event, c.f == translate.Messages)
	}
	f.Fuzz(func(t *testing.T, data, event string, messages bool) {
		// The third format rides on the event name: Responses is read for
		// an event named as its text deltas are.
		format, at := translate.Chat, "choices.0.delta.content"
		switch {
		case messages:
			format, at = translate.Messages, "delta.text"
		case strings.HasPrefix(event, "response."):
			format, at = translate.Responses, "delta"
		}
		got := frames.DeltaText(format, event, []byte(data))
		if !gjson.Valid(data) || repeatsAName(data) {
			// An object that repeats a name has no one reading (RFC 8259 §4:
			// names SHOULD be unique; gjson takes the first that matches the
			// whole path, JSON.parse the last, the scanner the first): only
			// "no panic" holds for it.
			return
		}
		ref := gjson.Get(data, at)
		switch {
		case format == translate.Chat && !gjson.Get(data, "choices").IsArray(), ref.Type != gjson.String:
			if got != "" {
				t.Fatalf("DeltaText(%q) = %q where no text string is", data, got)
			}
		default:
			if want := gjsonDeltaText(format, event, []byte(data)); got != want {
				t.Fatalf("DeltaText(%q) = %q, gjson %q", data, got, want)
			}
		}
	})
}

// classifyTextMatches fails t unless ClassifyText returns Classify's frame
// and, for a Content frame, DeltaText's text ("" for any other kind).
func classifyTextMatches(t *testing.T, f translate.Format, ev sse.Event) {
	t.Helper()
	gotFrame, gotText := frames.ClassifyText(f, ev)
	wantFrame, wantText := frames.Classify(f, ev), ""
	if wantFrame.Kind == watchdog.Content {
		wantText = frames.DeltaText(f, ev.Event, ev.Data)
	}
	if gotFrame != wantFrame || gotText != wantText {
		t.Fatalf("ClassifyText(%v, %q, %q) = %v, %q; Classify and DeltaText: %v, %q", f, ev.Event, ev.Data, gotFrame, gotText, wantFrame, wantText)
	}
}

// TestClassifyTextIsClassifyAndDeltaText: one pass gives what the two walks
// give, on every case of both tables, the benchmark events, and events that
// repeat the members DeltaText reads only the first of.
func TestClassifyTextIsClassifyAndDeltaText(t *testing.T) {
	formats := []translate.Format{translate.Chat, translate.Messages, translate.Responses, translate.Gemini}
	var events []sse.Event
	for _, c := range cases() {
		events = append(events, sse.Event{Event: c.event, Data: []byte(c.data), Comment: c.cmt})
	}
	for _, c := range deltaTextCases {
		events = append(events, sse.Event{Event: c.event, Data: []byte(c.data)})
	}
	for _, b := range benchEvents() {
		events = append(events, b.ev)
	}
	for _, data := range []string{
		"\v{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
		"\f{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"b\"}}",
		"\u00a0{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
		" \t\r\n{\"choices\":[{\"delta\":{\"content\":\"a\"}}]} \v",
		`{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
		`{"choices":[{"delta":{"content":["x"],"content":"b"}}]}`,
		`{"choices":[{"delta":{"role":"assistant"},"delta":{"content":"b"}}]}`,
		`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}`,
		`{"choices":[],"choices":[{"delta":{"content":"b"}}]}`,
		`{"choices":{"delta":{"content":"a"}},"choices":[{"delta":{"content":"b"}}]}`,
		`{"choices":[1,{"delta":{"content":"b"}}]}`,
		`{"choices":[{"delta":"x"},{"delta":{"content":"b"}}]}`,
		`{"choices":[{"delta":{"refusal":"no"}}]}`,
		`{"choices":[{"delta":{"content":"a\u00e9\n"}}]}`,
		`{"type":"content_block_delta","delta":{"type":"text_delta","text":"a","text":"b"}}`,
		`{"type":"content_block_delta","delta":{"type":"text_delta"},"delta":{"type":"text_delta","text":"b"}}`,
		`{"type":"message_delta","type":"content_block_delta","delta":{"type":"text_delta","text":"b"}}`,
		`{"type":"content_block_delta","type":"message_delta","delta":{"type":"text_delta","text":"b"}}`,
		`{"type":"content_block_delta","content_block":{"text":"z"},"delta":{"type":"text_delta","text":"b"}}`,
		`{"type":"content_block_start","content_block":{"type":"text","text":"hello"}}`,
		`{"type":"content_block_delta","delta":{"type":"text_delta","text":"\ud83d\ude00 \"q\""}}`,
		`{"type":"response.output_text.delta","delta":"r","choices":[{"delta":{"content":"c"}}]}`,
	} {
		for _, name := range []string{"", "content_block_delta", "content_block_start", "response.output_text.delta"} {
			events = append(events, sse.Event{Event: name, Data: []byte(data)})
		}
	}
	for _, ev := range events {
		for _, f := range formats {
			classifyTextMatches(t, f, ev)
		}
	}
}

// FuzzClassifyText: ClassifyText is Classify and DeltaText on any input.
func FuzzClassifyText(f *testing.F) {
	for _, c := range cases() {
		f.Add(uint8(0), c.event, []byte(c.data))
	}
	formats := []translate.Format{translate.Chat, translate.Messages, translate.Responses, translate.Gemini}
	for _, c := range deltaTextCases {
		f.Add(uint8(slices.Index(formats, c.f)), c.event, []byte(c.data))
	}
	f.Fuzz(func(t *testing.T, format uint8, event string, data []byte) {
		classifyTextMatches(t, formats[int(format)%len(formats)], sse.Event{Event: event, Data: data})
	})
}

// BenchmarkClassifyText is what a relay that keeps its text pays per event
// (Classify then DeltaText walked each event twice).
func BenchmarkClassifyText(b *testing.B) {
	for _, bc := range benchEvents() {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = frames.ClassifyText(bc.format, bc.ev)
			}
		})
	}
}

// repeatsAName reports whether any object in the valid JSON data has a name
// twice.
func repeatsAName(data string) bool {
	var walk func(v gjson.Result) bool
	walk = func(v gjson.Result) bool {
		repeated := false
		seen := map[string]bool{}
		v.ForEach(func(k, e gjson.Result) bool {
			if v.IsObject() {
				if seen[k.Str] {
					repeated = true
					return false
				}
				seen[k.Str] = true
			}
			if (e.IsObject() || e.IsArray()) && walk(e) {
				repeated = true
				return false
			}
			return true
		})
		return repeated
	}
	return walk(gjson.Parse(data))
}
