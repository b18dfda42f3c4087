package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// addGeminiConn creates a gemini connection (the native Gemini API) to the
// fake, serving gemini-2.5-flash.
func (e *env) addGeminiConn(name, upstreamKey string, priority int) string {
	e.t.Helper()
	base := strings.TrimSuffix(e.upURL, "/v1") + "/v1beta"
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "gemini", "name": name,
		"apiKey": upstreamKey, "baseUrl": base, "priority": priority, "models": []string{"gemini-2.5-flash"}})
	if code != http.StatusCreated {
		e.t.Fatalf("create connection: %d %v", code, m)
	}
	return m["connection"].(map[string]any)["id"].(string)
}

// chatText joins the content deltas of a Chat stream and reports whether it
// ended with [DONE].
func chatText(t *testing.T, body []byte) (text string, done bool, usage gjson.Result) {
	t.Helper()
	for _, ev := range parseSSE(t, body) {
		if ev.data == "[DONE]" {
			done = true
			continue
		}
		d := gjson.Parse(ev.data)
		text += d.Get("choices.0.delta.content").String()
		if u := d.Get("usage"); u.IsObject() {
			usage = u
		}
	}
	return text, done, usage
}

// TestGeminiUpstreamEndToEnd: OpenAI Chat and Anthropic Messages clients
// reach a gemini connection on the native wire (generateContent and
// streamGenerateContent?alt=sse with x-goog-api-key), streaming and not,
// with a tool round trip whose function response is matched to its call.
func TestGeminiUpstreamEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.addGeminiConn("gem", "gk-1", 1)

	// Chat, not streamed.
	resp, body := e.chat("gemini/gemini-2.5-flash", false, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got := gjson.GetBytes(body, "choices.0.message.content").String(); got != fakeupstream.Content("gk-1") {
		t.Fatalf("answer %s", body)
	}
	if p := e.up.LastPath("gk-1"); p != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Fatalf("upstream path %q", p)
	}
	h, sent := e.up.LastRequest("gk-1")
	if h.Get("X-Goog-Api-Key") != "gk-1" || h.Get("Authorization") != "" || gjson.GetBytes(sent, "model").Exists() ||
		gjson.GetBytes(sent, "contents.0.parts.0.text").String() != "hi" {
		t.Fatalf("upstream request %v %s", h, sent)
	}
	if gjson.GetBytes(body, "usage.prompt_tokens").Int() != 10 {
		t.Fatalf("usage %s", body)
	}

	// Chat, streamed.
	resp, body = e.chat("gemini/gemini-2.5-flash", true, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	text, done, _ := chatText(t, body)
	if text != fakeupstream.Content("gk-1") || !done {
		t.Fatalf("stream text %q done %v:\n%s", text, done, body)
	}
	if p := e.up.LastPath("gk-1"); p != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" {
		t.Fatalf("upstream path %q", p)
	}

	// A Messages client with a tool, streamed: the call comes back as tool_use.
	req := map[string]any{"model": "gemini/gemini-2.5-flash", "max_tokens": 256, "stream": true,
		"system": "You are terse.", "tools": []any{weatherTool},
		"messages": []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}}
	resp, body = e.post("/v1/messages", req, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	_, sent = e.up.LastRequest("gk-1")
	if gjson.GetBytes(sent, "systemInstruction.parts.0.text").String() != "You are terse." ||
		gjson.GetBytes(sent, "tools.0.functionDeclarations.0.name").String() != "get_weather" {
		t.Fatalf("upstream body %s", sent)
	}
	var toolID, args, stop string
	for _, ev := range parseSSE(t, body) {
		d := gjson.Parse(ev.data)
		switch ev.event {
		case "content_block_start":
			if d.Get("content_block.type").String() == "tool_use" {
				toolID = d.Get("content_block.id").String()
			}
		case "content_block_delta":
			args += d.Get("delta.partial_json").String()
		case "message_delta":
			stop = d.Get("delta.stop_reason").String()
		}
	}
	if toolID == "" || args != fakeupstream.ToolArguments || stop != "tool_use" {
		t.Fatalf("tool call id=%q args=%q stop=%q\n%s", toolID, args, stop, body)
	}

	// Second turn: the result goes back as a functionResponse named after the
	// call, and the made-up id is not sent to Google.
	req["stream"] = false
	req["messages"] = []any{
		map[string]any{"role": "user", "content": "Weather in Paris?"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": toolID, "name": "get_weather", "input": map[string]any{"city": "Paris"}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": toolID, "content": "sunny"}}},
	}
	resp, body = e.post("/v1/messages", req, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	_, sent = e.up.LastRequest("gk-1")
	fr := gjson.GetBytes(sent, "contents.2.parts.0.functionResponse")
	if fr.Get("name").String() != "get_weather" || fr.Get("response.output").String() != "sunny" ||
		gjson.GetBytes(sent, "contents.1.parts.0.functionCall.name").String() != "get_weather" {
		t.Fatalf("upstream body %s", sent)
	}
	if strings.HasPrefix(toolID, "gcall_") && (fr.Get("id").Exists() || gjson.GetBytes(sent, "contents.1.parts.0.functionCall.id").Exists()) {
		t.Fatalf("a made-up id reached Google: %s", sent)
	}
	if got := gjson.GetBytes(body, "content.0.text").String(); got != fakeupstream.ToolResultText("sunny") {
		t.Fatalf("answer %s", body)
	}
}

// TestGeminiQuotaFailsOver: Google's 429 RESOURCE_EXHAUSTED (a daily quota)
// on the gemini connection is invisible to the client: the next connection
// answers.
func TestGeminiQuotaFailsOver(t *testing.T) {
	e := newEnv(t)
	e.addGeminiConn("gem", "gk-1", 1)
	e.addGeminiConn("gem2", "gk-2", 2)
	e.up.SetFault("gk-1", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Body: fakeupstream.GeminiQuotaPerDayBody})
	for _, stream := range []bool{false, true} {
		resp, body := e.chat("gemini-2.5-flash", stream, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("stream %v: status %d: %s", stream, resp.StatusCode, body)
		}
		got := gjson.GetBytes(body, "choices.0.message.content").String()
		if stream {
			got, _, _ = chatText(t, body)
		}
		if got != fakeupstream.Content("gk-2") {
			t.Fatalf("stream %v: answer %s", stream, body)
		}
	}
	if e.up.Hits("gk-1") == 0 {
		t.Fatal("the first connection was never tried")
	}
}

// TestGeminiStreamCutIsNotAnAnswer: a Gemini stream that stops before its
// finishReason never reaches a Chat client as a complete answer.
func TestGeminiStreamCutIsNotAnAnswer(t *testing.T) {
	e := newEnv(t)
	e.addGeminiConn("gem", "gk-1", 1)
	e.up.SetFault("gk-1", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2})
	resp, body := e.chat("gemini/gemini-2.5-flash", true, nil)
	text, done, _ := chatText(t, body)
	if resp.StatusCode == 200 && done && text != fakeupstream.Content("gk-1") {
		t.Fatalf("a cut stream ended as an answer: %q\n%s", text, body)
	}
	if !done && !strings.Contains(string(body), `"error"`) {
		t.Fatalf("the cut stream ended without an error event:\n%s", body)
	}
}

// TestGeminiDiscoveryAndResponsesClient: a gemini connection created without
// models lists them from Google's native model list (x-goog-api-key, pages
// followed), and a Responses client (Codex) streams a tool call through it.
func TestGeminiDiscoveryAndResponsesClient(t *testing.T) {
	e := newEnv(t)
	e.up.SetGeminiModels([]string{"gemini-2.5-flash", "gemini-2.5-pro", "gemini-x"})
	e.up.SetModelsPageSize(2)
	base := strings.TrimSuffix(e.upURL, "/v1") + "/v1beta"
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "gemini", "name": "disc", "apiKey": "gk-d", "baseUrl": base})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	c := m["connection"].(map[string]any)
	if got := strs(c["discoveredModels"]); strings.Join(got, ",") != "gemini-2.5-flash,gemini-2.5-pro,gemini-x" || c["modelsSource"] != "upstream" {
		t.Fatalf("discovered %v source %v", got, c["modelsSource"])
	}
	// Two model list pages, then the credential check's one-token request.
	if h, body := e.up.LastRequest("gk-d"); h.Get("X-Goog-Api-Key") != "gk-d" || e.up.Hits("gk-d") != 3 ||
		e.up.LastPath("gk-d") != "/v1beta/models/gemini-2.5-flash:generateContent" || gjson.GetBytes(body, "generationConfig.maxOutputTokens").Int() != 1 {
		t.Fatalf("discovery and check: headers %v, %d hits, last %s %s", h, e.up.Hits("gk-d"), e.up.LastPath("gk-d"), body)
	}

	req := map[string]any{"model": "gemini/gemini-x", "instructions": "Be brief.", "stream": true,
		"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Weather?"}}}},
		"tools": []any{map[string]any{"type": "function", "name": "get_weather", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "additionalProperties": false}}}}
	resp, body := e.do("POST", "/v1/responses", req, map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if p := e.up.LastPath("gk-d"); p != "/v1beta/models/gemini-x:streamGenerateContent" {
		t.Fatalf("upstream path %q", p)
	}
	events := parseSSE(t, body)
	last := events[len(events)-1]
	d := gjson.Parse(last.data)
	if last.event != "response.completed" || d.Get(`response.output.#(type=="function_call").name`).String() != "get_weather" ||
		d.Get(`response.output.#(type=="function_call").arguments`).String() != fakeupstream.ToolArguments {
		t.Fatalf("completed response %s", last.data)
	}
}
