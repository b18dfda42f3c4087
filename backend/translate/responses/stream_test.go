package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// evt is one client event parsed back from the translator's output.
type evt struct {
	typ string
	m   map[string]any
	raw string
}

func (e evt) str(key string) string { s, _ := e.m[key].(string); return s }

func (e evt) num(key string) int { f, _ := e.m[key].(float64); return int(f) }

func (e evt) obj(key string) map[string]any { o, _ := e.m[key].(map[string]any); return o }

// upstreamEvents turns test chunk notation into SSE events: "!error <data>"
// is an "event: error", ": x" a comment, anything else a data line.
func upstreamEvents(chunks []string) []sse.Event {
	out := make([]sse.Event, 0, len(chunks))
	for _, c := range chunks {
		switch {
		case strings.HasPrefix(c, "!error "):
			out = append(out, sse.Event{Event: "error", Data: []byte(strings.TrimPrefix(c, "!error "))})
		case strings.HasPrefix(c, ":"):
			out = append(out, sse.Event{Comment: true})
		default:
			out = append(out, sse.Event{Data: []byte(c)})
		}
	}
	return out
}

// parseClient parses translator output with sse.Parser and checks the
// invariants every client stream must hold: JSON data, the SSE event name
// equal to the type, sequence numbers 0, 1, 2, ….
func parseClient(t testing.TB, out []byte) []evt {
	t.Helper()
	var p sse.Parser
	var evs []evt
	var bad error
	emit := func(e sse.Event) bool {
		var m map[string]any
		if err := json.Unmarshal(e.Data, &m); err != nil {
			bad = fmt.Errorf("event %d: invalid JSON %q: %v", len(evs), e.Data, err)
			return false
		}
		ev := evt{typ: e.Event, m: m, raw: string(e.Data)}
		if ev.str("type") != e.Event {
			bad = fmt.Errorf("event %d: SSE name %q but type %q", len(evs), e.Event, ev.str("type"))
			return false
		}
		if seq, ok := m["sequence_number"].(float64); !ok || int(seq) != len(evs) {
			bad = fmt.Errorf("event %d (%s): sequence_number %v", len(evs), e.Event, m["sequence_number"])
			return false
		}
		evs = append(evs, ev)
		return true
	}
	if err := p.Feed(out, emit); err != nil {
		t.Fatal(err)
	}
	p.Flush(emit)
	if bad != nil {
		t.Fatal(bad)
	}
	return evs
}

// streamRun feeds chunks until the first error, then calls End as the caller
// would (only when Complete).
func streamRun(t testing.TB, req string, chunks []string) (evs []evt, s *Stream, err error) {
	t.Helper()
	s = NewStreamFromChat("alias", []byte(req)).(*Stream)
	var out []byte
	for _, ev := range upstreamEvents(chunks) {
		if out, err = s.Event(out, ev); err != nil {
			break
		}
	}
	if err == nil && s.Complete() {
		out = s.End(out)
	}
	return parseClient(t, out), s, err
}

func types(evs []evt) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = strings.TrimPrefix(e.typ, "response.")
	}
	return out
}

// joined concatenates the delta field of every event of type typ for item id.
func joined(evs []evt, typ, itemID string) string {
	var b strings.Builder
	for _, e := range evs {
		if e.typ == typ && e.str("item_id") == itemID {
			b.WriteString(e.str("delta"))
		}
	}
	return b.String()
}

// finalResponse returns the response object of the terminal event.
func finalResponse(t *testing.T, evs []evt) map[string]any {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	r := evs[len(evs)-1].obj("response")
	if r == nil {
		t.Fatalf("last event %s has no response", evs[len(evs)-1].typ)
	}
	return r
}

// doneItems returns the items of the output_item.done events, in order.
func doneItems(evs []evt) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e.typ == "response.output_item.done" {
			out = append(out, e.obj("item"))
		}
	}
	return out
}

func chunk(delta string) string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1700000000,"model":"up-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

func finish(reason string) string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1700000000,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

const usageChunk = `{"id":"c1","object":"chat.completion.chunk","created":1700000000,"model":"up-model","choices":[],
	"usage":{"prompt_tokens":70,"completion_tokens":30,"total_tokens":100,"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":12}}}`

func TestStream(t *testing.T) {
	text := "Hello, \"world\"\n\tüñí€😀 <&>"
	tests := []struct {
		name     string
		req      string
		chunks   []string
		types    []string
		complete bool
		errCode  string // the *UpstreamError code Event must return, if any
		check    func(t *testing.T, evs []evt, s *Stream)
	}{
		{
			name: "text",
			req:  `{"model":"alias","input":"hi","stream":true}`,
			chunks: []string{
				chunk(`{"role":"assistant","content":""}`), ": keep-alive",
				chunk(`{"content":"Hello, \"world\"\n\t"}`), chunk(`{"content":"üñí€"}`), chunk(`{"content":"😀 <&>"}`),
				finish("stop"), usageChunk, "[DONE]",
			},
			types: []string{"created", "in_progress", "output_item.added", "content_part.added",
				"output_text.delta", "output_text.delta", "output_text.delta", "output_text.done",
				"content_part.done", "output_item.done", "completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				id := evs[2].obj("item")["id"].(string)
				if got := joined(evs, "response.output_text.delta", id); got != text {
					t.Errorf("deltas %q", got)
				}
				if got := evs[7].str("text"); got != text {
					t.Errorf("output_text.done %q", got)
				}
				r := finalResponse(t, evs)
				if r["status"] != "completed" || r["model"] != "up-model" || r["created_at"] != float64(1700000000) {
					t.Errorf("response %v", r)
				}
				out := r["output"].([]any)
				content := out[0].(map[string]any)["content"].([]any)[0].(map[string]any)
				if content["text"] != text || out[0].(map[string]any)["status"] != "completed" {
					t.Errorf("output %v", out)
				}
				usage, _ := json.Marshal(r["usage"])
				jsonEqual(t, usage, `{"input_tokens":70,"input_tokens_details":{"cached_tokens":40},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":100}`)
				if got, want := s.Usage(), (translate.Usage{InputTokens: 70, OutputTokens: 30, CacheReadTokens: 40, ReasoningTokens: 12}); got != want {
					t.Errorf("Usage() = %+v, want %+v", got, want)
				}
				for _, e := range evs[:2] {
					if r := e.obj("response"); r["status"] != "in_progress" || len(r["output"].([]any)) != 0 || r["usage"] != nil {
						t.Errorf("%s: %v", e.typ, r)
					}
				}
			},
		},
		{
			name: "reasoning then text",
			chunks: []string{
				chunk(`{"role":"assistant","reasoning_content":"Think"}`), chunk(`{"reasoning_content":"ing…"}`),
				chunk(`{"reasoning_content":null,"content":"Answer"}`), finish("stop"), "[DONE]",
			},
			types: []string{"created", "in_progress",
				"output_item.added", "reasoning_summary_part.added", "reasoning_summary_text.delta", "reasoning_summary_text.delta",
				"reasoning_summary_text.done", "reasoning_summary_part.done", "output_item.done",
				"output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done",
				"completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				rs := evs[2].obj("item")
				if rs["type"] != "reasoning" || evs[3].num("summary_index") != 0 || evs[4].num("summary_index") != 0 {
					t.Errorf("reasoning events %v %v", rs, evs[3].m)
				}
				if got := joined(evs, "response.reasoning_summary_text.delta", rs["id"].(string)); got != "Thinking…" {
					t.Errorf("reasoning %q", got)
				}
				items := doneItems(evs)
				sum := items[0]["summary"].([]any)[0].(map[string]any)
				if sum["type"] != "summary_text" || sum["text"] != "Thinking…" {
					t.Errorf("reasoning item %v", items[0])
				}
				if evs[9].num("output_index") != 1 || evs[11].num("output_index") != 1 {
					t.Error("message must be output 1")
				}
				if out := finalResponse(t, evs)["output"].([]any); len(out) != 2 {
					t.Errorf("output %v", out)
				}
			},
		},
		{
			name:   "delta.reasoning spelling",
			chunks: []string{chunk(`{"reasoning":"r1"}`), chunk(`{"content":"t"}`), finish("stop")},
			types: []string{"created", "in_progress",
				"output_item.added", "reasoning_summary_part.added", "reasoning_summary_text.delta",
				"reasoning_summary_text.done", "reasoning_summary_part.done", "output_item.done",
				"output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done",
				"completed"},
			complete: true,
		},
		{
			name: "parallel tool calls with interleaved deltas",
			req:  `{"model":"alias","input":"x","tools":[{"type":"function","name":"shell"},{"type":"function","name":"read"}]}`,
			chunks: []string{
				chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"shell","arguments":""}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}`),
				chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read","arguments":"{\"p"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"[\"ls\"]}"}}]}`),
				chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\":1}"}}]}`),
				finish("tool_calls"), usageChunk, "[DONE]",
			},
			types: []string{"created", "in_progress",
				"output_item.added", "function_call_arguments.delta",
				"output_item.added", "function_call_arguments.delta",
				"function_call_arguments.delta", "function_call_arguments.delta",
				"function_call_arguments.done", "output_item.done",
				"function_call_arguments.done", "output_item.done",
				"completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				want := map[string][2]string{"call_a": {"shell", `{"command":["ls"]}`}, "call_b": {"read", `{"p":1}`}}
				ids := map[string]string{}
				for _, e := range evs {
					if e.typ == "response.output_item.added" {
						it := e.obj("item")
						if it["type"] != "function_call" || it["arguments"] != "" || it["status"] != "in_progress" {
							t.Errorf("added %v", it)
						}
						ids[it["call_id"].(string)] = it["id"].(string)
					}
				}
				for callID, w := range want {
					itemID := ids[callID]
					if got := joined(evs, "response.function_call_arguments.delta", itemID); got != w[1] {
						t.Errorf("%s deltas %q", callID, got)
					}
				}
				for _, e := range evs {
					if e.typ == "response.function_call_arguments.done" {
						id := e.str("item_id")
						var call string
						for c, i := range ids {
							if i == id {
								call = c
							}
						}
						if e.str("arguments") != want[call][1] || e.str("name") != want[call][0] {
							t.Errorf("args done %v", e.m)
						}
					}
				}
				out := finalResponse(t, evs)["output"].([]any)
				if len(out) != 2 {
					t.Fatalf("output %v", out)
				}
				seen := map[string]bool{}
				for _, o := range out {
					it := o.(map[string]any)
					c := it["call_id"].(string)
					if seen[c] || want[c][0] != it["name"] || want[c][1] != it["arguments"] || it["status"] != "completed" {
						t.Errorf("item %v", it)
					}
					seen[c] = true
				}
			},
		},
		{
			name: "text then a tool call, Codex style",
			chunks: []string{
				chunk(`{"role":"assistant","content":"Let me check."}`),
				chunk(`{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"shell","arguments":"{}"}}]}`),
				finish("tool_calls"), "[DONE]",
			},
			types: []string{"created", "in_progress",
				"output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done",
				"output_item.added", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done",
				"completed"},
			complete: true,
		},
		{
			name:     "length finish ends with response.incomplete",
			chunks:   []string{chunk(`{"content":"Once upon"}`), finish("length"), usageChunk, "[DONE]"},
			types:    []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done", "incomplete"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				r := finalResponse(t, evs)
				if r["status"] != "incomplete" || r["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
					t.Errorf("response %v", r)
				}
				if it := doneItems(evs)[0]; it["status"] != "incomplete" {
					t.Errorf("item %v", it)
				}
				if r["usage"] == nil {
					t.Error("usage lost")
				}
			},
		},
		{
			name:     "content_filter finish",
			chunks:   []string{chunk(`{"content":"x"}`), finish("content_filter")},
			types:    []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done", "incomplete"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				if r := finalResponse(t, evs); r["incomplete_details"].(map[string]any)["reason"] != "content_filter" {
					t.Errorf("response %v", r)
				}
			},
		},
		{
			name:   "truncated upstream: no finish_reason, no terminal event",
			chunks: []string{chunk(`{"content":"Hel"}`), chunk(`{"content":"lo"}`)},
			types:  []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta", "output_text.delta"},
			check: func(t *testing.T, evs []evt, s *Stream) {
				if got := s.End(nil); len(got) != 0 {
					t.Errorf("End wrote %q", got)
				}
			},
		},
		{
			name:   "truncated upstream: [DONE] without finish_reason is not an end",
			chunks: []string{chunk(`{"content":"Hel"}`), "[DONE]"},
			types:  []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta"},
		},
		{
			name:    "error chunk after the finish is not a normal end",
			chunks:  []string{chunk(`{"content":"x"}`), finish("stop"), `{"error":{"message":"backend died","type":"server_error","code":"internal"}}`},
			types:   []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done"},
			errCode: "internal",
		},
		{
			name:    "error chunk first",
			chunks:  []string{`{"error":{"message":"Rate limit reached. Please try again in 2s","code":"rate_limit_exceeded"}}`},
			errCode: "rate_limit_exceeded",
		},
		{
			name:    "SSE error event",
			chunks:  []string{chunk(`{"content":"x"}`), `!error {"error":{"message":"overloaded","type":"overloaded_error"}}`},
			types:   []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta"},
			errCode: "overloaded_error",
		},
		{
			name:    "SSE error event with plain text",
			chunks:  []string{`!error upstream exploded`},
			errCode: CodeUpstreamError,
		},
		{
			name:    "malformed chunk",
			chunks:  []string{chunk(`{"content":"x"}`), `{"choices":[`},
			types:   []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta"},
			errCode: CodeMalformedChunk,
		},
		{
			name:    "chunk that is not an object",
			chunks:  []string{`[1]`},
			errCode: CodeMalformedChunk,
		},
		{
			name: "custom tool call: input decoded and sent whole",
			req:  `{"model":"alias","input":"x","tools":[{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}]}`,
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"call_p","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":" Patch\\n*** End Patch\"}"}}]}`),
				finish("tool_calls"),
			},
			types: []string{"created", "in_progress", "output_item.added",
				"custom_tool_call_input.delta", "custom_tool_call_input.done", "output_item.done", "completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				want := "*** Begin Patch\n*** End Patch"
				added := evs[2].obj("item")
				if added["type"] != "custom_tool_call" || added["input"] != "" || added["call_id"] != "call_p" {
					t.Errorf("added %v", added)
				}
				if evs[3].str("delta") != want || evs[4].str("input") != want {
					t.Errorf("input events %v %v", evs[3].m, evs[4].m)
				}
				it := doneItems(evs)[0]
				if it["input"] != want || it["name"] != "apply_patch" || it["status"] != "completed" {
					t.Errorf("done %v", it)
				}
			},
		},
		{
			name: "arguments before the name are replayed once the name arrives",
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"call_n","function":{"arguments":"{\"a\""}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"name":"f","arguments":":1}"}}]}`),
				finish("tool_calls"),
			},
			types: []string{"created", "in_progress", "output_item.added",
				"function_call_arguments.delta", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done", "completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				if it := doneItems(evs)[0]; it["arguments"] != `{"a":1}` || it["name"] != "f" || it["call_id"] != "call_n" {
					t.Errorf("item %v", it)
				}
			},
		},
		{
			name:     "a call whose name never came is still closed",
			chunks:   []string{chunk(`{"tool_calls":[{"index":0,"id":"call_q","function":{"arguments":"{}"}}]}`), finish("tool_calls")},
			types:    []string{"created", "in_progress", "output_item.added", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done", "completed"},
			complete: true,
		},
		{
			name: "index 0 reused with a new id is a new call; calls without index keyed by id",
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{}"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"id":"call_2","function":{"name":"g","arguments":"{}"}}]}`),
				chunk(`{"tool_calls":[{"id":"call_3","function":{"name":"h","arguments":"{\"x\""}}]}`),
				chunk(`{"tool_calls":[{"function":{"arguments":":2}"}}]}`),
				finish("tool_calls"),
			},
			types: []string{"created", "in_progress",
				"output_item.added", "function_call_arguments.delta",
				"output_item.added", "function_call_arguments.delta",
				"output_item.added", "function_call_arguments.delta", "function_call_arguments.delta",
				"function_call_arguments.done", "output_item.done",
				"function_call_arguments.done", "output_item.done",
				"function_call_arguments.done", "output_item.done", "completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				var got []string
				for _, it := range doneItems(evs) {
					got = append(got, it["call_id"].(string)+"="+it["name"].(string)+it["arguments"].(string))
				}
				if want := []string{"call_1=f{}", "call_2=g{}", `call_3=h{"x":2}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("calls %v", got)
				}
			},
		},
		{
			name:   "refusal part",
			chunks: []string{chunk(`{"content":"I "}`), chunk(`{"refusal":"can't"}`), finish("stop")},
			types: []string{"created", "in_progress", "output_item.added",
				"content_part.added", "output_text.delta", "output_text.done", "content_part.done",
				"content_part.added", "refusal.delta", "refusal.done", "content_part.done",
				"output_item.done", "completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				if evs[7].num("content_index") != 1 || evs[9].str("refusal") != "can't" {
					t.Errorf("refusal events %v %v", evs[7].m, evs[9].m)
				}
				content := doneItems(evs)[0]["content"].([]any)
				if len(content) != 2 || content[1].(map[string]any)["refusal"] != "can't" {
					t.Errorf("content %v", content)
				}
			},
		},
		{
			name:     "finish with usage and no [DONE] is complete; other choices ignored",
			chunks:   []string{`{"model":"m","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`, finish("stop"), usageChunk},
			types:    []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done", "completed"},
			complete: true,
			check: func(t *testing.T, evs []evt, s *Stream) {
				if evs[4].str("delta") != "mine" || finalResponse(t, evs)["model"] != "m" {
					t.Errorf("delta %v", evs[4].m)
				}
			},
		},
		{
			name:     "empty answer",
			chunks:   []string{chunk(`{"role":"assistant"}`), finish("stop"), "[DONE]"},
			types:    []string{"created", "in_progress", "completed"},
			complete: true,
		},
		{
			name:   "comments and empty data write nothing",
			chunks: []string{": ping", "", "[DONE]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			if req == "" {
				req = `{"model":"alias","input":"x","stream":true}`
			}
			evs, s, err := streamRun(t, req, tc.chunks)
			if tc.errCode == "" && err != nil {
				t.Fatalf("Event: %v", err)
			}
			if tc.errCode != "" {
				var ue *UpstreamError
				if !errors.As(err, &ue) || ue.Code != tc.errCode {
					t.Fatalf("err = %v, want *UpstreamError %s", err, tc.errCode)
				}
			}
			if got := types(evs); !reflect.DeepEqual(got, append([]string{}, tc.types...)) && !(len(got) == 0 && len(tc.types) == 0) {
				t.Errorf("types\n got  %v\n want %v", got, tc.types)
			}
			if s.Complete() != tc.complete {
				t.Errorf("Complete() = %v, want %v", s.Complete(), tc.complete)
			}
			for _, e := range evs {
				if e.typ == "response.completed" || e.typ == "response.incomplete" {
					if !tc.complete {
						t.Errorf("%s without a proper upstream end", e.typ)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, evs, s)
			}
		})
	}
}

// TestStreamMatchesResponse: the streamed final response object has the same
// shape as the one-shot translation of the same answer.
func TestStreamMatchesResponse(t *testing.T) {
	req := `{"model":"alias","instructions":"i","input":"x","tools":[{"type":"function","name":"shell"}],"reasoning":{"effort":"high"},"metadata":{"k":"v"}}`
	evs, _, err := streamRun(t, req, []string{
		chunk(`{"reasoning_content":"think"}`), chunk(`{"content":"say"}`),
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}}]}`),
		finish("tool_calls"), usageChunk, "[DONE]",
	})
	if err != nil {
		t.Fatal(err)
	}
	streamed, _ := json.Marshal(finalResponse(t, evs))
	oneShot, err := ResponseFromChat([]byte(`{"created":1700000000,"model":"up-model","choices":[{"message":{"reasoning_content":"think","content":"say",
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":70,"completion_tokens":30,"total_tokens":100,"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":12}}}`), []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, normalizeIDs(streamed), string(normalizeIDs(oneShot)))
}

func TestStreamEndAndFail(t *testing.T) {
	t.Run("End is idempotent", func(t *testing.T) {
		s := NewStreamFromChat("m", nil)
		out, err := s.Event(nil, sse.Event{Data: []byte(finish("stop"))})
		if err != nil {
			t.Fatal(err)
		}
		out = s.End(out)
		n := len(out)
		out = s.End(out)
		if len(out) != n {
			t.Error("second End wrote more")
		}
		out, _ = s.Event(out, sse.Event{Data: []byte(chunk(`{"content":"late"}`))})
		if len(out) != n {
			t.Error("Event after End wrote more")
		}
		if got := types(parseClient(t, out)); !reflect.DeepEqual(got, []string{"created", "in_progress", "completed"}) {
			t.Errorf("types %v", got)
		}
	})
	t.Run("Fail writes response.failed and ends the stream", func(t *testing.T) {
		s := NewStreamFromChat("m", nil).(*Stream)
		out, _ := s.Event(nil, sse.Event{Data: []byte(chunk(`{"content":"par"}`))})
		out = s.Fail(out, "context_length_exceeded", "too long")
		n := len(out)
		out = s.Fail(out, "x", "y")
		out = s.End(out)
		if len(out) != n {
			t.Error("wrote after Fail")
		}
		evs := parseClient(t, out)
		last := evs[len(evs)-1]
		r := last.obj("response")
		if last.typ != "response.failed" || r["status"] != "failed" {
			t.Fatalf("last %v", last.m)
		}
		if e := r["error"].(map[string]any); e["code"] != "invalid_prompt" || e["omniroute_code"] != "context_length_exceeded" || e["message"] != "too long" {
			t.Errorf("error %v", e)
		}
		if s.Complete() {
			t.Error("complete after Fail without finish")
		}
	})
	t.Run("Usage before any usage chunk is zero", func(t *testing.T) {
		if u := NewStreamFromChat("m", nil).Usage(); u != (translate.Usage{}) {
			t.Errorf("%+v", u)
		}
	})
}

// TestCodexRoundTrip translates a Codex-shaped request end to end: the Chat
// request it becomes, then a streamed Chat answer back into the events Codex
// parses (output_item.done items and response.completed with usage).
func TestCodexRoundTrip(t *testing.T) {
	req := `{
	  "model": "gpt-5-codex",
	  "instructions": "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI.",
	  "input": [
	    {"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>sandbox: workspace-write</permissions instructions>"}]},
	    {"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"}]},
	    {"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]},
	    {"type":"reasoning","summary":[{"type":"summary_text","text":"**Listing files**"}],"content":null,"encrypted_content":"gAAAAB..."},
	    {"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"],\"workdir\":\"/repo\"}","call_id":"call_abc"},
	    {"type":"function_call_output","call_id":"call_abc","output":"Exit code: 0\nOutput:\nREADME.md\nmain.go\n"},
	    {"type":"message","role":"assistant","content":[{"type":"output_text","text":"README.md and main.go."}]},
	    {"type":"message","role":"user","content":[{"type":"input_text","text":"patch main.go"}]}
	  ],
	  "tools": [
	    {"type":"function","name":"shell","description":"Runs a shell command and returns its output.","strict":false,
	     "parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},"workdir":{"type":"string"}},"required":["command"],"additionalProperties":false}},
	    {"type":"function","name":"update_plan","description":"Updates the task plan.","strict":false,"parameters":{"type":"object","properties":{"plan":{"type":"array"}},"required":["plan"]}},
	    {"type":"custom","name":"apply_patch","description":"Use the apply_patch tool to edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}},
	    {"type":"web_search"}
	  ],
	  "tool_choice": "auto",
	  "parallel_tool_calls": false,
	  "reasoning": {"effort":"medium","summary":"auto"},
	  "store": false,
	  "stream": true,
	  "include": ["reasoning.encrypted_content"],
	  "prompt_cache_key": "0199-session"
	}`
	chatReq, err := RequestToChat([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, chatReq, `{
	  "model":"gpt-5-codex",
	  "messages":[
	    {"role":"system","content":"You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI.\n\n<permissions instructions>sandbox: workspace-write</permissions instructions>"},
	    {"role":"user","content":"<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"},
	    {"role":"user","content":"list the files"},
	    {"role":"assistant","tool_calls":[{"id":"call_abc","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"],\"workdir\":\"/repo\"}"}}]},
	    {"role":"tool","tool_call_id":"call_abc","content":"Exit code: 0\nOutput:\nREADME.md\nmain.go\n"},
	    {"role":"assistant","content":"README.md and main.go."},
	    {"role":"user","content":"patch main.go"}
	  ],
	  "tools":[
	    {"type":"function","function":{"name":"shell","description":"Runs a shell command and returns its output.",
	      "parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},"workdir":{"type":"string"}},"required":["command"],"additionalProperties":false}}},
	    {"type":"function","function":{"name":"update_plan","description":"Updates the task plan.","parameters":{"type":"object","properties":{"plan":{"type":"array"}},"required":["plan"]}}},
	    {"type":"function","function":{"name":"apply_patch",
	      "description":"Use the apply_patch tool to edit files.\n\nPass the tool's raw input as the string argument \"input\". It must match this lark grammar:\nstart: begin_patch hunk+ end_patch",
	      "parameters":`+customInputSchema+`}}
	  ],
	  "tool_choice":"auto",
	  "parallel_tool_calls":false,
	  "reasoning_effort":"medium",
	  "stream":true,
	  "stream_options":{"include_usage":true}
	}`)

	patch := "*** Begin Patch\n*** Update File: main.go\n@@\n-old\n+new\n*** End Patch"
	args, _ := json.Marshal(map[string]string{"input": patch})
	argsJSON, _ := json.Marshal(string(args))
	half := len(argsJSON) / 2
	// Split the JSON-encoded arguments string into two valid JSON strings.
	for argsJSON[half-1] == '\\' {
		half++
	}
	first, second := string(argsJSON[:half])+`"`, `"`+string(argsJSON[half:])
	evs, s, err := streamRun(t, req, []string{
		chunk(`{"role":"assistant","reasoning_content":"**Editing** main.go"}`),
		chunk(`{"content":"Applying the patch."}`),
		chunk(`{"tool_calls":[{"index":0,"id":"call_patch","type":"function","function":{"name":"apply_patch","arguments":` + first + `}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":` + second + `}}]}`),
		finish("tool_calls"), usageChunk, "[DONE]",
	})
	if err != nil || !s.Complete() {
		t.Fatalf("err %v complete %v", err, s.Complete())
	}
	// What Codex keeps: the items of output_item.done, and response.completed's id and usage.
	items := doneItems(evs)
	if len(items) != 3 {
		t.Fatalf("items %v", items)
	}
	got, _ := json.Marshal(items)
	jsonEqual(t, normalizeIDs(got), `[
	  {"id":"rs_ID","type":"reasoning","summary":[{"type":"summary_text","text":"**Editing** main.go"}]},
	  {"id":"msg_ID","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Applying the patch.","annotations":[],"logprobs":[]}]},
	  {"id":"ctc_ID","type":"custom_tool_call","status":"completed","call_id":"call_patch","name":"apply_patch","input":`+mustJSON(patch)+`}
	]`)
	r := finalResponse(t, evs)
	if evs[len(evs)-1].typ != "response.completed" || !strings.HasPrefix(r["id"].(string), "resp_") || r["usage"].(map[string]any)["total_tokens"] != float64(100) {
		t.Errorf("completed %v", r)
	}
	if evs[0].typ != "response.created" || evs[0].obj("response")["id"] != r["id"] {
		t.Error("created and completed name different responses")
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestAppendString(t *testing.T) {
	tests := []string{"", "plain", "quote\" back\\ nl\n cr\r tab\t", "\x00\x01\x1f\x7f", "<&>", "ü€😀", "\u2028\u2029", "bad\xffutf8\xc3", "\xed\xa0\x80"}
	for _, s := range tests {
		got := appendString(nil, s)
		want, _ := json.Marshal(s)
		var back, wantBack string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: invalid JSON %s", s, got)
		}
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q: decodes to %q, want %q", s, back, wantBack)
		}
	}
}

func BenchmarkStream(b *testing.B) {
	req := []byte(`{"model":"alias","input":"x","stream":true,"tools":[{"type":"function","name":"shell"}]}`)
	var evs []sse.Event
	evs = append(evs, sse.Event{Data: []byte(chunk(`{"role":"assistant","content":""}`))})
	for i := 0; i < 50; i++ {
		evs = append(evs, sse.Event{Data: []byte(chunk(`{"reasoning_content":"thinking about it "}`))})
	}
	for i := 0; i < 200; i++ {
		evs = append(evs, sse.Event{Data: []byte(chunk(`{"content":"Some streamed text, with \"quotes\" and ünïcode. "}`))})
	}
	evs = append(evs, sse.Event{Data: []byte(chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]}`))})
	for i := 0; i < 50; i++ {
		evs = append(evs, sse.Event{Data: []byte(chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}`))})
	}
	evs = append(evs, sse.Event{Data: []byte(finish("tool_calls"))}, sse.Event{Data: []byte(usageChunk)}, sse.Event{Data: []byte("[DONE]")})
	var in int
	for _, e := range evs {
		in += len(e.Data)
	}
	b.SetBytes(int64(in))
	b.ReportAllocs()
	dst := make([]byte, 0, 1<<20)
	for b.Loop() {
		s := NewStreamFromChat("alias", req)
		out := dst[:0]
		var err error
		for _, e := range evs {
			if out, err = s.Event(out, e); err != nil {
				b.Fatal(err)
			}
		}
		out = s.End(out)
		dst = out
	}
	b.ReportMetric(float64(len(evs)), "chunks/op")
}

// vendorResponseErrorCodes is ResponseError.code's enum in OpenAI's API
// reference (the Responses object's "error"): what a typed client accepts.
var vendorResponseErrorCodes = []string{"server_error", "rate_limit_exceeded", "invalid_prompt", "vector_store_timeout",
	"invalid_image", "invalid_image_format", "invalid_base64_image", "invalid_image_url", "image_too_large",
	"image_too_small", "image_parse_error", "image_content_policy_violation", "invalid_image_mode",
	"image_file_too_large", "unsupported_image_media_type", "empty_image_file", "failed_to_download_image",
	"image_file_not_found"}

// TestFailCodeInSpecEnum (issue 41, M3): response.failed's error.code is of
// the spec's enum; the gateway's own code travels in error.omniroute_code.
func TestFailCodeInSpecEnum(t *testing.T) {
	cases := []struct{ code, want, own string }{
		{"UPSTREAM_STREAM_ERROR", "server_error", "UPSTREAM_STREAM_ERROR"},
		{"STREAM_TRUNCATED", "server_error", "STREAM_TRUNCATED"},
		{"STREAM_STALLED", "server_error", "STREAM_STALLED"},
		{"UPSTREAM_RATE_LIMITED", "rate_limit_exceeded", "UPSTREAM_RATE_LIMITED"},
		{"CONTEXT_LENGTH_EXCEEDED", "invalid_prompt", "CONTEXT_LENGTH_EXCEEDED"},
		{"rate_limit_exceeded", "rate_limit_exceeded", ""},
	}
	for _, c := range cases {
		t.Run(c.code, func(t *testing.T) {
			s := NewStreamFromChat("m", nil).(*Stream)
			evs := parseClient(t, s.Fail(nil, c.code, "boom"))
			last := evs[len(evs)-1]
			e, _ := last.obj("response")["error"].(map[string]any)
			if last.typ != "response.failed" || e == nil {
				t.Fatalf("last %v", last.m)
			}
			if !slices.Contains(vendorResponseErrorCodes, e["code"].(string)) || e["code"] != c.want {
				t.Errorf("code %v, want %s (in the spec's enum)", e["code"], c.want)
			}
			if own, _ := e["omniroute_code"].(string); own != c.own {
				t.Errorf("omniroute_code %q, want %q", own, c.own)
			}
		})
	}
}
