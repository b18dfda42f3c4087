package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// ndjson splits an Ollama stream into its lines, each checked to be JSON.
func ndjson(t *testing.T, body []byte) []gjson.Result {
	t.Helper()
	var out []gjson.Result
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("not a JSON line: %q", sc.Bytes())
		}
		out = append(out, gjson.ParseBytes(append([]byte(nil), sc.Bytes()...)))
	}
	return out
}

// TestOllamaSurface: a tool that speaks only Ollama gets chat, generate,
// embed, tags and version under /ollama, streamed as NDJSON by default,
// translated from OpenAI- and Anthropic-format upstreams, with failover.
func TestOllamaSurface(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("openai-compatible", "limited", "ol-limited", 1, "llama3.2", "nomic-embed-text")
	e.addModelConn("openai-compatible", "spare", "ol-spare", 2, "llama3.2", "nomic-embed-text")
	e.addModelConn("anthropic-compatible", "claude", "ol-claude", 3, "claude-sonnet-4-5")
	e.up.SetFault("ol-limited", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "60"}})
	hello := []map[string]any{{"role": "user", "content": "hi"}}

	t.Run("chat, one answer", func(t *testing.T) {
		resp, body := e.client("/ollama/api/chat", map[string]any{"model": "llama3.2", "messages": hello, "stream": false})
		r := gjson.ParseBytes(body)
		if resp.StatusCode != 200 || r.Get("message.role").String() != "assistant" || r.Get("message.content").String() != fakeupstream.Content("ol-spare") ||
			!r.Get("done").Bool() || r.Get("done_reason").String() != "stop" || r.Get("created_at").String() == "" || !r.Get("eval_count").Exists() {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if e.up.Hits("ol-limited") == 0 {
			t.Fatal("the first connection was never tried")
		}
	})
	t.Run("chat streams NDJSON by default", func(t *testing.T) {
		for _, model := range []string{"llama3.2", "claude-sonnet-4-5"} {
			resp, body := e.client("/ollama/api/chat", map[string]any{"model": model, "messages": hello})
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("%s: %d %q %s", model, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			lines := ndjson(t, body)
			var text strings.Builder
			for _, l := range lines[:len(lines)-1] {
				if l.Get("done").Bool() {
					t.Fatalf("%s: done before the last line: %s", model, body)
				}
				text.WriteString(l.Get("message.content").String())
			}
			last := lines[len(lines)-1]
			want := fakeupstream.Content("ol-spare")
			if model != "llama3.2" {
				want = fakeupstream.Content("ol-claude")
			}
			if text.String() != want || !last.Get("done").Bool() || last.Get("done_reason").String() != "stop" {
				t.Fatalf("%s: text %q, last %s", model, text.String(), last.Raw)
			}
		}
	})
	t.Run("generate", func(t *testing.T) {
		resp, body := e.client("/ollama/api/generate", map[string]any{"model": "claude-sonnet-4-5", "prompt": "hi", "system": "be brief", "stream": false})
		if resp.StatusCode != 200 || gjson.GetBytes(body, "response").String() != fakeupstream.Content("ol-claude") || !gjson.GetBytes(body, "done").Bool() {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if _, sent := e.up.LastRequest("ol-claude"); gjson.GetBytes(sent, "system").String() == "" && !strings.Contains(string(sent), "be brief") {
			t.Fatalf("the system prompt did not reach the upstream: %s", sent)
		}
		resp, body = e.client("/ollama/api/generate", map[string]any{"model": "llama3.2", "prompt": "hi"})
		lines := ndjson(t, body)
		if resp.StatusCode != 200 || len(lines) < 2 || !lines[len(lines)-1].Get("done").Bool() || lines[0].Get("response").String() == "" {
			t.Fatalf("generate stream: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("embed", func(t *testing.T) {
		resp, body := e.client("/ollama/api/embed", map[string]any{"model": "nomic-embed-text", "input": []string{"a", "b"}})
		if resp.StatusCode != 200 || len(gjson.GetBytes(body, "embeddings").Array()) != 2 ||
			len(gjson.GetBytes(body, "embeddings.0").Array()) != fakeupstream.EmbeddingDims {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if e.up.LastPath("ol-spare") != "/v1/embeddings" {
			t.Fatalf("path %q", e.up.LastPath("ol-spare"))
		}
	})
	t.Run("tags and version", func(t *testing.T) {
		resp, body := e.do("GET", "/ollama/api/tags", nil, map[string]string{"Authorization": "Bearer " + e.key})
		names := map[string]bool{}
		for _, m := range gjson.GetBytes(body, "models").Array() {
			names[m.Get("name").String()] = true
		}
		if resp.StatusCode != 200 || !names["llama3.2"] || !names["claude-sonnet-4-5"] {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		resp, body = e.do("GET", "/ollama/api/version", nil, nil)
		if resp.StatusCode != 200 || gjson.GetBytes(body, "version").String() == "" {
			t.Fatalf("version: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("errors in Ollama's shape", func(t *testing.T) {
		for _, c := range []struct {
			path string
			body string
			want string
		}{
			{"/ollama/api/chat", `{"model":"llama3.2"}`, "MESSAGES_REQUIRED"},
			{"/ollama/api/generate", `{"model":"llama3.2","prompt":5}`, "PROMPT_REQUIRED"},
			{"/ollama/api/generate", `{"model":"claude-sonnet-4-5","prompt":"a","suffix":"b"}`, "FIM_UNSUPPORTED"},
			{"/ollama/api/embed", `{"model":"nomic-embed-text"}`, "INPUT_REQUIRED"},
			{"/ollama/api/chat", `{"model":"nope","messages":[{"role":"user","content":"x"}],"stream":false}`, "MODEL_NOT_FOUND"},
		} {
			resp, body := e.client(c.path, c.body)
			msg := gjson.GetBytes(body, "error")
			if resp.StatusCode < 400 || resp.StatusCode >= 500 || msg.Type != gjson.String || !strings.HasPrefix(msg.Str, c.want) {
				t.Errorf("%s %s: %d %s, want %s", c.path, c.body, resp.StatusCode, body, c.want)
			}
		}
	})
}

// TestOllamaToolRoundTrip: a tool call comes back whole with its arguments as
// an object, and the tool's result, named by tool_name, reaches the upstream
// as the answer to that call.
func TestOllamaToolRoundTrip(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("anthropic-compatible", "claude", "ol-tools", 1, "claude-sonnet-4-5")
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}
	for _, stream := range []bool{false, true} {
		resp, body := e.client("/ollama/api/chat", map[string]any{"model": "claude-sonnet-4-5", "stream": stream, "tools": tools,
			"messages": []map[string]any{{"role": "user", "content": "weather in Paris?"}}})
		if resp.StatusCode != 200 {
			t.Fatalf("stream %v: %d %s", stream, resp.StatusCode, body)
		}
		var call gjson.Result
		if stream {
			for _, l := range ndjson(t, body) {
				if c := l.Get("message.tool_calls.0"); c.Exists() {
					call = c
				}
			}
		} else {
			call = gjson.GetBytes(body, "message.tool_calls.0")
		}
		if call.Get("function.name").String() != "get_weather" || !call.Get("function.arguments").IsObject() {
			t.Fatalf("stream %v: tool call %q in %s", stream, call.Raw, body)
		}
	}
	resp, body := e.client("/ollama/api/chat", map[string]any{"model": "claude-sonnet-4-5", "stream": false, "tools": tools,
		"messages": []map[string]any{
			{"role": "user", "content": "weather in Paris?"},
			{"role": "assistant", "content": "", "tool_calls": []map[string]any{{"function": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Paris"}}}}},
			{"role": "tool", "tool_name": "get_weather", "content": "sunny, 21C"},
		}})
	if resp.StatusCode != 200 {
		t.Fatalf("tool result turn: %d %s", resp.StatusCode, body)
	}
	_, sent := e.up.LastRequest("ol-tools")
	use := gjson.GetBytes(sent, `messages.1.content.#(type=="tool_use")`)
	result := gjson.GetBytes(sent, `messages.2.content.#(type=="tool_result")`)
	if use.Get("input.city").String() != "Paris" || result.Get("tool_use_id").String() != use.Get("id").String() || use.Get("id").String() == "" {
		t.Fatalf("the upstream got %s", sent)
	}
	if resp, body := e.client("/ollama/api/chat", map[string]any{"model": "claude-sonnet-4-5", "stream": false,
		"messages": []map[string]any{{"role": "tool", "tool_name": "x", "content": "orphan"}}}); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("orphan tool result: %d %s", resp.StatusCode, body)
	}
}

// TestOllamaNativeLegacyCompletions (issue 41): /v1/completions to an
// Ollama native connection goes through chat to /api/chat (its row is
// ChatOnly), streamed or not; it answered 404 before.
func TestOllamaNativeLegacyCompletions(t *testing.T) {
	e := newEnv(t)
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "ollama", "name": "native", "verify": false, "apiKey": "ol-native",
		"baseUrl": strings.TrimSuffix(e.upURL, "/v1"), "models": []string{"llama3.2:latest"}}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	resp, out := e.do("POST", "/v1/completions", map[string]any{"model": "ollama/llama3.2:latest", "prompt": "Say hi", "max_tokens": 20}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(out, "object").String() != "text_completion" ||
		gjson.GetBytes(out, "choices.0.text").String() != fakeupstream.Content("ol-native") {
		t.Fatalf("completion: %d %s", resp.StatusCode, out)
	}
	if _, sent := e.up.LastRequest("ol-native"); e.up.LastPath("ol-native") != "/api/chat" || gjson.GetBytes(sent, "messages.0.content").String() != "Say hi" {
		t.Fatalf("sent to %s: %s", e.up.LastPath("ol-native"), sent)
	}
	resp, out = e.do("POST", "/v1/completions", map[string]any{"model": "ollama/llama3.2:latest", "prompt": "Say hi", "max_tokens": 20, "stream": true}, auth)
	text := ""
	for _, ev := range parseSSE(t, out) {
		text += gjson.Get(ev.data, "choices.0.text").String()
	}
	if resp.StatusCode != 200 || text != fakeupstream.Content("ol-native") || !strings.Contains(string(out), "[DONE]") {
		t.Fatalf("streamed completion: %d %q\n%s", resp.StatusCode, text, out)
	}
}
