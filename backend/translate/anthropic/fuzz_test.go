package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// requestSeeds are valid-JSON bodies of both formats, some odd on purpose.
var requestSeeds = []string{
	`{}`, `[]`, `null`, `1`, `"x"`,
	`{"messages":null,"tools":null,"system":null,"tool_choice":null}`,
	`{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}},{"type":"tool_use","name":"g"}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r"},{"type":"image","source":{"type":"url","url":"http://x"}}],"is_error":true}]}],
		"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"},"thinking":{"type":"enabled","budget_tokens":5000},"stream":true}`,
	`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"function":{"name":"g","arguments":"[1]"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"ok"},{"role":"user","content":"next"}],
		"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","parallel_tool_calls":false,"reasoning_effort":"high","max_tokens":100}`,
	`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":1}]}]}`,
	`{"messages":[{"role":"assistant","tool_calls":[{"id":null,"function":{"arguments":{"a":1}}}]}]}`,
	`{"messages":[[[[[[[[[[]]]]]]]]]]}`,
	`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","content":"x"}}]}]}`,
}

// anthropicToolIDs lists tool_use ids of assistant messages and tool_result
// ids of user messages, in order ("" for a missing tool_use id).
func anthropicToolIDs(msgs gjson.Result) (uses, results []string) {
	each(msgs, func(_ int, m gjson.Result) bool {
		role := m.Get("role").String()
		each(m.Get("content"), func(_ int, b gjson.Result) bool {
			switch t := b.Get("type").String(); {
			case t == "tool_use" && role == "assistant":
				uses = append(uses, b.Get("id").String())
			case t == "tool_result" && role == "user":
				results = append(results, b.Get("tool_use_id").String())
			}
			return true
		})
		return true
	})
	return uses, results
}

// chatToolIDs lists tool_calls ids of assistant messages and tool_call_ids of
// tool messages, in order ("" for a missing id).
func chatToolIDs(msgs gjson.Result) (calls, results []string) {
	each(msgs, func(_ int, m gjson.Result) bool {
		switch m.Get("role").String() {
		case "assistant":
			each(m.Get("tool_calls"), func(_ int, c gjson.Result) bool {
				calls = append(calls, c.Get("id").String())
				return true
			})
		case "tool":
			results = append(results, m.Get("tool_call_id").String())
		}
		return true
	})
	return calls, results
}

// sameIDs checks ids one-to-one: same count, same order, equal where the input
// had one, generated where it had none.
func sameIDs(t *testing.T, what string, in, out []string) {
	t.Helper()
	if len(in) != len(out) {
		t.Fatalf("%s: %d ids in, %d out: %q → %q", what, len(in), len(out), in, out)
	}
	for i := range in {
		if in[i] != "" && in[i] != out[i] || in[i] == "" && out[i] == "" {
			t.Fatalf("%s %d: %q became %q", what, i, in[i], out[i])
		}
	}
}

func fuzzRequest(t *testing.T, fn func([]byte) ([]byte, error), body []byte) []byte {
	t.Helper()
	out, err := fn(body)
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		return nil
	}
	if !gjson.ValidBytes(out) {
		t.Fatalf("invalid JSON output %q for %q", out, body)
	}
	return out
}

func FuzzRequestToChat(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return
		}
		out := fuzzRequest(t, RequestToChat, body)
		if out == nil {
			return
		}
		inUses, inResults := anthropicToolIDs(gjson.GetBytes(body, "messages"))
		outCalls, outResults := chatToolIDs(gjson.GetBytes(out, "messages"))
		sameIDs(t, "tool_use → tool_calls", inUses, outCalls)
		sameIDs(t, "tool_result → tool", inResults, outResults)
		_, _ = CountTokens(body)
	})
}

func FuzzRequestFromChat(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return
		}
		out := fuzzRequest(t, RequestFromChat, body)
		if out == nil {
			return
		}
		inCalls, inResults := chatToolIDs(gjson.GetBytes(body, "messages"))
		outUses, outResults := anthropicToolIDs(gjson.GetBytes(out, "messages"))
		sameIDs(t, "tool_calls → tool_use", inCalls, outUses)
		sameIDs(t, "tool → tool_result", inResults, outResults)
	})
}

var responseSeeds = []string{
	`{}`, `[]`, `{"content":null}`, `{"choices":null}`,
	`{"id":"msg_1","model":"c","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}},{"type":"tool_use","name":"g","input":"s"}],
		"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}`,
	`{"id":"c","model":"g","choices":[{"index":0,"message":{"role":"assistant","content":"x","reasoning_content":"r","tool_calls":[{"id":"call_1","function":{"name":"f","arguments":"{}"}},{"function":{"arguments":"oops"}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":20}}}`,
}

func FuzzResponseToChat(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return
		}
		out := fuzzRequest(t, ResponseToChat, body)
		if out == nil {
			return
		}
		var in []string
		each(gjson.GetBytes(body, "content"), func(_ int, b gjson.Result) bool {
			if b.Get("type").String() == "tool_use" {
				in = append(in, b.Get("id").String())
			}
			return true
		})
		outCalls, _ := chatToolIDs(gjson.Parse(`[` + gjson.GetBytes(out, "choices.0.message").Raw + `]`))
		sameIDs(t, "tool_use → tool_calls", in, outCalls)
	})
}

func FuzzResponseFromChat(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return
		}
		out := fuzzRequest(t, ResponseFromChat, body)
		if out == nil {
			return
		}
		var in []string
		each(gjson.GetBytes(body, "choices.0.message.tool_calls"), func(_ int, c gjson.Result) bool {
			in = append(in, c.Get("id").String())
			return true
		})
		outUses, _ := anthropicToolIDs(gjson.Parse(`[{"role":"assistant","content":` + gjson.GetBytes(out, "content").Raw + `}]`))
		sameIDs(t, "tool_calls → tool_use", in, outUses)
	})
}

// fuzzEvents splits blob into events, one per line: "[DONE]", ":" comments,
// "name\tdata" named events, or bare data.
func fuzzEvents(blob []byte) []sse.Event {
	var evs []sse.Event
	for _, line := range bytes.Split(blob, []byte("\n")) {
		switch {
		case len(line) > 0 && line[0] == ':':
			evs = append(evs, sse.Event{Comment: true})
		default:
			name, data, ok := bytes.Cut(line, []byte("\t"))
			if !ok {
				name, data = nil, line
			}
			evs = append(evs, sse.Event{Event: string(name), Data: data})
		}
	}
	return evs
}

// feed runs events through tr, stopping at the first error, and calls End
// when the translator reports completion.
func feed(tr translate.StreamTranslator, evs []sse.Event) ([]byte, error) {
	var out []byte
	var err error
	for _, e := range evs {
		if out, err = tr.Event(out, e); err != nil {
			return out, err
		}
	}
	if tr.Complete() {
		out = tr.End(out)
	}
	return out, nil
}

// maxGenerated bounds generated ids and arguments: split one byte per event,
// longer strings only slow the fuzzer down without exercising anything new.
const maxGenerated = 2048

// cleanText makes s a valid, bounded UTF-8 string, fallback when empty.
func cleanText(s, fallback string) string {
	if len(s) > maxGenerated {
		s = s[:maxGenerated]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if s == "" {
		return fallback
	}
	return s
}

func FuzzStreamFromChat(f *testing.F) {
	f.Add([]byte(strings.Join([]string{deltaChunk(`{"role":"assistant","content":"hi"}`), ":", finishChunk("stop"), chatUsageChunk, "[DONE]"}, "\n")), "call_1", `{"a":"b"}`, uint8(3))
	f.Add([]byte(strings.Join(cat(toolArgChunks(0, "a", "f", `{"x":1}`, 2), toolArgChunks(1, "b", "g", `{}`, 1), finishChunk("tool_calls")), "\n")), "id", "", uint8(0))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":-1,"function":{"arguments":"x"}}]}}]}`+"\n"+`{"error":null,"choices":[{"index":0,"delta":{"reasoning":"r","content":"c"},"finish_reason":"length"}]}`), "", "ü", uint8(1))
	f.Fuzz(func(t *testing.T, blob []byte, id, args string, cut uint8) {
		tr := NewStreamFromChat("m")
		out, err := feed(tr, fuzzEvents(blob))
		var ue *UpstreamStreamError
		if err != nil && !errors.As(err, &ue) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		s := summarizeAnthropic(t, parseOut(t, out))
		if s.Stopped != (err == nil && tr.Complete()) {
			t.Fatalf("message_stop %v but complete %v, err %v", s.Stopped, tr.Complete(), err)
		}

		// A generated tool call keeps its id and arguments.
		id, args = cleanText(id, "call_x"), cleanText(args, "")
		in := cat(toolArgChunks(0, id, "tool", args, int(cut)%16+1), finishChunk("tool_calls"), "[DONE]")
		out, err = feed(NewStreamFromChat("m"), sseInput(in...))
		if err != nil {
			t.Fatal(err)
		}
		tools := summarizeAnthropic(t, parseOut(t, out)).tools()
		if len(tools) != 1 || tools[0].ID != id || tools[0].Args != args {
			t.Fatalf("tool call %q %q became %+v", id, args, tools)
		}
	})
}

func FuzzStreamToChat(f *testing.F) {
	f.Add([]byte(strings.Join(cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`), antDelta(0, `{"type":"text_delta","text":"x"}`), antBlockStop(0),
		antToolBlock(1, "toolu_1", "f", `{"a":1}`, 2), antMsgDelta("tool_use", 3), antEv("message_stop", antStop)), "\n")), "toolu_9", `{"q":"ä"}`, uint8(2))
	f.Add([]byte(`{"type":"content_block_delta","index":99,"delta":{"type":"input_json_delta","partial_json":"x"}}`+"\n"+`{"type":"message_stop"}`), "", "", uint8(0))
	f.Add([]byte("error\tnot json\n"+`{"type":"content_block_start","index":-1,"content_block":{"type":"tool_use","input":{"a":1}}}`), "x", "{", uint8(7))
	f.Fuzz(func(t *testing.T, blob []byte, id, args string, cut uint8) {
		tr := NewStreamToChat("m")
		out, err := feed(tr, fuzzEvents(blob))
		var ue *UpstreamStreamError
		if err != nil && !errors.As(err, &ue) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		s := summarizeChat(t, parseOut(t, out))
		if s.Done != (err == nil && tr.Complete()) {
			t.Fatalf("[DONE] %v but complete %v, err %v", s.Done, tr.Complete(), err)
		}

		id, args = cleanText(id, "toolu_x"), cleanText(args, "")
		in := cat(antEv("message_start", antStart), antToolBlock(0, id, "tool", args, int(cut)%16+1), antMsgDelta("tool_use", 1), antEv("message_stop", antStop))
		out, err = feed(NewStreamToChat("m"), sseInput(in...))
		if err != nil {
			t.Fatal(err)
		}
		tools := summarizeChat(t, parseOut(t, out)).Tools
		want := args
		if want == "" {
			want = "{}"
		}
		if len(tools) != 1 || tools[0].ID != id || tools[0].Args != want {
			t.Fatalf("tool call %q %q became %+v", id, args, tools)
		}
	})
}

// TestFuzzSeedsValidUTF8 guards the fuzz helpers: generated text stays valid.
func TestFuzzSeedsValidUTF8(t *testing.T) {
	if s := cleanText("\xff", "x"); !utf8.ValidString(s) {
		t.Fatal(s)
	}
	if got := fmt.Sprint(len(fuzzEvents([]byte("a\n:\nx\ty")))); got != "3" {
		t.Fatal(got)
	}
}
