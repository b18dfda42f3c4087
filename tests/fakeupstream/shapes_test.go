package fakeupstream

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// spec describes a request body for the shape tests.
type spec struct {
	tools     bool   // offer two tools, get_weather first
	badTools  bool   // offer a tool in the other format's shape
	result    string // end with a tool result with this content
	parts     bool   // give the tool result as text parts (even when empty)
	reasoning string // OpenAI reasoning_effort / Anthropic thinking.type; "null": JSON null
	usage     bool   // OpenAI stream_options.include_usage
}

// shapeBody renders s as a request body in format.
func shapeBody(t *testing.T, format Format, stream bool, s spec) string {
	t.Helper()
	req := map[string]any{"model": "model-s", "stream": stream, "max_tokens": 64}
	msgs := []any{map[string]any{"role": "user", "content": "weather in Paris?"}}
	var content any = s.result
	if s.parts {
		half := len(s.result) / 2
		content = []any{map[string]any{"type": "text", "text": s.result[:half]}, map[string]any{"type": "text", "text": s.result[half:]}}
	}
	if format == FormatAnthropic {
		if s.tools {
			req["tools"] = []any{map[string]any{"name": "get_weather", "input_schema": map[string]any{}}, map[string]any{"name": "other"}}
		}
		if s.badTools {
			req["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}}
		}
		if s.result != "" || s.parts {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": ToolCallIDAnthropic, "name": "get_weather", "input": map[string]any{}}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": ToolCallIDAnthropic, "content": content}}})
		}
		switch s.reasoning {
		case "":
		case "null":
			req["thinking"] = nil
		default:
			req["thinking"] = map[string]any{"type": s.reasoning, "budget_tokens": 1024}
		}
	} else {
		if s.tools {
			req["tools"] = []any{
				map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{}}},
				map[string]any{"type": "function", "function": map[string]any{"name": "other"}}}
		}
		if s.badTools {
			req["tools"] = []any{map[string]any{"name": "get_weather", "input_schema": map[string]any{}}}
		}
		if s.result != "" || s.parts {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": ToolCallIDOpenAI, "type": "function",
					"function": map[string]any{"name": "get_weather", "arguments": ToolArguments}}}},
				map[string]any{"role": "tool", "tool_call_id": ToolCallIDOpenAI, "content": content})
		}
		switch s.reasoning {
		case "":
		case "null":
			req["reasoning_effort"] = nil
		default:
			req["reasoning_effort"] = s.reasoning
		}
		if s.usage {
			req["stream_options"] = map[string]any{"include_usage": true}
		}
	}
	req["messages"] = msgs
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnswerShapesJSON(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		format Format
		spec   spec
		status int
		want   map[string]string // gjson path -> raw JSON
	}{
		{"openai plain", FormatOpenAI, spec{}, 200, map[string]string{
			"choices.0.message.content": `"Hello from k"`, "choices.0.finish_reason": `"stop"`,
			"choices.0.message.reasoning_content": ``, "choices.0.message.tool_calls": ``, "usage.completion_tokens": `5`}},
		{"openai tool call", FormatOpenAI, spec{tools: true}, 200, map[string]string{
			"choices.0.message.content": `null`, "choices.0.finish_reason": `"tool_calls"`,
			"choices.0.message.tool_calls.#": `1`, "choices.0.message.tool_calls.0.id": `"call_fake_1"`,
			"choices.0.message.tool_calls.0.type": `"function"`, "choices.0.message.tool_calls.0.function.name": `"get_weather"`,
			"choices.0.message.tool_calls.0.function.arguments": `"{\"city\":\"Paris\"}"`, "choices.0.message.tool_calls.0.index": ``}},
		{"openai tool result", FormatOpenAI, spec{tools: true, result: "18C sunny"}, 200, map[string]string{
			"choices.0.message.content": `"Tool said: 18C sunny"`, "choices.0.finish_reason": `"stop"`, "choices.0.message.tool_calls": ``}},
		{"openai tool result parts", FormatOpenAI, spec{result: "18C sunny", parts: true}, 200, map[string]string{
			"choices.0.message.content": `"Tool said: 18C sunny"`}},
		{"openai empty tool result", FormatOpenAI, spec{tools: true, result: "", parts: true}, 200, map[string]string{
			"choices.0.message.content": `"Tool said: "`, "choices.0.message.tool_calls": ``}},
		{"openai reasoning", FormatOpenAI, spec{reasoning: "high"}, 200, map[string]string{
			"choices.0.message.reasoning_content": `"Let me think about this step by step."`, "choices.0.message.content": `"Hello from k"`,
			"usage.completion_tokens": `10`, "usage.completion_tokens_details.reasoning_tokens": `5`, "usage.total_tokens": `20`}},
		{"openai reasoning with tools", FormatOpenAI, spec{reasoning: "low", tools: true}, 200, map[string]string{
			"choices.0.message.reasoning_content": `"Let me think about this step by step."`, "choices.0.finish_reason": `"tool_calls"`}},
		{"openai null reasoning_effort", FormatOpenAI, spec{reasoning: "null"}, 200, map[string]string{
			"choices.0.message.reasoning_content": ``, "usage.completion_tokens_details": ``}},
		{"openai anthropic-shaped tools", FormatOpenAI, spec{badTools: true}, 400, nil},
		{"anthropic plain", FormatAnthropic, spec{}, 200, map[string]string{
			"content.#": `1`, "content.0.type": `"text"`, "content.0.text": `"Hello from k"`, "stop_reason": `"end_turn"`,
			"usage.input_tokens": `10`, "usage.output_tokens": `5`}},
		{"anthropic tool call", FormatAnthropic, spec{tools: true}, 200, map[string]string{
			"content.#": `1`, "content.0.type": `"tool_use"`, "content.0.id": `"toolu_fake_1"`, "content.0.name": `"get_weather"`,
			"content.0.input": `{"city":"Paris"}`, "stop_reason": `"tool_use"`}},
		{"anthropic tool result", FormatAnthropic, spec{tools: true, result: "18C sunny"}, 200, map[string]string{
			"content.0.type": `"text"`, "content.0.text": `"Tool said: 18C sunny"`, "stop_reason": `"end_turn"`}},
		{"anthropic tool result blocks", FormatAnthropic, spec{result: "18C sunny", parts: true}, 200, map[string]string{
			"content.0.text": `"Tool said: 18C sunny"`}},
		{"anthropic thinking", FormatAnthropic, spec{reasoning: "enabled"}, 200, map[string]string{
			"content.#": `2`, "content.0.type": `"thinking"`, "content.0.thinking": `"Let me think about this step by step."`,
			"content.0.signature": `"fakesig=="`, "content.1.type": `"text"`, "content.1.text": `"Hello from k"`, "usage.output_tokens": `10`}},
		{"anthropic thinking with tools", FormatAnthropic, spec{reasoning: "enabled", tools: true}, 200, map[string]string{
			"content.#": `2`, "content.0.type": `"thinking"`, "content.1.type": `"tool_use"`, "stop_reason": `"tool_use"`}},
		{"anthropic thinking disabled", FormatAnthropic, spec{reasoning: "disabled"}, 200, map[string]string{
			"content.#": `1`, "content.0.type": `"text"`}},
		{"anthropic openai-shaped tools", FormatAnthropic, spec{badTools: true}, 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // second time from the cache
				resp, body := f.do(t, call{format: tc.format, key: "k", raw: shapeBody(t, tc.format, false, tc.spec)})
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
				}
				if tc.status == http.StatusBadRequest {
					want := OpenAIMissingToolNameBody
					if tc.format == FormatAnthropic {
						want = AnthropicMissingToolNameBody
					}
					if string(body) != want {
						t.Errorf("body %s, want %s", body, want)
					}
					continue
				}
				if !gjson.ValidBytes(body) || gjson.GetBytes(body, "model").String() != "model-s" {
					t.Fatalf("bad body %s", body)
				}
				for path, want := range tc.want {
					if got := gjson.GetBytes(body, path).Raw; got != want {
						t.Errorf("%s = %s, want %s (body %s)", path, got, want, body)
					}
				}
			}
		})
	}
}

func TestAnswerShapesStream(t *testing.T) {
	const n = 3
	oaHead := "role"
	anHead := func(typ string) []string { return seq("message_start", "start:"+typ+"@0", "ping") }
	tests := []struct {
		name      string
		format    Format
		spec      spec
		want      []string
		reasoning string
		content   string
		args      string
		events    int // content events, the output tokens
	}{
		{"openai plain", FormatOpenAI, spec{}, seq(oaHead, times("content", n), "finish:stop", "[DONE]"),
			"", "Hello from k", "", n},
		{"openai usage", FormatOpenAI, spec{usage: true}, seq(oaHead, times("content", n), "finish:stop", "usage", "[DONE]"),
			"", "Hello from k", "", n},
		{"openai tool call", FormatOpenAI, spec{tools: true}, seq(oaHead, "tool_header:get_weather", times("args", n), "finish:tool_calls", "[DONE]"),
			"", "", ToolArguments, n},
		{"openai reasoning", FormatOpenAI, spec{reasoning: "medium"}, seq(oaHead, times("reasoning", n), times("content", n), "finish:stop", "[DONE]"),
			ReasoningText, "Hello from k", "", 2 * n},
		{"openai reasoning tool call usage", FormatOpenAI, spec{reasoning: "medium", tools: true, usage: true},
			seq(oaHead, times("reasoning", n), "tool_header:get_weather", times("args", n), "finish:tool_calls", "usage", "[DONE]"),
			ReasoningText, "", ToolArguments, 2 * n},
		{"openai tool result", FormatOpenAI, spec{tools: true, result: "18C sunny"}, seq(oaHead, times("content", n), "finish:stop", "[DONE]"),
			"", "Tool said: 18C sunny", "", n},
		{"anthropic plain", FormatAnthropic, spec{}, seq(anHead("text"), times("text_delta@0", n), "stop@0", "message_delta:end_turn", "message_stop"),
			"", "Hello from k", "", n},
		{"anthropic tool call", FormatAnthropic, spec{tools: true},
			seq(anHead("tool_use"), times("input_json_delta@0", n), "stop@0", "message_delta:tool_use", "message_stop"),
			"", "", ToolArguments, n},
		{"anthropic thinking", FormatAnthropic, spec{reasoning: "enabled"},
			seq(anHead("thinking"), times("thinking_delta@0", n), "signature_delta@0", "stop@0", "start:text@1", times("text_delta@1", n),
				"stop@1", "message_delta:end_turn", "message_stop"),
			ReasoningText, "Hello from k", "", 2 * n},
		{"anthropic thinking tool call", FormatAnthropic, spec{reasoning: "enabled", tools: true},
			seq(anHead("thinking"), times("thinking_delta@0", n), "signature_delta@0", "stop@0", "start:tool_use@1", times("input_json_delta@1", n),
				"stop@1", "message_delta:tool_use", "message_stop"),
			ReasoningText, "", ToolArguments, 2 * n},
		{"anthropic tool result", FormatAnthropic, spec{tools: true, result: "18C sunny"},
			seq(anHead("text"), times("text_delta@0", n), "stop@0", "message_delta:end_turn", "message_stop"),
			"", "Tool said: 18C sunny", "", n},
	}
	f := newFixture(t)
	f.u.SetStreamChunks(n)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, call{format: tc.format, key: "k", raw: shapeBody(t, tc.format, true, tc.spec)})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			frames, err := readFrames(strings.NewReader(string(body)))
			if err != nil {
				t.Fatalf("framing: %v in %q", err, body)
			}
			if got := describeAll(tc.format, frames); !slices.Equal(got, tc.want) {
				t.Fatalf("events\n got %v\nwant %v", got, tc.want)
			}
			for kind, want := range map[string]string{"reasoning": tc.reasoning, "content": tc.content, "args": tc.args} {
				if got := joined(tc.format, frames, kind); got != want {
					t.Errorf("%s %q, want %q", kind, got, want)
				}
			}
			if tc.format == FormatAnthropic {
				checkAnthropicShape(t, frames, tc.events)
			} else {
				checkOpenAIShape(t, frames, tc.spec.usage, tc.events)
			}
		})
	}
}

// checkAnthropicShape checks usage, the event/type agreement and the tool and
// thinking block headers of an Anthropic stream.
func checkAnthropicShape(t *testing.T, frames []frame, events int) {
	t.Helper()
	for _, f := range frames {
		if typ := gjson.Get(f.data, "type").String(); typ != f.event {
			t.Errorf("event %q carries type %q", f.event, typ)
		}
		switch describe(FormatAnthropic, f) {
		case "message_start":
			if gjson.Get(f.data, "message.usage.input_tokens").Int() != fakePromptTokens {
				t.Errorf("message_start %s", f.data)
			}
		case "message_delta:end_turn", "message_delta:tool_use":
			if u := gjson.Get(f.data, "usage"); u.Raw != `{"output_tokens":`+strconv.Itoa(events)+`}` {
				t.Errorf("message_delta %s, want %d output tokens", f.data, events)
			}
		case "start:tool_use@0", "start:tool_use@1":
			cb := gjson.Get(f.data, "content_block")
			if cb.Get("id").String() != ToolCallIDAnthropic || cb.Get("name").String() != "get_weather" || cb.Get("input").Raw != "{}" {
				t.Errorf("tool_use start %s", f.data)
			}
		case "signature_delta@0":
			if gjson.Get(f.data, "delta.signature").String() != ThinkingSignature {
				t.Errorf("signature %s", f.data)
			}
		}
	}
}

// checkOpenAIShape checks the usage rule and the tool call header of an
// OpenAI stream.
func checkOpenAIShape(t *testing.T, frames []frame, usage bool, events int) {
	t.Helper()
	for _, f := range frames {
		if f.data == "[DONE]" {
			continue
		}
		u := gjson.Get(f.data, "usage")
		switch d := describe(FormatOpenAI, f); {
		case d == "usage":
			if u.Get("completion_tokens").Int() != int64(events) || u.Get("prompt_tokens").Int() != fakePromptTokens {
				t.Errorf("usage chunk %s, want %d completion tokens", f.data, events)
			}
		case usage && u.Raw != "null":
			t.Errorf("with include_usage every other chunk has usage null: %s", f.data)
		case !usage && u.Exists():
			t.Errorf("usage without include_usage: %s", f.data)
		case strings.HasPrefix(d, "tool_header:"):
			tc := gjson.Get(f.data, "choices.0.delta.tool_calls.0")
			if tc.Get("index").Raw != "0" || tc.Get("id").String() != ToolCallIDOpenAI || tc.Get("type").String() != "function" ||
				tc.Get("function.arguments").Raw != `""` {
				t.Errorf("tool header %s", f.data)
			}
		case d == "args":
			if gjson.Get(f.data, "choices.0.delta.tool_calls.0.index").Raw != "0" {
				t.Errorf("args without index %s", f.data)
			}
		}
	}
}

func TestLastPathAndModel(t *testing.T) {
	f := newFixture(t)
	f.do(t, call{format: FormatOpenAI, key: "oa", model: "gpt-x"})
	f.do(t, call{format: FormatAnthropic, key: "an", model: "claude-x"})
	f.do(t, call{format: FormatAnthropic, key: "both", model: "claude-y"})
	f.do(t, call{format: FormatOpenAI, key: "both", model: "gpt-y"}) // the last one wins
	f.do(t, call{format: FormatOpenAI, key: "bad", raw: `{"model":`})
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.base+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer lister")
	if resp, err := f.client.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	rc := Remote{BaseURL: f.base, Client: f.client}
	tests := []struct {
		key, path, model string
	}{
		{"oa", "/v1/chat/completions", "gpt-x"},
		{"an", "/v1/messages", "claude-x"},
		{"both", "/v1/chat/completions", "gpt-y"},
		{"bad", "/v1/chat/completions", ""},
		{"lister", "/v1/models", ""},
		{"never", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			if got := f.u.LastPath(tc.key); got != tc.path {
				t.Errorf("LastPath %q, want %q", got, tc.path)
			}
			if got := f.u.LastModel(tc.key); got != tc.model {
				t.Errorf("LastModel %q, want %q", got, tc.model)
			}
			info, err := rc.LastRequest(testCtx(t), tc.key)
			if tc.path == "" {
				if err == nil {
					t.Errorf("remote last for an unseen key: %+v", info)
				}
				return
			}
			if err != nil || info.Path != tc.path || info.Model != tc.model {
				t.Errorf("remote last %+v %v, want path %q model %q", info, err, tc.path, tc.model)
			}
		})
	}
	f.u.Reset()
	if f.u.LastPath("oa") != "" || f.u.LastModel("oa") != "" {
		t.Error("Reset kept the last request")
	}
}

// TestScriptedToolCalls: a scripted tool offered anywhere in the list is
// called with its scripted arguments, in both formats and over the control
// API; unscripted requests keep calling the first tool with ToolArguments.
func TestScriptedToolCalls(t *testing.T) {
	f := newFixture(t)
	const oaTools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{}}},{"type":"function","function":{"name":"Bash","parameters":{}}}]`
	const anTools = `"tools":[{"name":"get_weather","input_schema":{}},{"name":"Bash","input_schema":{}}]`
	oa := call{format: FormatOpenAI, key: "k", raw: `{"model":"m","messages":[{"role":"user","content":"hi"}],` + oaTools + `}`}
	an := call{format: FormatAnthropic, key: "k", raw: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}],` + anTools + `}`}
	check := func(t *testing.T, wantName, wantArgs string) {
		t.Helper()
		_, body := f.do(t, oa)
		if n, a := gjson.GetBytes(body, "choices.0.message.tool_calls.0.function.name").String(), gjson.GetBytes(body, "choices.0.message.tool_calls.0.function.arguments").String(); n != wantName || a != wantArgs {
			t.Errorf("openai: called %q with %q, want %q with %q", n, a, wantName, wantArgs)
		}
		_, body = f.do(t, an)
		if n, a := gjson.GetBytes(body, "content.0.name").String(), gjson.GetBytes(body, "content.0.input").Raw; n != wantName || a != wantArgs {
			t.Errorf("anthropic: called %q with %s, want %q with %s", n, a, wantName, wantArgs)
		}
	}
	check(t, "get_weather", ToolArguments)
	f.u.SetToolCalls(map[string]string{"Bash": `{"command":"echo ok"}`, "absent": `{}`})
	check(t, "Bash", `{"command":"echo ok"}`)
	f.u.SetToolCalls(nil)
	check(t, "get_weather", ToolArguments)

	resp, err := f.client.Post(f.base+"/_fake/config", "application/json", strings.NewReader(`{"toolCalls":{"Bash":"{\"command\":\"ls\"}"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	check(t, "Bash", `{"command":"ls"}`)
	f.u.Reset()
	check(t, "get_weather", ToolArguments)
}
