package server_test

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// TestAnthropicPassthroughForwardsProtocolHeaders: an Anthropic client's body
// reaches an Anthropic upstream unchanged, so its anthropic-beta and
// anthropic-version go along; a translated body never carries a client's beta.
func TestAnthropicPassthroughForwardsProtocolHeaders(t *testing.T) {
	e := newEnv(t)
	e.addAnthropicConn("claude", "key-c", 1)
	const betas = "claude-code-20250219,context-management-2025-06-27"
	req := map[string]any{"model": "anthropic-compatible/claude-sonnet-4-5", "max_tokens": 64,
		"context_management": map[string]any{"edits": []any{map[string]any{"type": "clear_thinking_20251015", "keep": "all"}}},
		"messages":           []any{map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "system", "content": "be brief"}}}
	resp, body := e.post("/v1/messages", req, map[string]string{"anthropic-beta": betas, "anthropic-version": "2023-06-01"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	h, sent := e.up.LastRequest("key-c")
	if got := h.Get("anthropic-beta"); got != betas {
		t.Fatalf("upstream anthropic-beta = %q, want %q", got, betas)
	}
	if got := h.Get("anthropic-version"); got != "2023-06-01" {
		t.Fatalf("upstream anthropic-version = %q", got)
	}
	if gjson.GetBytes(sent, "messages.1.role").String() != "system" || !gjson.GetBytes(sent, "context_management").Exists() {
		t.Fatalf("passthrough body changed: %s", sent)
	}

	// An oversized value is not forwarded.
	resp, body = e.post("/v1/messages", req, map[string]string{"anthropic-beta": strings.Repeat("a", 2049)})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if h, _ = e.up.LastRequest("key-c"); len(h.Values("anthropic-beta")) != 0 {
		t.Fatalf("oversized beta forwarded: %q", h.Values("anthropic-beta"))
	}

	// An OpenAI client's body is translated: no client beta reaches the upstream.
	resp, body = e.chat("anthropic-compatible/claude-sonnet-4-5", false, map[string]string{"anthropic-beta": betas})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat status %d: %s", resp.StatusCode, body)
	}
	if h, _ = e.up.LastRequest("key-c"); len(h.Values("anthropic-beta")) != 0 {
		t.Fatalf("beta forwarded for a translated body: %q", h.Values("anthropic-beta"))
	}
}

// TestMidConversationSystemThroughOpenAIUpstream: Claude Code's system
// messages inside messages reach an OpenAI-format upstream as system
// messages at their position (it used to be a 400).
func TestMidConversationSystemThroughOpenAIUpstream(t *testing.T) {
	e := newEnv(t)
	e.addConn("openai", "key-a", 1)
	req := map[string]any{"model": "openai-compatible/gpt-4o-mini", "max_tokens": 64,
		"system": []any{map[string]any{"type": "text", "text": "You are Claude Code."}},
		"messages": []any{
			map[string]any{"role": "user", "content": "hi"},
			map[string]any{"role": "system", "content": "# Environment\nlinux"},
			map[string]any{"role": "assistant", "content": "hello"},
			map[string]any{"role": "user", "content": "again"}}}
	resp, body := e.post("/v1/messages", req, map[string]string{"anthropic-beta": "mid-conversation-system-2026-04-07"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	h, sent := e.up.LastRequest("key-a")
	roles := gjson.GetBytes(sent, "messages.#.role").String()
	if roles != `["system","user","system","assistant","user"]` || gjson.GetBytes(sent, "messages.2.content").String() != "# Environment\nlinux" {
		t.Fatalf("upstream messages %s", gjson.GetBytes(sent, "messages"))
	}
	if len(h.Values("anthropic-beta")) != 0 {
		t.Fatalf("anthropic-beta reached an OpenAI upstream: %q", h.Values("anthropic-beta"))
	}
	if gjson.GetBytes(body, "content.0.text").String() != "Hello from key-a" {
		t.Fatalf("answer %s", body)
	}
}

// TestUntranslatableRequestAnswersInClientShape: what has no counterpart
// upstream is a 400 in the client's own error shape, saying what to change,
// worded (role "system" … not supported) so Claude Code falls back to sending
// no mid-conversation system messages instead of giving up.
func TestUntranslatableRequestAnswersInClientShape(t *testing.T) {
	e := newEnv(t)
	e.addConn("openai", "key-a", 1)
	req := map[string]any{"model": "openai-compatible/gpt-4o-mini", "max_tokens": 64,
		"messages": []any{map[string]any{"role": "user", "content": "hi"},
			map[string]any{"role": "system", "content": []any{map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": "https://example.com/a.png"}}}}}}
	resp, body := e.post("/v1/messages", req, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	msg := gjson.GetBytes(body, "error.message").String()
	if gjson.GetBytes(body, "type").String() != "error" || gjson.GetBytes(body, "error.type").String() != "invalid_request_error" ||
		gjson.GetBytes(body, "error.code").String() != "UNTRANSLATABLE_REQUEST" ||
		gjson.GetBytes(body, "error.details.error_code").String() != "mid_conversation_system_not_supported" {
		t.Fatalf("not the Anthropic error shape: %s", body)
	}
	for _, want := range []string{`messages[1].content[0]`, `role "system"`, "not supported", "OpenAI Chat-format connection", "Anthropic Messages-format connection"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if e.up.Hits("key-a") != 0 {
		t.Fatalf("an untranslatable request reached the upstream")
	}
}

// TestClaudeCodeFixturePassesThroughToAnthropic: a request body captured from
// Claude Code reaches an Anthropic upstream byte for byte, only "model"
// rewritten: every field (mid-conversation system messages, adaptive
// thinking, context_management, output_config, cache_control, deferred
// tools, metadata) is passed.
func TestClaudeCodeFixturePassesThroughToAnthropic(t *testing.T) {
	e := newEnv(t)
	e.addAnthropicConn("claude", "key-c", 1)
	fixture, err := os.ReadFile("../translate/testdata/clients/claude-code-glm-tool-round-trip.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := sjson.SetBytes(fixture, "model", "anthropic-compatible/claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	resp, out := e.post("/v1/messages", body, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	want, _ := sjson.SetBytes(fixture, "model", "claude-sonnet-4-5")
	if _, sent := e.up.LastRequest("key-c"); !bytes.Equal(sent, want) {
		t.Fatalf("the passthrough changed the body:\n got %.400s\nwant %.400s", sent, want)
	}
}
