package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/sse"
	"omniroute/tests/fakeupstream"
)

type sseEvent struct {
	event string
	data  string
}

func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var p sse.Parser
	var out []sseEvent
	emit := func(e sse.Event) bool {
		if !e.Comment {
			out = append(out, sseEvent{e.Event, string(e.Data)})
		}
		return true
	}
	if err := p.Feed(body, emit); err != nil {
		t.Fatal(err)
	}
	p.Flush(emit)
	return out
}

func (e *env) addAnthropicConn(name, upstreamKey string, priority int) string {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "anthropic-compatible", "name": name,
		"apiKey": upstreamKey, "baseUrl": e.upURL, "priority": priority, "models": []string{"claude-sonnet-4-5"}, "verify": false})
	if code != http.StatusCreated {
		e.t.Fatalf("create connection: %d %v", code, m)
	}
	return m["connection"].(map[string]any)["id"].(string)
}

func (e *env) post(path string, body any, hdr map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	h := map[string]string{"x-api-key": e.key, "anthropic-version": "2023-06-01"}
	for k, v := range hdr {
		h[k] = v
	}
	return e.do("POST", path, body, h)
}

var weatherTool = map[string]any{"name": "get_weather", "description": "Weather for a city",
	"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}

// TestClaudeCodeThroughOpenAIUpstream: an Anthropic Messages client (Claude
// Code) streams a tool-using turn through an OpenAI-format upstream and back.
func TestClaudeCodeThroughOpenAIUpstream(t *testing.T) {
	e := newEnv(t)
	e.addConn("openai", "key-a", 1)
	req := map[string]any{"model": "openai-compatible/gpt-4o-mini", "max_tokens": 256, "stream": true,
		"system": "You are terse.", "tools": []any{weatherTool},
		"messages": []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}}
	resp, body := e.post("/v1/messages", req, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if e.up.LastPath("key-a") != "/v1/chat/completions" {
		t.Fatalf("upstream path %q", e.up.LastPath("key-a"))
	}
	_, sent := e.up.LastRequest("key-a")
	if gjson.GetBytes(sent, "messages.0.role").String() != "system" || gjson.GetBytes(sent, "tools.0.function.name").String() != "get_weather" {
		t.Fatalf("upstream body not translated: %s", sent)
	}
	events := parseSSE(t, body)
	var types []string
	var args strings.Builder
	var toolID, stop string
	for _, ev := range events {
		types = append(types, ev.event)
		d := gjson.Parse(ev.data)
		switch ev.event {
		case "content_block_start":
			if d.Get("content_block.type").String() == "tool_use" {
				toolID = d.Get("content_block.id").String()
			}
		case "content_block_delta":
			args.WriteString(d.Get("delta.partial_json").String())
		case "message_delta":
			stop = d.Get("delta.stop_reason").String()
		}
	}
	if types[0] != "message_start" || types[len(types)-1] != "message_stop" {
		t.Fatalf("event order %v", types)
	}
	if toolID != "call_fake_1" || args.String() != `{"city":"Paris"}` || stop != "tool_use" {
		t.Fatalf("tool call id=%q args=%q stop=%q", toolID, args.String(), stop)
	}

	// Second turn: the tool result goes back with its id one-to-one.
	req["messages"] = []any{
		map[string]any{"role": "user", "content": "Weather in Paris?"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": toolID, "name": "get_weather", "input": map[string]any{"city": "Paris"}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": toolID, "content": "sunny"}}},
	}
	req["stream"] = false
	resp, body = e.post("/v1/messages", req, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	_, sent = e.up.LastRequest("key-a")
	if gjson.GetBytes(sent, `messages.#(role=="tool").tool_call_id`).String() != toolID {
		t.Fatalf("tool result id lost: %s", sent)
	}
	if gjson.GetBytes(body, "type").String() != "message" || !strings.Contains(gjson.GetBytes(body, "content.0.text").String(), "Tool said: sunny") {
		t.Fatalf("answer %s", body)
	}
	if gjson.GetBytes(body, "usage.input_tokens").Int() == 0 {
		t.Fatalf("usage lost: %s", body)
	}
}

// TestOpenAIClientThroughAnthropicUpstream: the other direction, streaming;
// usage only for a client that asks for it (stream_options.include_usage),
// never for one that did not (issue 41, M1) — the request log counts it all
// the same.
func TestOpenAIClientThroughAnthropicUpstream(t *testing.T) {
	e := newEnv(t)
	e.addAnthropicConn("claude", "key-c", 1)
	_, unasked := e.chat("anthropic-compatible/claude-sonnet-4-5", true, nil)
	if strings.Contains(string(unasked), `"usage"`) || !strings.Contains(string(unasked), "[DONE]") {
		t.Fatalf("a client that did not ask for usage got it (or no [DONE]): %s", unasked)
	}
	resp, body := e.do("POST", "/v1/chat/completions", map[string]any{"model": "anthropic-compatible/claude-sonnet-4-5", "stream": true,
		"stream_options": map[string]any{"include_usage": true}, "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if e.up.LastPath("key-c") != "/v1/messages" {
		t.Fatalf("upstream path %q", e.up.LastPath("key-c"))
	}
	h, _ := e.up.LastRequest("key-c")
	if h.Get("x-api-key") != "key-c" || h.Get("anthropic-version") == "" {
		t.Fatalf("anthropic headers %v", h)
	}
	var text strings.Builder
	var finish string
	var usage gjson.Result
	events := parseSSE(t, body)
	for _, ev := range events {
		if ev.data == "[DONE]" {
			continue
		}
		d := gjson.Parse(ev.data)
		text.WriteString(d.Get("choices.0.delta.content").String())
		if f := d.Get("choices.0.finish_reason").String(); f != "" {
			finish = f
		}
		if u := d.Get("usage"); u.IsObject() {
			usage = u
		}
	}
	if text.String() != "Hello from key-c" || finish != "stop" || events[len(events)-1].data != "[DONE]" {
		t.Fatalf("text %q finish %q last %v", text.String(), finish, events[len(events)-1])
	}
	if usage.Get("completion_tokens").Int() == 0 || usage.Get("prompt_tokens").Int() == 0 {
		t.Fatalf("usage lost: %v", usage)
	}
}

// TestCodexResponsesThroughOpenAIUpstream: a Responses client (Codex) streams
// a function call and gets response.completed carrying usage.
func TestCodexResponsesThroughOpenAIUpstream(t *testing.T) {
	e := newEnv(t)
	e.addConn("openai", "key-a", 1)
	req := map[string]any{"model": "openai-compatible/gpt-4o-mini", "instructions": "Be brief.", "stream": true,
		"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Weather?"}}}},
		"tools": []any{map[string]any{"type": "function", "name": "get_weather", "parameters": map[string]any{"type": "object"}}}}
	resp, body := e.do("POST", "/v1/responses", req, map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	events := parseSSE(t, body)
	last := events[len(events)-1]
	if events[0].event != "response.created" || last.event != "response.completed" {
		t.Fatalf("first %s last %s", events[0].event, last.event)
	}
	d := gjson.Parse(last.data)
	if d.Get(`response.output.#(type=="function_call").call_id`).String() != "call_fake_1" ||
		d.Get(`response.output.#(type=="function_call").arguments`).String() != `{"city":"Paris"}` {
		t.Fatalf("completed response %s", last.data)
	}
	if d.Get("response.usage.output_tokens").Int() == 0 {
		t.Fatalf("usage lost %s", last.data)
	}

	req["stream"] = false
	req["background"] = true
	resp, body = e.do("POST", "/v1/responses", req, map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Warning") == "" || gjson.GetBytes(body, "object").String() != "response" {
		t.Fatalf("background: %d %q %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Warning"), body)
	}
}

func TestCountTokensAndAnthropicErrors(t *testing.T) {
	e := newEnv(t)
	resp, body := e.post("/v1/messages/count_tokens", map[string]any{"model": "x", "messages": []any{map[string]any{"role": "user", "content": strings.Repeat("word ", 400)}}}, nil)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "input_tokens").Int() < 100 {
		t.Fatalf("count_tokens %d %s", resp.StatusCode, body)
	}
	resp, body = e.post("/v1/messages", map[string]any{"model": "nope/x", "max_tokens": 5, "messages": []any{}}, nil)
	var env struct {
		Type  string `json:"type"`
		Error struct {
			Type, Code string
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	if resp.StatusCode != 404 || env.Type != "error" || env.Error.Type != "not_found_error" || env.Error.Code != "MODEL_NOT_FOUND" {
		t.Fatalf("anthropic error %d %s", resp.StatusCode, body)
	}
}

// TestStreamFaultsNeverLie: each upstream stream fault ends, for the client,
// either complete or with a visible error; before any content it fails over.
// With stream continuation on (the default), a break after content is
// finished by the other Anthropic connection (which takes a prefill): the
// stream then ends complete and says it was continued, never truncated.
func TestStreamFaultsNeverLie(t *testing.T) {
	tests := []struct {
		name     string
		fault    fakeupstream.Fault
		failover bool // served complete by the second connection
		// wantError: once content reached the client the stream ends with an
		// in-band error, never a clean end (a fault that arrives before the
		// first flush may still fail over).
		wantError bool
	}{
		{"cut after 2 events", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2}, false, true},
		{"cut before content", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 0}, true, false},
		{"error event after 2", fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, AfterChunks: 2}, false, true},
		{"error event first", fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, AfterChunks: 0}, true, false},
		// An event that fails validation fails the attempt like an error event.
		{"malformed event after 1", fakeupstream.Fault{Mode: fakeupstream.ModeMalformedEvent, AfterChunks: 1}, false, true},
		{"malformed event first", fakeupstream.Fault{Mode: fakeupstream.ModeMalformedEvent, AfterChunks: 0}, true, false},
	}
	for _, cont := range []bool{false, true} {
		for _, client := range []string{"chat", "messages"} {
			for _, tt := range tests {
				t.Run(fmt.Sprintf("continuation=%v/%s/%s", cont, client, tt.name), func(t *testing.T) {
					e := newEnv(t)
					e.patchResilience(map[string]any{"failover": map[string]any{"streamContinuation": cont}})
					e.addAnthropicConn("first", "key-a", 1)
					second := e.addAnthropicConn("second", "key-b", 2)
					e.up.SetFault("key-a", tt.fault)
					var resp *http.Response
					var body []byte
					if client == "chat" {
						resp, body = e.chat("anthropic-compatible/claude-sonnet-4-5", true, nil)
					} else {
						resp, body = e.post("/v1/messages", map[string]any{"model": "anthropic-compatible/claude-sonnet-4-5", "max_tokens": 64,
							"stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, nil)
					}
					s := string(body)
					served := resp.Header.Get("X-OmniRoute-Selected-Connection-Id")
					ended := strings.Contains(s, "[DONE]") || strings.Contains(s, "message_stop")
					errored := strings.Contains(s, "stream interrupted")
					continued := strings.Contains(s, ": omniroute continued the answer on anthropic-compatible/")
					switch {
					case continued && !cont:
						t.Fatalf("continued with continuation off:\n%s", s)
					case cont && tt.wantError:
						if !ended || errored || (served != second && !continued) {
							t.Fatalf("want a complete answer (continued, or failed over before the first flush): ended %v errored %v\n%s",
								ended, errored, s)
						}
					case tt.failover && (served != second || !ended || errored):
						t.Fatalf("want failover: served %s ended %v errored %v\n%s", served, ended, errored, s)
					case tt.wantError && served == second && ended && !errored:
						// The fault arrived before anything was flushed to the client,
						// so failing over was still safe.
					case tt.wantError && (ended || !errored):
						t.Fatalf("want visible error, no clean end: ended %v errored %v\n%s", ended, errored, s)
					case !tt.failover && !tt.wantError && (!ended || errored):
						t.Fatalf("want complete: ended %v errored %v\n%s", ended, errored, s)
					}
				})
			}
		}
	}
}

// TestReasoningStreamIsContinued: a stream cut after its reasoning and two
// text events is finished by the other Anthropic connection, for a Chat
// client (reasoning and text are separate fields) and for a Messages client
// (the continuation's text goes on in the client's open text block, after its
// thinking block); the continuation asks for no reasoning, which Anthropic
// refuses with a prefill.
func TestReasoningStreamIsContinued(t *testing.T) {
	cut := fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: fakeupstream.DefaultStreamChunks + 2, Times: 1}
	setup := func(t *testing.T) *env {
		e := newEnv(t)
		e.addAnthropicConn("first", "key-a", 1)
		e.addAnthropicConn("second", "key-b", 2)
		e.up.SetFault("key-a", cut)
		return e
	}
	continued := func(t *testing.T, e *env, body []byte) {
		t.Helper()
		s := string(body)
		if !strings.Contains(s, ": omniroute continued the answer on anthropic-compatible/claude-sonnet-4-5 after ") ||
			strings.Contains(s, "stream interrupted") {
			t.Fatalf("not continued:\n%s", s)
		}
		if _, sent := e.up.LastRequest("key-b"); gjson.GetBytes(sent, "thinking").Exists() ||
			gjson.GetBytes(sent, "messages.@reverse.0.role").String() != "assistant" {
			t.Fatalf("the continuation asked for thinking or carried no prefill: %s", sent)
		}
	}
	t.Run("chat", func(t *testing.T) {
		e := setup(t)
		resp, body := e.do("POST", "/v1/chat/completions", map[string]any{"model": "anthropic-compatible/claude-sonnet-4-5",
			"stream": true, "reasoning_effort": "low", "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			map[string]string{"Authorization": "Bearer " + e.key})
		var reasoning, text strings.Builder
		for _, ev := range parseSSE(t, body) {
			reasoning.WriteString(gjson.Get(ev.data, "choices.0.delta.reasoning_content").String())
			text.WriteString(gjson.Get(ev.data, "choices.0.delta.content").String())
		}
		if resp.StatusCode != 200 || reasoning.String() != fakeupstream.ReasoningText || text.String() != fakeupstream.Content("key-b") ||
			!strings.Contains(string(body), "[DONE]") {
			t.Fatalf("status %d, reasoning %q, text %q: want %q then %q:\n%s", resp.StatusCode, reasoning.String(), text.String(),
				fakeupstream.ReasoningText, fakeupstream.Content("key-b"), body)
		}
		continued(t, e, body)
	})
	// A Messages client, its first target an Anthropic endpoint (its stream
	// relayed as it is) or an OpenAI one (translated).
	for _, primary := range []string{"anthropic", "openai"} {
		t.Run("messages from "+primary, func(t *testing.T) {
			e, model := setup(t), "anthropic-compatible/claude-sonnet-4-5"
			if primary == "openai" {
				e = newEnv(t)
				e.addEndpoint("first", "key-a")
				e.addAnthropicConn("second", "key-b", 2)
				e.up.SetFault("key-a", cut)
				e.addCombo("mix", "priority", target("first/gpt-4o-mini"), target(model))
				model = "mix"
			}
			resp, body := e.post("/v1/messages", map[string]any{"model": model, "max_tokens": 2048,
				"stream": true, "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, nil)
			thinkingThenText(t, resp, body)
			continued(t, e, body)
		})
	}
}

// thinkingThenText checks a Messages stream of one thinking block (0) and
// one text block (1), each started and stopped once, every delta in its
// block, one end: ReasoningText, then the second connection's answer.
func thinkingThenText(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	var thinking, text strings.Builder
	starts, stops := map[int64]string{}, map[int64]int{}
	ends := 0
	for _, ev := range parseSSE(t, body) {
		i := gjson.Get(ev.data, "index").Int()
		switch ev.event {
		case "content_block_start":
			if _, again := starts[i]; again {
				t.Fatalf("block %d started twice:\n%s", i, body)
			}
			starts[i] = gjson.Get(ev.data, "content_block.type").String()
		case "content_block_delta":
			switch d := gjson.Get(ev.data, "delta"); {
			case d.Get("type").String() == "thinking_delta" && i == 0:
				thinking.WriteString(d.Get("thinking").String())
			case d.Get("type").String() == "text_delta" && i == 1:
				text.WriteString(d.Get("text").String())
			case d.Get("type").String() != "signature_delta":
				t.Fatalf("delta %s in block %d:\n%s", d.Raw, i, body)
			}
		case "content_block_stop":
			stops[i]++
		case "message_stop":
			ends++
		}
	}
	if resp.StatusCode != 200 || starts[0] != "thinking" || starts[1] != "text" || len(starts) != 2 ||
		stops[0] != 1 || stops[1] != 1 || len(stops) != 2 || ends != 1 ||
		thinking.String() != fakeupstream.ReasoningText || text.String() != fakeupstream.Content("key-b") {
		t.Fatalf("status %d, blocks %v stops %v ends %d, thinking %q, text %q:\n%s", resp.StatusCode, starts, stops, ends,
			thinking.String(), text.String(), body)
	}
}

// TestReasoningKeepsStreamAliveButHeartbeatsDoNot: reasoning frames reset the
// stall budget; heartbeats alone do not, so the stream then stalls visibly.
func TestReasoningKeepsStreamAliveButHeartbeatsDoNot(t *testing.T) {
	e := newEnv(t)
	e.patchSettings(map[string]any{"streamIdleTimeoutMs": 1000})
	e.addAnthropicConn("thinker", "key-a", 1)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeReasoningOnlyHeartbeat, AfterChunks: 12, DripMs: 150})
	resp, body := e.post("/v1/messages", map[string]any{"model": "anthropic-compatible/claude-sonnet-4-5", "max_tokens": 64,
		"stream": true, "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
		"messages": []any{map[string]any{"role": "user", "content": "think"}}}, nil)
	s := string(body)
	if resp.StatusCode != 200 || strings.Count(s, "thinking_delta") < 12 {
		t.Fatalf("reasoning frames (1.8 s of them, past the 1 s budget) were cut: %d %s", resp.StatusCode, s)
	}
	if strings.Contains(s, "message_stop") || !strings.Contains(s, "stream interrupted") {
		t.Fatalf("heartbeat-only tail did not stall visibly: %s", s)
	}
	_, m := e.mgmt("GET", "/api/resilience/cooldowns", nil)
	c := m["connections"].([]any)[0].(map[string]any)
	if c["lastErrorType"] != "stall" || c["status"] != "healthy" {
		t.Fatalf("stall should be recorded without a cooldown: %v", c)
	}
}

func TestSlowFirstTokenFailsOverBeforeCommit(t *testing.T) {
	e := newEnv(t)
	e.patchSettings(map[string]any{"firstTokenTimeoutMs": 1000})
	e.addConn("slow", "key-a", 1)
	second := e.addConn("fast", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeSlowFirstToken, LatencyMs: 5000})
	resp, body := e.chat("openai-compatible/gpt-4o-mini", true, nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second || !strings.Contains(string(body), "[DONE]") {
		t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
}

// TestContinuationThatStartsOverIsRefused: a continuation target that
// ignores the assistant prefill starts the answer over; the client must not
// get the delivered text twice as one complete answer (issue 33 item 13):
// the continuation is dropped, and the answer is restarted on that target
// without a prefill and spliced once its text reproduced the delivered text
// (issue 40). The same target honouring the prefill finishes the answer.
func TestContinuationThatStartsOverIsRefused(t *testing.T) {
	for _, client := range []string{"chat", "messages"} {
		for _, ignores := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ignores=%v", client, ignores), func(t *testing.T) {
				e := newEnv(t)
				e.addAnthropicConn("first", "key-a", 1)
				e.addAnthropicConn("second", "key-b", 2)
				e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2})
				if ignores {
					e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeIgnorePrefill})
				}
				var body []byte
				if client == "chat" {
					_, body = e.chat("anthropic-compatible/claude-sonnet-4-5", true, nil)
				} else {
					_, body = e.post("/v1/messages", map[string]any{"model": "anthropic-compatible/claude-sonnet-4-5", "max_tokens": 64,
						"stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, nil)
				}
				var text strings.Builder
				for _, ev := range parseSSE(t, body) {
					text.WriteString(gjson.Get(ev.data, "choices.0.delta.content").String())
					text.WriteString(gjson.Get(ev.data, "delta.text").String())
				}
				s := string(body)
				errored := strings.Contains(s, "stream interrupted")
				if e.up.Hits("key-b") == 0 {
					t.Fatalf("no continuation was tried:\n%s", s)
				}
				if ignores {
					if errored || text.String() != "Hello from key-b" || strings.Contains(s, "omniroute continued") ||
						!strings.Contains(s, "omniroute restarted the answer") || e.up.Hits("key-b") != 2 {
						t.Fatalf("want the continuation dropped, then the restart spliced without repeated text, got %q (%d requests):\n%s",
							text.String(), e.up.Hits("key-b"), s)
					}
					return
				}
				if errored || !strings.Contains(s, "omniroute continued") || strings.Count(text.String(), "Hello") != 1 {
					t.Fatalf("want one continued answer, got %q:\n%s", text.String(), s)
				}
			})
		}
	}
}

// TestContinuationOnOpenAIFormatTargets: an OpenAI-compatible connection
// that declares how it continues a trailing assistant message
// (providerSpecificData.assistantPrefill: vLLM's continue_final_message,
// DeepSeek's prefix, or as it is) finishes a cut stream; one that declares
// nothing is asked with both flags (issue 40 F: what it shows is learned),
// "none" is never asked for a prefill, and one that declares a mode it does
// not honour never gives repeated or mixed text (issue 33 item 15): both
// are rescued by the restart with a verified splice (issue 40).
func TestContinuationOnOpenAIFormatTargets(t *testing.T) {
	cases := []struct {
		mode      string // "" declares nothing
		continued bool
		requests  int // to key-b
	}{
		{"vllm", true, 1},
		{"deepseek", true, 1},
		{"", true, 1},          // undeclared: vLLM's and DeepSeek's flags, which the fake honours
		{"none", false, 1},     // never asked for a prefill: the restart only
		{"trailing", false, 2}, // the fake, like OpenAI, answers a new turn: the guard catches it, the restart splices
	}
	for _, client := range []string{"chat", "messages"} {
		for _, c := range cases {
			t.Run(client+"/"+c.mode, func(t *testing.T) {
				e := newEnv(t)
				e.addModelConn("anthropic-compatible", "first", "key-a", 1, "m1")
				data := map[string]any{}
				if c.mode != "" {
					data["assistantPrefill"] = c.mode
				}
				code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "vllm",
					"apiKey": "key-b", "baseUrl": e.upURL, "priority": 2, "models": []string{"m1"}, "providerSpecificData": data, "verify": false})
				if code != http.StatusCreated {
					t.Fatalf("create: %d %v", code, m)
				}
				e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2})
				var body []byte
				if client == "chat" {
					_, body = e.chat("m1", true, nil)
				} else {
					_, body = e.post("/v1/messages", map[string]any{"model": "m1", "max_tokens": 64,
						"stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, nil)
				}
				s := string(body)
				var text strings.Builder
				for _, ev := range parseSSE(t, body) {
					text.WriteString(gjson.Get(ev.data, "choices.0.delta.content").String())
					text.WriteString(gjson.Get(ev.data, "delta.text").String())
				}
				requests := e.up.Hits("key-b")
				continued := strings.Contains(s, "omniroute continued") && !strings.Contains(s, "stream interrupted")
				restarted := strings.Contains(s, "omniroute restarted the answer") && !strings.Contains(s, "stream interrupted")
				if requests != c.requests || continued != c.continued || restarted == c.continued {
					t.Fatalf("%d requests, continued %v, restarted %v; want %d, %v; text %q\n%s", requests, continued, restarted,
						c.requests, c.continued, text.String(), s)
				}
				if text.String() != "Hello from key-b" {
					t.Fatalf("text %q, want one answer, never repeated or mixed\n%s", text.String(), s)
				}
				if c.mode == "none" {
					if _, sent := e.up.LastRequest("key-b"); gjson.GetBytes(sent, "messages.@reverse.0.role").String() == "assistant" {
						t.Fatalf("a connection declaring none was sent a prefill: %s", sent)
					}
				}
				if c.mode == "vllm" || c.mode == "deepseek" || c.mode == "" {
					_, sent := e.up.LastRequest("key-b")
					last := gjson.GetBytes(sent, "messages.@reverse.0")
					flag := gjson.GetBytes(sent, "continue_final_message").Bool()
					switch c.mode {
					case "deepseek":
						flag = last.Get("prefix").Bool()
					case "":
						flag = flag && last.Get("prefix").Bool()
					}
					if last.Get("role").String() != "assistant" || !flag {
						t.Fatalf("the continuation request lacks the %s flag: %s", c.mode, sent)
					}
				}
			})
		}
	}
}

// TestResponsesStreamIsContinued: a Responses client's (Codex's) stream cut
// after text is finished by another connection, spliced into the client's
// own response: one response id, one message item, sequence numbers that only
// grow, and done events and response.completed carrying the whole text (issue
// 28: "Codex gets a continued stream too").
func TestResponsesStreamIsContinued(t *testing.T) {
	e := newEnv(t)
	e.addAnthropicConn("first", "key-a", 1)
	e.addAnthropicConn("second", "key-b", 2)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2})
	_, body := e.do("POST", "/v1/responses", map[string]any{"model": "anthropic-compatible/claude-sonnet-4-5", "stream": true,
		"input": "hi"}, map[string]string{"Authorization": "Bearer " + e.key})
	s := string(body)
	if !strings.Contains(s, `omniroute continued the answer on anthropic-compatible/claude-sonnet-4-5 after 6 characters (STREAM_TRUNCATED) via connection "second"`) ||
		strings.Contains(s, "response.failed") {
		t.Fatalf("not continued:\n%s", s)
	}
	var text strings.Builder
	ids, items := map[string]bool{}, map[string]bool{}
	lastSeq := int64(-1)
	var doneText, completedText, completedItem string
	for _, ev := range parseSSE(t, body) {
		r := gjson.Parse(ev.data)
		seq := r.Get("sequence_number").Int()
		if seq <= lastSeq {
			t.Fatalf("sequence number %d after %d:\n%s", seq, lastSeq, s)
		}
		lastSeq = seq
		if id := r.Get("response.id").String(); id != "" {
			ids[id] = true
		}
		if id := r.Get("item_id").String(); id != "" {
			items[id] = true
		}
		switch r.Get("type").String() {
		case "response.output_text.delta":
			text.WriteString(r.Get("delta").String())
		case "response.output_text.done":
			doneText = r.Get("text").String()
		case "response.completed":
			completedText = r.Get("response.output.0.content.0.text").String()
			completedItem = r.Get("response.output.0.id").String()
		}
	}
	want := "Hello from key-b"
	if text.String() != want || doneText != want || completedText != want {
		t.Fatalf("deltas %q, done %q, completed %q; want %q\n%s", text.String(), doneText, completedText, want, s)
	}
	if len(ids) != 1 || len(items) != 1 || !items[completedItem] {
		t.Fatalf("response ids %v, item ids %v (completed item %s): want one of each\n%s", ids, items, completedItem, s)
	}
	if strings.Count(s, "event: response.created") != 1 {
		t.Fatalf("a second response.created reached the client:\n%s", s)
	}
}
