package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// chunk builds an OpenAI chunk the way OpenAI sends it.
func chunk(model, choice string) string {
	return `{"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1757000000,"model":"` + model +
		`","system_fingerprint":"fp_1","choices":[` + choice + `],"usage":null}`
}

func deltaChunk(delta string) string {
	return chunk("gpt-4.1-2025-04-14", `{"index":0,"delta":`+delta+`,"logprobs":null,"finish_reason":null}`)
}

func finishChunk(reason string) string {
	return chunk("gpt-4.1-2025-04-14", `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`+reason+`"}`)
}

const chatUsageChunk = `{"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1757000000,"model":"gpt-4.1-2025-04-14","choices":[],
"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":100,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":12}}}`

// splitArgs cuts s into pieces of about n bytes, on character boundaries
// (a JSON string cannot hold half a character).
func splitArgs(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// toolArgChunks streams one tool call the OpenAI way: id+name, then argument pieces.
func toolArgChunks(index int, id, name, args string, piece int) []string {
	out := []string{deltaChunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`, index, jsonQuote(id), jsonQuote(name)))}
	for _, p := range splitArgs(args, piece) {
		out = append(out, deltaChunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, index, jsonQuote(p))))
	}
	return out
}

// jsonQuote renders s as a JSON string with encoding/json.
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func cat(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

func TestStreamFromChat(t *testing.T) {
	weatherArgs := `{"city":"Paris","units":"celsius","days":[1,2,3],"note":"a \"quoted\" word, ünïcödé"}`
	tests := []struct {
		name      string
		in        []string
		wantTypes []string
		text      string
		thinking  string
		tools     []anthBlockSum
		stop      string
		usage     tokens
		complete  bool
	}{
		{
			name: "text only with final usage chunk",
			in: cat(deltaChunk(`{"role":"assistant","content":"","refusal":null}`), deltaChunk(`{"content":"Hel"}`), ": keep-alive",
				deltaChunk(`{"content":"lo, "}`), deltaChunk(`{"content":"world"}`), finishChunk("stop"), chatUsageChunk, "[DONE]"),
			wantTypes: []string{"message_start", "ping", "content_block_start", "content_block_delta", "ping", "content_block_delta",
				"content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			text:     "Hello, world",
			stop:     "end_turn",
			usage:    tokens{Input: 20, CacheRead: 100, Output: 30, Reasoning: 12},
			complete: true,
		},
		{
			name: "tool call with arguments split over many deltas",
			in: cat(deltaChunk(`{"role":"assistant","content":null}`), toolArgChunks(0, "call_Wx1", "get_weather", weatherArgs, 3),
				finishChunk("tool_calls"), chatUsageChunk, "[DONE]"),
			tools:    []anthBlockSum{{Type: "tool_use", ID: "call_Wx1", Name: "get_weather", Args: weatherArgs}},
			stop:     "tool_use",
			usage:    tokens{Input: 20, CacheRead: 100, Output: 30, Reasoning: 12},
			complete: true,
		},
		{
			name: "text then parallel tool calls",
			in: cat(deltaChunk(`{"role":"assistant","content":"Checking both."}`),
				toolArgChunks(0, "call_A", "get_weather", `{"city":"Paris"}`, 4),
				toolArgChunks(1, "call_B", "get_weather", `{"city":"Oslo"}`, 5),
				finishChunk("tool_calls"), chatUsageChunk, "[DONE]"),
			wantTypes: []string{"message_start", "ping",
				"content_block_start", "content_block_delta", "content_block_stop",
				"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
				"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
				"message_delta", "message_stop"},
			text: "Checking both.",
			tools: []anthBlockSum{
				{Type: "tool_use", ID: "call_A", Name: "get_weather", Args: `{"city":"Paris"}`},
				{Type: "tool_use", ID: "call_B", Name: "get_weather", Args: `{"city":"Oslo"}`},
			},
			stop:     "tool_use",
			usage:    tokens{Input: 20, CacheRead: 100, Output: 30, Reasoning: 12},
			complete: true,
		},
		{
			name: "deepseek reasoning_content then text, usage with the finish",
			in: cat(
				chunk("deepseek-reasoner", `{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}`),
				chunk("deepseek-reasoner", `{"index":0,"delta":{"content":null,"reasoning_content":"Let me "},"logprobs":null,"finish_reason":null}`),
				chunk("deepseek-reasoner", `{"index":0,"delta":{"content":null,"reasoning_content":"think."},"logprobs":null,"finish_reason":null}`),
				chunk("deepseek-reasoner", `{"index":0,"delta":{"content":"Answer","reasoning_content":null},"logprobs":null,"finish_reason":null}`),
				`{"id":"x","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}],
				 "usage":{"prompt_tokens":50,"completion_tokens":9,"total_tokens":59,"prompt_cache_hit_tokens":32,"prompt_cache_miss_tokens":18,"completion_tokens_details":{"reasoning_tokens":4}}}`,
				"[DONE]"),
			wantTypes: []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
				"content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			thinking: "Let me think.",
			text:     "Answer",
			stop:     "end_turn",
			usage:    tokens{Input: 18, CacheRead: 32, Output: 9, Reasoning: 4},
			complete: true,
		},
		{
			name: "openrouter reasoning field and processing comments",
			in: cat(": OPENROUTER PROCESSING",
				chunk("anthropic/claude-sonnet-4", `{"index":0,"delta":{"role":"assistant","content":"","reasoning":"hmm","reasoning_details":[{"type":"reasoning.text","text":"hmm"}]},"finish_reason":null}`),
				chunk("anthropic/claude-sonnet-4", `{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop","native_finish_reason":"end_turn"}`),
				`{"id":"gen","object":"chat.completion.chunk","created":1,"model":"anthropic/claude-sonnet-4","choices":[{"index":0,"delta":{"content":""},"finish_reason":null}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`,
				"[DONE]"),
			thinking: "hmm",
			text:     "ok",
			stop:     "end_turn",
			usage:    tokens{Input: 10, Output: 2},
			complete: true,
		},
		{
			name: "gemini-style whole tool calls in one delta, finish stop",
			in: cat(chunk("gemini-2.5-pro", `{"index":0,"delta":{"role":"assistant","tool_calls":[
					{"index":0,"id":"g1","type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},
					{"index":1,"id":"g2","type":"function","function":{"name":"b","arguments":"{}"}}]},"finish_reason":"stop"}`), "[DONE]"),
			tools: []anthBlockSum{
				{Type: "tool_use", ID: "g1", Name: "a", Args: `{"x":1}`},
				{Type: "tool_use", ID: "g2", Name: "b", Args: `{}`},
			},
			stop:     "tool_use",
			complete: true,
		},
		{
			name:     "name arrives after arguments",
			in:       cat(deltaChunk(`{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{\"a\""}}]}`), deltaChunk(`{"tool_calls":[{"index":0,"function":{"name":"late","arguments":":1}"}}]}`), finishChunk("tool_calls")),
			tools:    []anthBlockSum{{Type: "tool_use", ID: "c", Name: "late", Args: `{"a":1}`}},
			stop:     "tool_use",
			complete: true,
		},
		{
			name:      "length, no [DONE]: End closes",
			in:        cat(deltaChunk(`{"content":"trunc"}`), finishChunk("length")),
			wantTypes: []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			text:      "trunc",
			stop:      "max_tokens",
			complete:  true,
		},
		{
			name:     "content_filter",
			in:       cat(deltaChunk(`{"refusal":"I can't help"}`), finishChunk("content_filter"), "[DONE]"),
			text:     "I can't help",
			stop:     "refusal",
			complete: true,
		},
		{
			name:      "truncated: no finish, no [DONE]",
			in:        cat(deltaChunk(`{"content":"Hel"}`), deltaChunk(`{"content":"lo"}`)),
			wantTypes: []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta"},
			text:      "Hello",
			complete:  false,
		},
		{
			name:      "truncated mid tool call",
			in:        cat(toolArgChunks(0, "call_T", "f", `{"a":1}`, 2)[:2]),
			wantTypes: []string{"message_start", "ping", "content_block_start", "content_block_delta"},
			tools:     []anthBlockSum{{Type: "tool_use", ID: "call_T", Name: "f", Args: `{"`}},
			complete:  false,
		},
		{
			name:      "only [DONE]",
			in:        cat("[DONE]"),
			wantTypes: []string{"message_start", "ping", "message_delta", "message_stop"},
			stop:      "end_turn",
			complete:  true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewStreamFromChat("fallback-model")
			out, err := runStream(t, tr, sseInput(tc.in...))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Complete() != tc.complete {
				t.Fatalf("Complete() = %v, want %v", tr.Complete(), tc.complete)
			}
			evs := parseOut(t, out)
			if tc.wantTypes != nil && !reflect.DeepEqual(types(evs), tc.wantTypes) {
				t.Fatalf("events:\n got  %v\n want %v\n%s", types(evs), tc.wantTypes, out)
			}
			s := summarizeAnthropic(t, evs)
			if s.Stopped != tc.complete {
				t.Fatalf("message_stop present = %v, want %v", s.Stopped, tc.complete)
			}
			if s.Model == "fallback-model" && len(tc.in) > 1 {
				t.Errorf("model: the upstream's model was not used")
			}
			if got := s.text("text"); got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			if got := s.text("thinking"); got != tc.thinking {
				t.Errorf("thinking %q, want %q", got, tc.thinking)
			}
			if got := s.tools(); !reflect.DeepEqual(got, tc.tools) {
				t.Errorf("tools %+v, want %+v", got, tc.tools)
			}
			if s.Stop != tc.stop {
				t.Errorf("stop %q, want %q", s.Stop, tc.stop)
			}
			if tc.complete {
				want := tc.usage
				want.Reasoning = 0 // Anthropic has no reasoning count on the wire
				if s.Usage != want {
					t.Errorf("wire usage %+v, want %+v", s.Usage, want)
				}
				if tr.Usage() != tc.usage.public() {
					t.Errorf("Usage() %+v, want %+v", tr.Usage(), tc.usage.public())
				}
			}
		})
	}
}

// Anthropic stream fixtures, shaped like captured API output.
const (
	antStart = `{"type":"message_start","message":{"id":"msg_01Abc","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,
		"usage":{"input_tokens":472,"cache_creation_input_tokens":1000,"cache_read_input_tokens":2000,"output_tokens":2,"service_tier":"standard"}}}`
	antPing    = `{"type": "ping"}`
	antStop    = `{"type":"message_stop"}`
	antErrOver = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
)

func antEv(name, data string) string { return name + "\t" + data }

func antBlockStart(i int, block string) string {
	return antEv("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block))
}

func antDelta(i int, delta string) string {
	return antEv("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, delta))
}

func antBlockStop(i int) string {
	return antEv("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

func antMsgDelta(stop string, out int) string {
	return antEv("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out))
}

func antToolBlock(i int, id, name, args string, piece int) []string {
	out := []string{antBlockStart(i, fmt.Sprintf(`{"type":"tool_use","id":%s,"name":%s,"input":{}}`, jsonQuote(id), jsonQuote(name))), antDelta(i, `{"type":"input_json_delta","partial_json":""}`)}
	for _, p := range splitArgs(args, piece) {
		out = append(out, antDelta(i, fmt.Sprintf(`{"type":"input_json_delta","partial_json":%s}`, jsonQuote(p))))
	}
	return append(out, antBlockStop(i))
}

func TestStreamToChat(t *testing.T) {
	args := `{"command":"go test ./... -run 'TestX|TestY'","description":"Run tests","timeout":120000}`
	tests := []struct {
		name      string
		in        []string
		wantTypes []string
		content   string
		reasoning string
		tools     []chatToolSum
		finish    string
		usage     string
		complete  bool
	}{
		{
			name: "text only",
			in: cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`), antEv("ping", antPing),
				antDelta(0, `{"type":"text_delta","text":"Hello"}`), antDelta(0, `{"type":"text_delta","text":"!\nBye"}`), antBlockStop(0),
				antMsgDelta("end_turn", 15), antEv("message_stop", antStop)),
			wantTypes: []string{"chunk", "chunk", "chunk", "chunk", "chunk", "[DONE]"},
			content:   "Hello!\nBye",
			finish:    "stop",
			usage:     `{"prompt_tokens":3472,"completion_tokens":15,"total_tokens":3487,"prompt_tokens_details":{"cached_tokens":2000,"cache_write_tokens":1000}}`,
			complete:  true,
		},
		{
			name: "thinking then text then tool use with split arguments",
			in: cat(antEv("message_start", antStart),
				antBlockStart(0, `{"type":"thinking","thinking":"","signature":""}`),
				antDelta(0, `{"type":"thinking_delta","thinking":"I should "}`), antDelta(0, `{"type":"thinking_delta","thinking":"run tests."}`),
				antDelta(0, `{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}`), antBlockStop(0),
				antBlockStart(1, `{"type":"text","text":""}`), antDelta(1, `{"type":"text_delta","text":"Running."}`), antBlockStop(1),
				antToolBlock(2, "toolu_01Bash", "Bash", args, 7),
				antMsgDelta("tool_use", 89), antEv("message_stop", antStop)),
			content:   "Running.",
			reasoning: "I should run tests.",
			tools:     []chatToolSum{{ID: "toolu_01Bash", Name: "Bash", Args: args}},
			finish:    "tool_calls",
			usage:     `{"prompt_tokens":3472,"completion_tokens":89,"total_tokens":3561,"prompt_tokens_details":{"cached_tokens":2000,"cache_write_tokens":1000}}`,
			complete:  true,
		},
		{
			name: "parallel tool calls, one without input",
			in: cat(antEv("message_start", antStart), antToolBlock(0, "toolu_A", "Read", `{"file_path":"/a.go"}`, 4),
				antBlockStart(1, `{"type":"tool_use","id":"toolu_B","name":"LS","input":{}}`), antBlockStop(1),
				antToolBlock(2, "toolu_C", "Read", `{"file_path":"/c.go"}`, 100),
				antMsgDelta("tool_use", 40), antEv("message_stop", antStop)),
			tools: []chatToolSum{
				{ID: "toolu_A", Name: "Read", Args: `{"file_path":"/a.go"}`},
				{ID: "toolu_B", Name: "LS", Args: `{}`},
				{ID: "toolu_C", Name: "Read", Args: `{"file_path":"/c.go"}`},
			},
			finish:   "tool_calls",
			usage:    `{"prompt_tokens":3472,"completion_tokens":40,"total_tokens":3512,"prompt_tokens_details":{"cached_tokens":2000,"cache_write_tokens":1000}}`,
			complete: true,
		},
		{
			name: "redacted thinking and server tool blocks are dropped",
			in: cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"redacted_thinking","data":"EmwKAhgB"}`), antBlockStop(0),
				antBlockStart(1, `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}`),
				antDelta(1, `{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}`), antBlockStop(1),
				antBlockStart(2, `{"type":"text","text":"Found it"}`), antDelta(2, `{"type":"citations_delta","citation":{"type":"web_search_result_location"}}`), antBlockStop(2),
				antMsgDelta("end_turn", 3), antEv("message_stop", antStop)),
			content:  "Found it",
			finish:   "stop",
			usage:    `{"prompt_tokens":3472,"completion_tokens":3,"total_tokens":3475,"prompt_tokens_details":{"cached_tokens":2000,"cache_write_tokens":1000}}`,
			complete: true,
		},
		{
			name: "max_tokens with cumulative usage in message_delta",
			in: cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`), antDelta(0, `{"type":"text_delta","text":"cut"}`), antBlockStop(0),
				antEv("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":500,"cache_creation_input_tokens":0,"cache_read_input_tokens":2000,"output_tokens":4096}}`),
				antEv("message_stop", antStop)),
			content:  "cut",
			finish:   "length",
			usage:    `{"prompt_tokens":2500,"completion_tokens":4096,"total_tokens":6596,"prompt_tokens_details":{"cached_tokens":2000}}`,
			complete: true,
		},
		{
			name: "stop_sequence and refusal map",
			in: cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`), antDelta(0, `{"type":"text_delta","text":"x"}`), antBlockStop(0),
				antMsgDelta("refusal", 1), antEv("message_stop", antStop)),
			content:  "x",
			finish:   "content_filter",
			usage:    `{"prompt_tokens":3472,"completion_tokens":1,"total_tokens":3473,"prompt_tokens_details":{"cached_tokens":2000,"cache_write_tokens":1000}}`,
			complete: true,
		},
		{
			name: "truncated after message_delta: no [DONE]",
			in: cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`), antDelta(0, `{"type":"text_delta","text":"almost"}`), antBlockStop(0),
				antMsgDelta("end_turn", 2)),
			wantTypes: []string{"chunk", "chunk", "chunk"},
			content:   "almost",
			finish:    "stop",
			complete:  false,
		},
		{
			name:      "truncated mid text",
			in:        cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`), antDelta(0, `{"type":"text_delta","text":"par"}`)),
			wantTypes: []string{"chunk", "chunk"},
			content:   "par",
			complete:  false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewStreamToChat("fallback-model")
			out, err := runStream(t, tr, sseInput(tc.in...))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Complete() != tc.complete {
				t.Fatalf("Complete() = %v, want %v", tr.Complete(), tc.complete)
			}
			evs := parseOut(t, out)
			if tc.wantTypes != nil && !reflect.DeepEqual(types(evs), tc.wantTypes) {
				t.Fatalf("events:\n got  %v\n want %v\n%s", types(evs), tc.wantTypes, out)
			}
			s := summarizeChat(t, evs)
			if s.Done != tc.complete {
				t.Fatalf("[DONE] present = %v, want %v", s.Done, tc.complete)
			}
			if s.Model != "claude-sonnet-4-5-20250929" || s.ID != "msg_01Abc" {
				t.Errorf("model %q id %q: the upstream's were not used", s.Model, s.ID)
			}
			if s.Content != tc.content || s.Reasoning != tc.reasoning {
				t.Errorf("content %q reasoning %q, want %q %q", s.Content, s.Reasoning, tc.content, tc.reasoning)
			}
			if !reflect.DeepEqual(s.Tools, tc.tools) {
				t.Errorf("tools %+v, want %+v", s.Tools, tc.tools)
			}
			if s.Finish != tc.finish {
				t.Errorf("finish %q, want %q", s.Finish, tc.finish)
			}
			if tc.usage != "" && !sameJSON(t, s.Usage, tc.usage) {
				t.Errorf("usage %s, want %s", s.Usage, tc.usage)
			}
			if !tc.complete && s.Usage != "" {
				t.Errorf("usage chunk sent for an incomplete stream")
			}
		})
	}
}

func TestStreamUpstreamErrors(t *testing.T) {
	tests := []struct {
		name     string
		tr       func() translate.StreamTranslator
		in       []string
		wantCode string
	}{
		{"anthropic error event", func() translate.StreamTranslator { return NewStreamToChat("m") },
			cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`), antEv("error", antErrOver)), "overloaded_error"},
		{"anthropic error event, non-JSON data", func() translate.StreamTranslator { return NewStreamToChat("m") },
			cat(antEv("message_start", antStart), antEv("error", "upstream exploded")), ""},
		{"openai error chunk", func() translate.StreamTranslator { return NewStreamFromChat("m") },
			cat(deltaChunk(`{"content":"par"}`), `{"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"x"}}}`, "[DONE]"), "502"},
		{"openai error chunk before anything", func() translate.StreamTranslator { return NewStreamFromChat("m") },
			cat(`{"error":{"message":"rate limited","type":"rate_limit_error"}}`), "rate_limit_error"},
		{"openai named error event", func() translate.StreamTranslator { return NewStreamFromChat("m") },
			cat(antEv("error", `{"message":"boom"}`)), ""},
		{"interleaved tool arguments", func() translate.StreamTranslator { return NewStreamFromChat("m") },
			cat(toolArgChunks(0, "a", "f", `{"x":1}`, 3), toolArgChunks(1, "b", "g", `{}`, 10),
				deltaChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"late"}}]}`)), "stream_protocol_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.tr()
			var out []byte
			var err error
			for _, e := range sseInput(tc.in...) {
				if out, err = tr.Event(out, e); err != nil {
					break
				}
			}
			var ue *UpstreamStreamError
			if !errors.As(err, &ue) {
				t.Fatalf("want *UpstreamStreamError, got %v", err)
			}
			if ue.Code != tc.wantCode || ue.Message == "" {
				t.Fatalf("code %q message %q, want code %q", ue.Code, ue.Message, tc.wantCode)
			}
			if tr.Complete() {
				t.Fatal("Complete() after an upstream error")
			}
			end := tr.End(nil)
			for _, e := range parseOut(t, append(out, end...)) {
				if e.Event == "message_stop" || e.Data == "[DONE]" || strings.Contains(e.Data, `"finish_reason":"`) {
					t.Fatalf("an errored stream was ended normally: %s", append(out, end...))
				}
			}
			// Later events are ignored.
			more, err := tr.Event(nil, sse.Event{Data: []byte("[DONE]")})
			if len(more) != 0 || err != nil {
				t.Fatalf("event after error produced %q, %v", more, err)
			}
		})
	}
}

// TestStreamEndOnce: End writes the closing frames once, and only if the
// translator has not already.
func TestStreamEndOnce(t *testing.T) {
	tr := NewStreamFromChat("m")
	out, _ := runStream(t, tr, sseInput(deltaChunk(`{"content":"x"}`), finishChunk("stop")))
	if n := strings.Count(string(out), "event: message_stop"); n != 1 {
		t.Fatalf("message_stop %d times", n)
	}
	if more := tr.End(nil); len(more) != 0 {
		t.Fatalf("second End wrote %q", more)
	}
	tr = NewStreamFromChat("m")
	out, _ = runStream(t, tr, sseInput(deltaChunk(`{"content":"x"}`), finishChunk("stop"), "[DONE]"))
	if n := strings.Count(string(out), "event: message_stop"); n != 1 {
		t.Fatalf("message_stop %d times after [DONE]+End", n)
	}
	to := NewStreamToChat("m")
	out, _ = runStream(t, to, sseInput(antEv("message_start", antStart), antMsgDelta("end_turn", 1), antEv("message_stop", antStop)))
	if n := strings.Count(string(out), "[DONE]"); n != 1 || len(to.End(nil)) != 0 {
		t.Fatalf("[DONE] %d times", n)
	}
	// Incomplete streams never get closing frames from End.
	for _, tr := range []translate.StreamTranslator{NewStreamFromChat("m"), NewStreamToChat("m")} {
		if out := tr.End(nil); len(out) != 0 {
			t.Fatalf("End on an incomplete stream wrote %q", out)
		}
	}
}

// TestStreamArgumentSplitInvariance: however the upstream cuts the arguments,
// the client reassembles the same string, in both directions.
func TestStreamArgumentSplitInvariance(t *testing.T) {
	args := `{"path":"/tmp/ä b.txt","content":"line1\nline2\t\"q\"","n":[1,2.5,null,true]}`
	for piece := 1; piece <= len(args); piece++ {
		from := NewStreamFromChat("m")
		out, err := runStream(t, from, sseInput(cat(toolArgChunks(0, "call_1", "Write", args, piece), finishChunk("tool_calls"), "[DONE]")...))
		if err != nil {
			t.Fatal(err)
		}
		if got := summarizeAnthropic(t, parseOut(t, out)).tools(); len(got) != 1 || got[0].Args != args || got[0].ID != "call_1" {
			t.Fatalf("piece %d: %+v", piece, got)
		}
		to := NewStreamToChat("m")
		out, err = runStream(t, to, sseInput(cat(antEv("message_start", antStart), antToolBlock(0, "toolu_1", "Write", args, piece), antMsgDelta("tool_use", 1), antEv("message_stop", antStop))...))
		if err != nil {
			t.Fatal(err)
		}
		if got := summarizeChat(t, parseOut(t, out)).Tools; len(got) != 1 || got[0].Args != args || got[0].ID != "toolu_1" {
			t.Fatalf("piece %d: %+v", piece, got)
		}
	}
}

// TestStreamRoundTrip: Chat → Anthropic → Chat and Anthropic → Chat →
// Anthropic keep text, reasoning, tool calls with ids, stop reason and usage.
func TestStreamRoundTrip(t *testing.T) {
	t.Run("chat-anthropic-chat", func(t *testing.T) {
		in := cat(deltaChunk(`{"role":"assistant","content":"","reasoning_content":"plan"}`), deltaChunk(`{"content":"Two calls."}`),
			toolArgChunks(0, "call_A", "f", `{"a":"x"}`, 2), toolArgChunks(1, "call_B", "g", `{"b":[1]}`, 3),
			finishChunk("tool_calls"), chatUsageChunk, "[DONE]")
		direct := summarizeChat(t, parseOut(t, mustJoin(t, in)))
		from := NewStreamFromChat("m")
		mid, err := runStream(t, from, sseInput(in...))
		if err != nil {
			t.Fatal(err)
		}
		to := NewStreamToChat("m")
		var p sse.Parser
		var out []byte
		var perr error
		_ = p.Feed(mid, func(e sse.Event) bool { out, perr = to.Event(out, e); return perr == nil })
		if perr != nil || !to.Complete() {
			t.Fatalf("err %v complete %v", perr, to.Complete())
		}
		got := summarizeChat(t, parseOut(t, out))
		got.ID, direct.ID = "", ""
		if got.Content != direct.Content || got.Reasoning != direct.Reasoning || !reflect.DeepEqual(got.Tools, direct.Tools) || got.Finish != direct.Finish || got.Model != direct.Model {
			t.Fatalf("round trip:\n got  %+v\n want %+v", got, direct)
		}
		want := from.Usage()
		want.ReasoningTokens = 0 // Anthropic's wire has no reasoning count
		if want != to.Usage() {
			t.Fatalf("usage %+v → %+v", from.Usage(), to.Usage())
		}
		if !sameJSON(t, got.Usage, `{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":100}}`) {
			t.Fatalf("usage chunk %s", got.Usage)
		}
	})
	t.Run("anthropic-chat-anthropic", func(t *testing.T) {
		in := cat(antEv("message_start", antStart), antBlockStart(0, `{"type":"thinking","thinking":"","signature":""}`), antDelta(0, `{"type":"thinking_delta","thinking":"hm"}`), antBlockStop(0),
			antBlockStart(1, `{"type":"text","text":""}`), antDelta(1, `{"type":"text_delta","text":"Go"}`), antBlockStop(1),
			antToolBlock(2, "toolu_X", "f", `{"q":"1"}`, 2), antToolBlock(3, "toolu_Y", "g", `{}`, 1),
			antMsgDelta("tool_use", 77), antEv("message_stop", antStop))
		to := NewStreamToChat("m")
		mid, err := runStream(t, to, sseInput(in...))
		if err != nil {
			t.Fatal(err)
		}
		from := NewStreamFromChat("m")
		var p sse.Parser
		var out []byte
		var perr error
		_ = p.Feed(mid, func(e sse.Event) bool { out, perr = from.Event(out, e); return perr == nil })
		if perr != nil || !from.Complete() {
			t.Fatalf("err %v complete %v", perr, from.Complete())
		}
		out = from.End(out)
		got := summarizeAnthropic(t, parseOut(t, out))
		want := summarizeAnthropic(t, parseOut(t, mustJoinNamed(t, in)))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip:\n got  %+v\n want %+v", got, want)
		}
		if to.Usage() != from.Usage() {
			t.Fatalf("usage %+v → %+v", to.Usage(), from.Usage())
		}
	})
}

// mustJoin renders unnamed events as SSE bytes.
func mustJoin(t *testing.T, data []string) []byte {
	t.Helper()
	var out []byte
	for _, d := range data {
		if strings.HasPrefix(d, ":") {
			continue
		}
		out = sse.Append(out, "", []byte(d))
	}
	return out
}

// mustJoinNamed renders "event\tdata" lines as SSE bytes, dropping pings.
func mustJoinNamed(t *testing.T, lines []string) []byte {
	t.Helper()
	var out []byte
	for _, e := range sseInput(lines...) {
		if e.Event != "ping" {
			out = sse.Append(out, e.Event, e.Data)
		}
	}
	return out
}
