package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestOllamaNativeConnection drives an `ollama` connection (Ollama's native
// API) through the binary: models discovered from /api/tags; OpenAI chat
// clients answered streamed and not (the NDJSON stream translated to chat
// chunks, the thinking as reasoning); a tool call and its result round
// trip with arguments as objects and the result named by its tool;
// Anthropic and Ollama clients reach it too; embeddings go to /api/embed; a
// stream cut before its done line, or an error line, never ends clean; an
// unknown model is a 404.
func TestOllamaNativeConnection(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)

	m := g.mustMgmt(http.StatusCreated, "POST", "/api/providers", map[string]any{"provider": "ollama", "baseUrl": upURL})
	conn := m["connection"].(map[string]any)
	var served []string
	for _, s := range conn["servedModels"].([]any) {
		served = append(served, s.(string))
	}
	if conn["provider"] != "ollama" || conn["modelsSource"] != "upstream" || !slices.Contains(served, "llama3.2:latest") || !slices.Contains(served, "qwen3:8b") {
		t.Fatalf("connection: %v", conn)
	}
	label := "ollama:llama3.2:latest"
	auth := map[string]string{"Authorization": "Bearer " + g.key}

	// Non-streamed, with the options Ollama takes under "options".
	resp, body := g.do("POST", "/v1/chat/completions", map[string]any{"model": "ollama/llama3.2:latest", "max_tokens": 40, "temperature": 0.3,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content(label) ||
		gjson.GetBytes(body, "usage.prompt_tokens").Int() != 12 || gjson.GetBytes(body, "usage.completion_tokens").Int() != 7 {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	if _, sent := up.LastRequest(label); up.LastPath(label) != "/api/chat" || gjson.GetBytes(sent, "stream").Bool() ||
		gjson.GetBytes(sent, "options.num_predict").Int() != 40 || gjson.GetBytes(sent, "options.temperature").Float() != 0.3 {
		t.Fatalf("upstream request %s %s", up.LastPath(label), sent)
	}

	// Streamed, with thinking.
	resp, body = g.do("POST", "/v1/chat/completions", map[string]any{"model": "qwen3:8b", "stream": true, "reasoning_effort": "high",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
	if resp.StatusCode != 200 || chatText(body) != fakeupstream.Content("ollama:qwen3:8b") || !strings.Contains(string(body), "data: [DONE]") ||
		!strings.Contains(string(body), `"reasoning_content":"Let me think."`) {
		t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	if _, sent := up.LastRequest("ollama:qwen3:8b"); !gjson.GetBytes(sent, "stream").Bool() || gjson.GetBytes(sent, "think").String() != "high" {
		t.Fatalf("streamed upstream request %s", sent)
	}

	// Tools, both ways, streamed and not.
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}
	for _, stream := range []bool{false, true} {
		resp, body = g.do("POST", "/v1/chat/completions", map[string]any{"model": "llama3.2:latest", "stream": stream, "tools": tools,
			"messages": []any{map[string]any{"role": "user", "content": "weather in Paris?"}}}, auth)
		var name, args, id, finish string
		if stream {
			for _, line := range strings.Split(string(body), "\n") {
				d, ok := strings.CutPrefix(line, "data: ")
				if !ok || !gjson.Valid(d) {
					continue
				}
				if tc := gjson.Get(d, "choices.0.delta.tool_calls.0"); tc.Exists() {
					name, args, id = tc.Get("function.name").String(), args+tc.Get("function.arguments").String(), tc.Get("id").String()
				}
				if f := gjson.Get(d, "choices.0.finish_reason").String(); f != "" {
					finish = f
				}
			}
		} else {
			tc := gjson.GetBytes(body, "choices.0.message.tool_calls.0")
			name, args, id, finish = tc.Get("function.name").String(), tc.Get("function.arguments").String(), tc.Get("id").String(), gjson.GetBytes(body, "choices.0.finish_reason").String()
		}
		if resp.StatusCode != 200 || name != "get_weather" || gjson.Get(args, "city").String() != "Paris" || id == "" || finish != "tool_calls" {
			t.Fatalf("tool call (stream %v): %d %s", stream, resp.StatusCode, body)
		}
		resp, body = g.do("POST", "/v1/chat/completions", map[string]any{"model": "llama3.2:latest", "stream": stream, "tools": tools,
			"messages": []any{map[string]any{"role": "user", "content": "weather in Paris?"},
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
					"function": map[string]any{"name": name, "arguments": args}}}},
				map[string]any{"role": "tool", "tool_call_id": id, "content": "18C"}}}, auth)
		if resp.StatusCode != 200 || chatText(body) != fakeupstream.ToolResultText("18C") {
			t.Fatalf("tool result (stream %v): %d %s", stream, resp.StatusCode, body)
		}
		_, sent := up.LastRequest(label)
		if a := gjson.GetBytes(sent, "messages.1.tool_calls.0.function.arguments"); !a.IsObject() || gjson.GetBytes(sent, "messages.2.tool_name").String() != "get_weather" {
			t.Fatalf("tool turn sent as %s", sent)
		}
	}

	// An Anthropic client, and an Ollama client through /ollama (NDJSON both ways).
	resp, body = g.do("POST", "/v1/messages", map[string]any{"model": "llama3.2:latest", "max_tokens": 50,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "content.0.text").String() != fakeupstream.Content(label) {
		t.Fatalf("messages: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("POST", "/ollama/api/chat", map[string]any{"model": "llama3.2:latest",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
	var text strings.Builder
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	for _, l := range lines {
		text.WriteString(gjson.Get(l, "message.content").String())
	}
	if resp.StatusCode != 200 || text.String() != fakeupstream.Content(label) || !gjson.Get(lines[len(lines)-1], "done").Bool() {
		t.Fatalf("ollama client: %d %s", resp.StatusCode, body)
	}

	// Embeddings through /api/embed.
	resp, body = g.do("POST", "/v1/embeddings", map[string]any{"model": "nomic-embed-text:latest", "input": []string{"a", "b"}}, auth)
	if resp.StatusCode != 200 || len(gjson.GetBytes(body, "data").Array()) != 2 || len(gjson.GetBytes(body, "data.1.embedding").Array()) != fakeupstream.EmbeddingDims {
		t.Fatalf("embeddings: %d %s", resp.StatusCode, body)
	}
	if up.LastPath("ollama:nomic-embed-text:latest") != "/api/embed" {
		t.Fatalf("embeddings went to %s", up.LastPath("ollama:nomic-embed-text:latest"))
	}

	// Broken streams: never a clean end.
	for _, model := range []string{fakeupstream.OllamaTruncatedModel, fakeupstream.OllamaErrorModel} {
		resp, body = g.do("POST", "/v1/chat/completions", map[string]any{"model": model, "stream": true,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
		if strings.Contains(string(body), "[DONE]") || !strings.Contains(string(body), "error") {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, body)
		}
	}

	// A model the server does not have: the upstream's 404, restated.
	g.mustMgmt(200, "PATCH", "/api/providers/"+conn["id"].(string), map[string]any{"verify": false, "models": []string{"not-pulled"}})
	resp, body = g.do("POST", "/v1/chat/completions", map[string]any{"model": "not-pulled",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
	if resp.StatusCode != 404 || !strings.Contains(gjson.GetBytes(body, "error.message").String(), "not found") {
		t.Fatalf("unknown model: %d %s", resp.StatusCode, body)
	}
	g.stop()
}
