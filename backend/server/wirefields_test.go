package server_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestFallbackToStrictOpenAIWireDropsPivotFields (issue 41): a combo falls
// back from an Anthropic target to an OpenAI-compatible one while a Messages
// client replays a turn with signed thinking (Anthropic's extended-thinking
// reference: a thinking block with its signature, then the text). The Chat
// pivot carries that turn's reasoning_content and thinking_blocks, members
// OpenAI's reference does not define on a message: a strict vendor answers
// 400 to them. The fallback target gets the turn without them and answers.
func TestFallbackToStrictOpenAIWireDropsPivotFields(t *testing.T) {
	e, strict := strictFallback(t)

	thinking := []any{
		map[string]any{"type": "thinking", "thinking": "The user greets me; I greet back.",
			"signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds1YAqXZKdsV0KYYkSSx7uJ5KdRZ0SrXtRrnkkWfgBY1rTM6m"},
		map[string]any{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"},
		map[string]any{"type": "text", "text": "Hello!"},
	}
	for _, stream := range []bool{false, true} {
		resp, body := e.post("/v1/messages", map[string]any{"model": "mixed", "max_tokens": 1024, "stream": stream,
			"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
			"messages": []any{
				map[string]any{"role": "user", "content": "hi"},
				map[string]any{"role": "assistant", "content": thinking},
				map[string]any{"role": "user", "content": "how are you?"},
			}}, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != strict {
			t.Fatalf("stream %v: %d (connection %s) %s", stream, resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
		}
		text := gjson.GetBytes(body, "content.#(type==\"text\").text").String()
		if stream {
			var b strings.Builder
			for _, ev := range parseSSE(t, body) {
				b.WriteString(gjson.Get(ev.data, "delta.text").String())
			}
			text = b.String()
		}
		if text != fakeupstream.Content("key-b") {
			t.Fatalf("stream %v: not the fallback's answer: %s", stream, body)
		}
		_, sent := e.up.LastRequest("key-b")
		for i, msg := range gjson.GetBytes(sent, "messages").Array() {
			msg.ForEach(func(k, _ gjson.Result) bool {
				if k.String() == "reasoning_content" || k.String() == "thinking_blocks" {
					t.Errorf("stream %v: messages.%d carries %s: %s", stream, i, k, sent)
				}
				return true
			})
		}
		if got := gjson.GetBytes(sent, "messages.1.content").String(); got != "Hello!" {
			t.Errorf("stream %v: the replayed turn's text %q: %s", stream, got, sent)
		}
	}
}

// strictFallback is a gateway whose combo "mixed" falls back from an
// Anthropic target that answers 529 (overloaded) to an OpenAI-compatible one
// (key-b) refusing message members outside OpenAI's reference
// (ModeStrictFields); strict is that connection's id.
func strictFallback(t *testing.T) (e *env, strict string) {
	t.Helper()
	e = newEnv(t)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "anthropic-compatible", "name": "claude",
		"apiKey": "key-a", "baseUrl": e.upURL, "prefix": "anth", "models": []string{"claude-sonnet-4-5"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	strict = e.addEndpoint("strict", "key-b")
	e.addCombo("mixed", "priority", target("anth/claude-sonnet-4-5"), target("strict/gpt-4o-mini"))
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 529})
	e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeStrictFields})
	return e, strict
}

// TestResponsesReplayFallsBackToStrictOpenAIWire (issue 41): a Responses
// client (Codex: store false) replays the reasoning item whose
// encrypted_content the gateway sealed the signed blocks in on its last
// answer (docs/translation.md), then the assistant's message; the fallback
// to a strict OpenAI-compatible target gets the turn without the pivot's
// members and answers.
func TestResponsesReplayFallsBackToStrictOpenAIWire(t *testing.T) {
	e, strict := strictFallback(t)
	blocks, _ := json.Marshal([]any{map[string]any{"type": "thinking", "thinking": "The user greets me; I greet back.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxB"}})
	input := []any{
		map[string]any{"type": "message", "role": "user", "content": "hi"},
		map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{map[string]any{"type": "summary_text", "text": "The user greets me; I greet back."}},
			"encrypted_content": "omniroute.thinking.v1:" + base64.StdEncoding.EncodeToString(blocks)},
		map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "Hello!"}}},
		map[string]any{"type": "message", "role": "user", "content": "how are you?"},
	}
	resp, body := e.post("/v1/responses", map[string]any{"model": "mixed", "input": input, "store": false,
		"include": []string{"reasoning.encrypted_content"}}, nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != strict ||
		gjson.GetBytes(body, `output.#(type=="message").content.0.text`).String() != fakeupstream.Content("key-b") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	_, sent := e.up.LastRequest("key-b")
	if strings.Contains(string(sent), "thinking_blocks") || strings.Contains(string(sent), "reasoning_content") ||
		gjson.GetBytes(sent, `messages.#(role=="assistant").content`).String() != "Hello!" {
		t.Fatalf("the strict target was sent %s", sent)
	}
}
