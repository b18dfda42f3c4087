package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestReasoningDetailsToolRoundTrip: an OpenRouter connection whose model
// reasons with tools (the fake's ModeReasoningDetails, after OpenRouter's
// reference) answers a Messages client with a thinking block carrying the
// reasoning_details signature and a redacted_thinking block carrying the
// encrypted entry, streamed or not; the client's next turn (the tool's
// result) gives them back, and OpenRouter gets them as reasoning_details,
// unmodified and in order (the fake refuses the turn otherwise) and
// answers; so does a Responses client's next turn. A Chat client gets
// OpenRouter's reasoning_details as they came, beside the pivot's
// thinking_blocks.
func TestReasoningDetailsToolRoundTrip(t *testing.T) {
	e := newEnv(t)
	const key = "key-or"
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openrouter", "name": "or-test", "verify": false,
		"apiKey": key, "baseUrl": e.upURL}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	e.up.SetFault(key, fakeupstream.Fault{Mode: fakeupstream.ModeReasoningDetails})
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	const model = "openrouter/anthropic/claude-sonnet-4.5"
	toolRoundTrip(t, e, key, model, []map[string]string{
		{"type": "thinking", "thinking": fakeupstream.ReasoningText, "signature": fakeupstream.DetailsSignature},
		{"type": "redacted_thinking", "data": fakeupstream.DetailsEncrypted},
		{"type": "tool_use", "id": fakeupstream.ToolCallIDOpenAI, "name": "get_weather"},
	}, func(sent []byte) bool {
		return fakeupstream.DetailsReplayed(sent) &&
			gjson.GetBytes(sent, `messages.#(role=="assistant").reasoning_details.0.signature`).String() == fakeupstream.DetailsSignature
	})

	// A Responses client (Codex: store false, encrypted reasoning included)
	// gets the blocks sealed in its reasoning item; its next turn, the
	// function's output, gives them back to OpenRouter as reasoning_details.
	rtools := []any{map[string]any{"type": "function", "name": "get_weather", "parameters": map[string]any{"type": "object"}}}
	input := []any{map[string]any{"type": "message", "role": "user", "content": "What's the weather like in Paris?"}}
	resp, out := e.do("POST", "/v1/responses", map[string]any{"model": model, "input": input, "tools": rtools, "store": false,
		"include": []string{"reasoning.encrypted_content"}}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(out, `output.#(type=="reasoning").encrypted_content`).String() == "" ||
		gjson.GetBytes(out, `output.#(type=="function_call").call_id`).String() != fakeupstream.ToolCallIDOpenAI {
		t.Fatalf("responses: %d %s", resp.StatusCode, out)
	}
	for _, it := range gjson.GetBytes(out, "output").Array() {
		input = append(input, it.Value())
	}
	input = append(input, map[string]any{"type": "function_call_output", "call_id": fakeupstream.ToolCallIDOpenAI, "output": "sunny"})
	resp, out = e.do("POST", "/v1/responses", map[string]any{"model": model, "input": input, "tools": rtools, "store": false,
		"include": []string{"reasoning.encrypted_content"}}, auth)
	if _, sent := e.up.LastRequest(key); resp.StatusCode != 200 || !fakeupstream.DetailsReplayed(sent) ||
		!strings.Contains(string(out), fakeupstream.ToolResultText("sunny")) {
		t.Fatalf("responses replay: %d %s\nsent %s", resp.StatusCode, out, sent)
	}

	resp, out = e.do("POST", "/v1/chat/completions", map[string]any{"model": model, "messages": []any{
		map[string]any{"role": "user", "content": "hi"}}}, auth)
	msg := gjson.GetBytes(out, "choices.0.message")
	if resp.StatusCode != 200 || msg.Get("reasoning_details.0.signature").String() != fakeupstream.DetailsSignature ||
		msg.Get("reasoning_details.1.data").String() != fakeupstream.DetailsEncrypted ||
		msg.Get("thinking_blocks.0.signature").String() != fakeupstream.DetailsSignature {
		t.Fatalf("chat: %d %s", resp.StatusCode, out)
	}
}

// toolRoundTrip runs a Messages client's tool-calling turn on model (the
// key's connection answering with reasoning), streamed and not: its blocks
// must be want ("*": any non-empty value), and the next turn, giving them
// back with the tool's result, must reach the upstream as replayed says and
// be answered.
func toolRoundTrip(t *testing.T, e *env, key, model string, want []map[string]string, replayed func(sent []byte) bool) {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	tools := []any{map[string]any{"name": "get_weather", "description": "Get current weather",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	ask := []any{map[string]any{"role": "user", "content": "What's the weather like in Paris?"}}
	for _, stream := range []bool{false, true} {
		resp, out := e.do("POST", "/v1/messages", map[string]any{"model": model, "max_tokens": 4096, "messages": ask, "tools": tools,
			"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}, "stream": stream}, auth)
		if resp.StatusCode != 200 {
			t.Fatalf("stream %v: %d %s", stream, resp.StatusCode, out)
		}
		var blocks []map[string]string
		var replay []any
		if stream {
			input := ""
			for _, ev := range parseSSE(t, out) {
				d := gjson.Parse(ev.data)
				switch ev.event {
				case "content_block_start":
					cb := d.Get("content_block")
					blocks = append(blocks, map[string]string{"type": cb.Get("type").String(), "data": cb.Get("data").String(),
						"id": cb.Get("id").String(), "name": cb.Get("name").String()})
				case "content_block_delta":
					b := blocks[len(blocks)-1]
					b["thinking"] += d.Get("delta.thinking").String()
					b["signature"] += d.Get("delta.signature").String()
					input += d.Get("delta.partial_json").String()
				}
			}
			for _, b := range blocks {
				switch b["type"] {
				case "thinking":
					replay = append(replay, map[string]any{"type": "thinking", "thinking": b["thinking"], "signature": b["signature"]})
				case "redacted_thinking":
					replay = append(replay, map[string]any{"type": "redacted_thinking", "data": b["data"]})
				case "tool_use":
					replay = append(replay, map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": gjson.Parse(input).Value()})
				}
			}
		} else {
			for _, b := range gjson.GetBytes(out, "content").Array() {
				m := map[string]string{}
				for k, v := range b.Map() {
					m[k] = v.String()
				}
				blocks = append(blocks, m)
				replay = append(replay, b.Value())
			}
		}
		if len(blocks) != len(want) {
			t.Fatalf("stream %v: blocks %v\n%s", stream, blocks, out)
		}
		for i, w := range want {
			for k, v := range w {
				if blocks[i][k] != v && (v != "*" || blocks[i][k] == "") {
					t.Fatalf("stream %v: block %d %s = %q, want %q\n%s", stream, i, k, blocks[i][k], v, out)
				}
			}
		}

		// The tool's result: the turn goes back with its reasoning.
		next := append(append([]any{}, ask...), map[string]any{"role": "assistant", "content": replay},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": fakeupstream.ToolCallIDOpenAI, "content": "sunny"}}})
		resp, out = e.do("POST", "/v1/messages", map[string]any{"model": model, "max_tokens": 4096, "messages": next, "tools": tools,
			"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}, "stream": stream}, auth)
		_, sent := e.up.LastRequest(key)
		text := gjson.GetBytes(out, `content.#(type=="text").text`).String()
		if stream {
			var b strings.Builder
			for _, ev := range parseSSE(t, out) {
				b.WriteString(gjson.Get(ev.data, "delta.text").String())
			}
			text = b.String()
		}
		if resp.StatusCode != 200 || text != fakeupstream.ToolResultText("sunny") {
			t.Fatalf("stream %v: tool turn: %d %s\nsent %s", stream, resp.StatusCode, out, sent)
		}
		turn := gjson.GetBytes(sent, `messages.#(role=="assistant")`)
		if !replayed(sent) || turn.Get("thinking_blocks").Exists() || turn.Get("reasoning_content").Exists() {
			t.Fatalf("stream %v: replayed turn %s", stream, turn.Raw)
		}
	}

}
