package gemini

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/sse"
)

var geminiSeeds = []string{
	`{}`, `[]`, `null`, `1`, `"x"`,
	`{"contents":null,"tools":null,"systemInstruction":null,"generationConfig":null}`,
	`{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"AA"}}]},
		{"role":"model","parts":[{"text":"t","thought":true},{"functionCall":{"id":"a","name":"f","args":{"x":1}},"thoughtSignature":"s"},{"functionCall":{"name":"g"}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"g","response":{"output":"o"}}},{"functionResponse":{"id":"a","name":"f","response":{"error":"e"}}}]}],
		"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"INTEGER","nullable":true}}}}]},{"googleSearch":{}}],
		"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}},
		"generationConfig":{"temperature":1,"maxOutputTokens":"10","responseMimeType":"application/json","responseSchema":{"type":"ARRAY"},"thinkingConfig":{"thinkingBudget":-1}}}`,
	`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[]}}]}]}`,
	`{"contents":[[[[[[[[[[]]]]]]]]]]}`,
}

var chatSeeds = []string{
	`{}`, `{"messages":[]}`,
	`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}},{"type":"image_url","image_url":"https://x/y.gif"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"gcall_0_1","function":{"name":"g","arguments":"[1]"},"extra_content":{"google":{"thought_signature":"S"}}}]},
		{"role":"tool","tool_call_id":"call_1","content":"ok"},{"role":"tool","tool_call_id":"gcall_0_1","content":"{\"x\":1}"},{"role":"user","content":"next"}],
		"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","$schema":"x","properties":{"a":{"type":["integer","null"]}},"additionalProperties":false}}}],
		"tool_choice":"required","reasoning_effort":"high","max_tokens":100,"stop":["a"],"response_format":{"type":"json_schema","json_schema":{"schema":{"oneOf":[{"const":"x"}]}}}}`,
	`{"messages":[{"role":"tool","tool_call_id":"x","content":"y"}]}`,
	`{"messages":[{"role":"assistant","tool_calls":[{"id":null,"function":{"name":"f","arguments":{"a":1}}}]}]}`,
}

// ids lists, in order, the function call ids of model turns and the
// function response ids of user turns of a Gemini body.
func geminiIDs(root gjson.Result) (calls, responses int) {
	each(root.Get("contents"), func(_ int, c gjson.Result) bool {
		each(c.Get("parts"), func(_ int, p gjson.Result) bool {
			if pick(p, "functionCall", "function_call").IsObject() {
				calls++
			}
			if pick(p, "functionResponse", "function_response").IsObject() {
				responses++
			}
			return true
		})
		return true
	})
	return calls, responses
}

func mustInputError(t *testing.T, err error) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error of type %T: %v", err, err)
	}
}

func FuzzRequestToChat(f *testing.F) {
	for _, s := range geminiSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := RequestToChat(body, "m", true)
		_, _ = CountTokens(body)
		if err != nil {
			mustInputError(t, err)
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON output %q for %q", out, body)
		}
		// Every function call and response keeps a non-empty id.
		calls, responses := geminiIDs(gjson.ParseBytes(body))
		var outCalls, outResponses int
		each(gjson.GetBytes(out, "messages"), func(_ int, m gjson.Result) bool {
			each(m.Get("tool_calls"), func(_ int, c gjson.Result) bool {
				if c.Get("id").String() == "" {
					t.Fatalf("a tool call without id: %s", out)
				}
				outCalls++
				return true
			})
			if m.Get("role").String() == "tool" {
				if m.Get("tool_call_id").String() == "" {
					t.Fatalf("a tool message without id: %s", out)
				}
				outResponses++
			}
			return true
		})
		if calls != outCalls || responses != outResponses {
			t.Fatalf("calls %d→%d, responses %d→%d", calls, outCalls, responses, outResponses)
		}
		// What came out goes back to Gemini without an unexpected error type.
		if back, err := RequestFromChat(out); err != nil {
			mustInputError(t, err)
		} else if !gjson.ValidBytes(back) {
			t.Fatalf("invalid JSON %q", back)
		}
	})
}

func FuzzRequestFromChat(f *testing.F) {
	for _, s := range chatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := RequestFromChat(body)
		if err != nil {
			mustInputError(t, err)
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON output %q for %q", out, body)
		}
		if bytes.Contains(out, []byte(`"id":"`+syntheticIDPrefix)) {
			t.Fatalf("a made-up id reached Gemini: %s", out)
		}
		if _, err := RequestToChat(out, "m", false); err != nil {
			mustInputError(t, err)
		}
	})
}

func FuzzResponse(f *testing.F) {
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"a","thought":true},{"functionCall":{"name":"f","args":{}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":"3"}}`))
	f.Add([]byte(`{"choices":[{"message":{"content":"x","tool_calls":[{"function":{"name":"f","arguments":"1"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`))
	f.Add([]byte(`{"promptFeedback":{"blockReason":"OTHER"}}`))
	f.Add([]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fn := range []func([]byte) ([]byte, error){
			func(b []byte) ([]byte, error) { return ResponseToChat(b, "m") },
			ResponseFromChat,
		} {
			out, err := fn(body)
			if err != nil {
				mustInputError(t, err)
				continue
			}
			if !gjson.ValidBytes(out) {
				t.Fatalf("invalid JSON output %q for %q", out, body)
			}
		}
		if e, ok := ParseError(body); ok && (e.RetryDelay < 0 || e.RetryDelay > maxRetryDelay) {
			t.Fatalf("retry delay %v", e.RetryDelay)
		}
		_, _ = ParseCountTokens(body)
	})
}

// checkSSE asserts every data event of out is valid JSON (or [DONE]).
func checkSSE(t *testing.T, out []byte) {
	t.Helper()
	var p sse.Parser
	check := func(ev sse.Event) bool {
		if ev.Comment || ev.IsDone() {
			return true
		}
		if !gjson.ValidBytes(ev.Data) {
			t.Fatalf("invalid event data %q in\n%s", ev.Data, out)
		}
		return true
	}
	if err := p.Feed(out, check); err != nil {
		t.Fatal(err)
	}
	p.Flush(check)
}

func FuzzStreamToChat(f *testing.F) {
	for _, name := range []string{"gemini_text_thinking.sse", "gemini_tools.sse", "gemini_blocked.sse", "gemini_error.sse", "gemini_safety.sse"} {
		b, err := readFixture(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		tr := NewStreamToChat("m")
		var p sse.Parser
		var out []byte
		var err error
		feed := func(ev sse.Event) bool {
			out, err = tr.Event(out, ev)
			return err == nil
		}
		if p.Feed(wire, feed) != nil {
			return
		}
		if err == nil {
			p.Flush(feed)
		}
		if err != nil {
			var ue *UpstreamStreamError
			if !errors.As(err, &ue) || tr.Complete() {
				t.Fatalf("error %T %v, complete %v", err, err, tr.Complete())
			}
		}
		out = tr.End(out)
		checkSSE(t, out)
		u := tr.Usage()
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens > u.InputTokens || u.ReasoningTokens > u.OutputTokens {
			t.Fatalf("usage %+v", u)
		}
	})
}

func FuzzStreamFromChat(f *testing.F) {
	for _, name := range []string{"chat_tools.sse", "chat_text.sse"} {
		b, err := readFixture(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, wire []byte, array bool) {
		framing := FramingSSE
		if array {
			framing = FramingJSONArray
		}
		tr := NewStreamFromChat("m", framing)
		var p sse.Parser
		var out []byte
		var err error
		feed := func(ev sse.Event) bool {
			out, err = tr.Event(out, ev)
			return err == nil
		}
		if p.Feed(wire, feed) != nil {
			return
		}
		if err == nil {
			p.Flush(feed)
		}
		if err != nil {
			var ue *UpstreamStreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error %T %v", err, err)
			}
		}
		if tr.Complete() {
			out = tr.End(out)
		} else {
			out = tr.(ErrorWriter).AppendError(out, 502, "", "cut")
		}
		if array {
			if !gjson.ValidBytes(out) || !gjson.ParseBytes(out).IsArray() {
				t.Fatalf("not one JSON array: %q", out)
			}
			return
		}
		checkSSE(t, out)
	})
}
