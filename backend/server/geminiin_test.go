package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// gemini posts a Gemini-native call (path under /v1beta/models/) with the
// client key in x-goog-api-key.
func (e *env) gemini(path string, body any) (*http.Response, []byte) {
	e.t.Helper()
	return e.do("POST", "/v1beta/models/"+path, body, map[string]string{"x-goog-api-key": e.key})
}

// geminiChunks returns the chunks of a streamGenerateContent answer in either
// framing, checking the framing matches the Content-Type.
func geminiChunks(t *testing.T, resp *http.Response, body []byte) []gjson.Result {
	t.Helper()
	var out []gjson.Result
	switch ct := resp.Header.Get("Content-Type"); ct {
	case "text/event-stream":
		for _, ev := range parseSSE(t, body) {
			if !json.Valid([]byte(ev.data)) {
				t.Fatalf("an SSE event is not JSON: %q", ev.data)
			}
			out = append(out, gjson.Parse(ev.data))
		}
	case "application/json":
		if !json.Valid(body) || !gjson.ParseBytes(body).IsArray() {
			t.Fatalf("the JSON-array stream is not one JSON array: %s", body)
		}
		out = gjson.ParseBytes(body).Array()
	default:
		t.Fatalf("Content-Type %q: %s", ct, body)
	}
	return out
}

// geminiAnswer joins the text parts of a (streamed or whole) Gemini answer
// and returns its function calls, last finishReason and usageMetadata.
func geminiAnswer(chunks []gjson.Result) (text string, calls []gjson.Result, finish string, usage gjson.Result) {
	for _, c := range chunks {
		for _, p := range c.Get("candidates.0.content.parts").Array() {
			if p.Get("thought").Bool() {
				continue
			}
			text += p.Get("text").String()
			if fc := p.Get("functionCall"); fc.Exists() {
				calls = append(calls, fc)
			}
		}
		if f := c.Get("candidates.0.finishReason").String(); f != "" {
			finish = f
		}
		if u := c.Get("usageMetadata"); u.IsObject() {
			usage = u
		}
	}
	return text, calls, finish, usage
}

var geminiHello = map[string]any{"contents": []map[string]any{{"role": "user", "parts": []map[string]any{{"text": "hi"}}}}}

// TestGeminiNativeClient: a Gemini-native client (the Gemini CLI's wire) gets
// generateContent and streamGenerateContent (SSE with alt=sse, one JSON array
// without it) from OpenAI-, Anthropic- and Gemini-format upstreams, with
// usageMetadata and a 429 on the first connection it never sees.
func TestGeminiNativeClient(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("openai-compatible", "limited", "gi-limited", 1, "gpt-4o-mini")
	e.addModelConn("openai-compatible", "spare", "gi-openai", 2, "gpt-4o-mini")
	e.addModelConn("anthropic-compatible", "claude", "gi-claude", 3, "claude-sonnet-4-5")
	e.addGeminiConn("gem", "gi-gem", 4)
	e.up.SetFault("gi-limited", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "60"}})

	wires := []struct{ model, label string }{
		{"gpt-4o-mini", "gi-openai"}, {"claude-sonnet-4-5", "gi-claude"}, {"gemini-2.5-flash", "gi-gem"},
	}
	for _, w := range wires {
		t.Run(w.model+" whole", func(t *testing.T) {
			resp, body := e.gemini(w.model+":generateContent", geminiHello)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			text, _, finish, usage := geminiAnswer([]gjson.Result{gjson.ParseBytes(body)})
			if text != fakeupstream.Content(w.label) || finish != "STOP" || gjson.GetBytes(body, "candidates.0.content.role").String() != "model" {
				t.Fatalf("answer %s", body)
			}
			if usage.Get("promptTokenCount").Int() <= 0 || usage.Get("totalTokenCount").Int() <= 0 {
				t.Fatalf("usageMetadata %s", body)
			}
		})
		for _, sse := range []bool{true, false} {
			name := w.model + " streamed, JSON array"
			path := w.model + ":streamGenerateContent"
			if sse {
				name, path = w.model+" streamed, SSE", path+"?alt=sse"
			}
			t.Run(name, func(t *testing.T) {
				resp, body := e.gemini(path, geminiHello)
				if resp.StatusCode != 200 {
					t.Fatalf("%d %s", resp.StatusCode, body)
				}
				if want := map[bool]string{true: "text/event-stream", false: "application/json"}[sse]; resp.Header.Get("Content-Type") != want {
					t.Fatalf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), want)
				}
				chunks := geminiChunks(t, resp, body)
				text, _, finish, usage := geminiAnswer(chunks)
				if text != fakeupstream.Content(w.label) || finish != "STOP" || usage.Get("totalTokenCount").Int() <= 0 {
					t.Fatalf("text %q finish %q usage %s:\n%s", text, finish, usage.Raw, body)
				}
				if strings.Contains(string(body), "[DONE]") || strings.Contains(string(body), "chat.completion") {
					t.Fatalf("OpenAI framing leaked into the Gemini stream:\n%s", body)
				}
			})
		}
	}
	if e.up.Hits("gi-limited") == 0 {
		t.Fatal("the first connection (429) was never tried")
	}

	t.Run("Gemini upstream: the body passes with the model in the URL, empty parts dropped", func(t *testing.T) {
		body := map[string]any{"model": "gpt-4o-mini", "contents": []map[string]any{
			{"role": "user", "parts": []map[string]any{{"text": "hi"}}},
			{"role": "model", "parts": []map[string]any{{"text": "hello"}, {"text": ""}}},
			{"role": "model", "parts": []map[string]any{{"text": ""}}},
			{"role": "user", "parts": []map[string]any{{"text": "again"}}},
		}, "generationConfig": map[string]any{"temperature": 0.2}}
		resp, out := e.gemini("gemini-2.5-flash:generateContent", body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, out)
		}
		if p := e.up.LastPath("gi-gem"); p != "/v1beta/models/gemini-2.5-flash:generateContent" {
			t.Fatalf("the body's model routed: upstream path %q", p)
		}
		_, sent := e.up.LastRequest("gi-gem")
		if strings.Contains(string(sent), `"text":""`) || gjson.GetBytes(sent, "contents.#").Int() != 3 ||
			gjson.GetBytes(sent, "generationConfig.temperature").Float() != 0.2 {
			t.Fatalf("upstream body %s", sent)
		}
	})

	t.Run("countTokens and models", func(t *testing.T) {
		resp, body := e.gemini("gpt-4o-mini:countTokens", geminiHello)
		if resp.StatusCode != 200 || gjson.GetBytes(body, "totalTokens").Int() <= 0 {
			t.Fatalf("countTokens %d %s", resp.StatusCode, body)
		}
		resp, body = e.do("GET", "/v1beta/models?key="+e.key, nil, nil)
		names := map[string]bool{}
		for _, m := range gjson.GetBytes(body, "models").Array() {
			names[m.Get("name").String()] = true
		}
		if resp.StatusCode != 200 || !names["models/gpt-4o-mini"] || !names["models/claude-sonnet-4-5"] || !names["models/gemini-2.5-flash"] {
			t.Fatalf("models %d %s", resp.StatusCode, body)
		}
		resp, body = e.do("GET", "/v1beta/models/claude-sonnet-4-5", nil, map[string]string{"x-goog-api-key": e.key})
		if resp.StatusCode != 200 || gjson.GetBytes(body, "name").String() != "models/claude-sonnet-4-5" {
			t.Fatalf("one model %d %s", resp.StatusCode, body)
		}
		resp, body = e.do("GET", "/v1beta/models/nope", nil, map[string]string{"x-goog-api-key": e.key})
		if resp.StatusCode != 404 || gjson.GetBytes(body, "error.status").String() != "NOT_FOUND" {
			t.Fatalf("unknown model %d %s", resp.StatusCode, body)
		}
	})
}

// TestGeminiNativeToolRoundTrip: a functionCall with its id comes back to the
// Gemini client (whole and streamed), and its functionResponse reaches an
// OpenAI- and an Anthropic-format upstream as the answer to that call.
func TestGeminiNativeToolRoundTrip(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("openai-compatible", "openai", "gt-openai", 1, "gpt-4o-mini")
	e.addModelConn("anthropic-compatible", "claude", "gt-claude", 2, "claude-sonnet-4-5")
	tools := []map[string]any{{"functionDeclarations": []map[string]any{{"name": "get_weather", "description": "Weather",
		"parameters": map[string]any{"type": "OBJECT", "properties": map[string]any{"city": map[string]any{"type": "STRING"}}}}}}}
	ask := []map[string]any{{"role": "user", "parts": []map[string]any{{"text": "weather in Paris?"}}}}
	for _, w := range []struct{ model, label string }{{"gpt-4o-mini", "gt-openai"}, {"claude-sonnet-4-5", "gt-claude"}} {
		for _, path := range []string{":generateContent", ":streamGenerateContent?alt=sse", ":streamGenerateContent"} {
			resp, body := e.gemini(w.model+path, map[string]any{"contents": ask, "tools": tools})
			if resp.StatusCode != 200 {
				t.Fatalf("%s%s: %d %s", w.model, path, resp.StatusCode, body)
			}
			chunks := []gjson.Result{gjson.ParseBytes(body)}
			if strings.Contains(path, "stream") {
				chunks = geminiChunks(t, resp, body)
			}
			_, calls, finish, _ := geminiAnswer(chunks)
			if len(calls) != 1 || calls[0].Get("name").String() != "get_weather" || calls[0].Get("args.city").String() != "Paris" ||
				calls[0].Get("id").String() == "" || finish != "STOP" {
				t.Fatalf("%s%s: calls %v finish %q in %s", w.model, path, calls, finish, body)
			}
			if path != ":generateContent" {
				continue
			}
			id := calls[0].Get("id").String()
			history := append(append([]map[string]any{}, ask...),
				map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": json.RawMessage(calls[0].Raw)}, map[string]any{"text": ""}}},
				map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"id": id, "name": "get_weather",
					"response": map[string]any{"output": "sunny, 21C"}}}}})
			resp, body = e.gemini(w.model+":generateContent", map[string]any{"contents": history, "tools": tools})
			text, _, _, _ := geminiAnswer([]gjson.Result{gjson.ParseBytes(body)})
			if resp.StatusCode != 200 || text != fakeupstream.ToolResultText("sunny, 21C") {
				t.Fatalf("%s tool result turn: %d %s", w.model, resp.StatusCode, body)
			}
			_, sent := e.up.LastRequest(w.label)
			if w.label == "gt-openai" {
				if gjson.GetBytes(sent, "messages.1.tool_calls.0.id").String() != id || gjson.GetBytes(sent, "messages.2.tool_call_id").String() != id {
					t.Fatalf("the ids did not reach the upstream: %s", sent)
				}
			} else {
				use := gjson.GetBytes(sent, `messages.1.content.#(type=="tool_use")`)
				res := gjson.GetBytes(sent, `messages.2.content.#(type=="tool_result")`)
				if use.Get("id").String() != id || res.Get("tool_use_id").String() != id {
					t.Fatalf("the ids did not reach the upstream: %s", sent)
				}
			}
		}
	}
}

// TestGeminiNativeEdge: Google's error shape for every refusal (the edge's
// included), the key by x-goog-api-key or ?key=, allowedModels on the URL's
// model (a body "model" cannot override it), and hostile model names in the
// URL refused with a clear 4xx.
func TestGeminiNativeEdge(t *testing.T) {
	e := newEnv(t)
	e.addModelConn("openai-compatible", "openai", "ge-openai", 1, "gpt-4o-mini", "gpt-4o")
	googleErr := func(t *testing.T, resp *http.Response, body []byte, status int, name string) {
		t.Helper()
		r := gjson.ParseBytes(body)
		if resp.StatusCode != status || r.Get("error.code").Int() != int64(status) || r.Get("error.status").String() != name ||
			r.Get("error.message").String() == "" || r.Get("error.type").Exists() {
			t.Fatalf("want %d %s in Google's shape, got %d %s", status, name, resp.StatusCode, body)
		}
	}

	t.Run("keys", func(t *testing.T) {
		resp, body := e.do("POST", "/v1beta/models/gpt-4o-mini:generateContent?key="+e.key, geminiHello, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("?key=: %d %s", resp.StatusCode, body)
		}
		resp, body = e.do("POST", "/v1beta/models/gpt-4o-mini:generateContent", geminiHello, map[string]string{"Authorization": "Bearer " + e.key})
		if resp.StatusCode != 200 {
			t.Fatalf("Bearer: %d %s", resp.StatusCode, body)
		}
		resp, body = e.do("POST", "/v1beta/models/gpt-4o-mini:generateContent", geminiHello, nil)
		googleErr(t, resp, body, 401, "UNAUTHENTICATED")
		resp, body = e.do("POST", "/v1beta/models/gpt-4o-mini:generateContent", geminiHello, map[string]string{"x-goog-api-key": "sk-wrong"})
		googleErr(t, resp, body, 401, "UNAUTHENTICATED")
		// Google's v1 (GOOGLE_GENAI_API_VERSION=v1): the same API under /v1/models/.
		resp, body = e.do("POST", "/v1/models/gpt-4o-mini:streamGenerateContent?alt=sse", geminiHello, map[string]string{"x-goog-api-key": e.key})
		if text, _, finish, _ := geminiAnswer(geminiChunks(t, resp, body)); resp.StatusCode != 200 || text != fakeupstream.Content("ge-openai") || finish != "STOP" {
			t.Fatalf("v1: %d %s", resp.StatusCode, body)
		}
		resp, body = e.do("POST", "/v1/models/gpt-4o-mini:generateContent", geminiHello, nil)
		googleErr(t, resp, body, 401, "UNAUTHENTICATED")
		// ?key= is only read on the Gemini routes.
		resp, body = e.do("POST", "/v1/chat/completions?key="+e.key, map[string]any{"model": "gpt-4o-mini",
			"messages": []map[string]any{{"role": "user", "content": "hi"}}}, nil)
		if resp.StatusCode != 401 || gjson.GetBytes(body, "error.code").String() != "API_KEY_REQUIRED" {
			t.Fatalf("?key= on /v1/chat/completions: %d %s", resp.StatusCode, body)
		}
		resp, body = e.do("POST", "/v1beta/models/gpt-4o-mini:generateContent", geminiHello,
			map[string]string{"x-goog-api-key": e.key, "Host": "evil.example"})
		googleErr(t, resp, body, 403, "PERMISSION_DENIED")
	})

	t.Run("errors in Google's shape", func(t *testing.T) {
		for _, c := range []struct {
			path   string
			body   any
			status int
			name   string
		}{
			{"nope:generateContent", geminiHello, 404, "NOT_FOUND"},
			{"gpt-4o-mini:generateContent", `{"contents":"x"}`, 400, "INVALID_ARGUMENT"},
			{"gpt-4o-mini:generateContent", `{"contents":[{"role":"user","parts":[{"text":""}]}]}`, 400, "INVALID_ARGUMENT"},
			{"gpt-4o-mini:generateContent", `not json`, 400, "INVALID_ARGUMENT"},
			{"gpt-4o-mini:streamGenerateContent?alt=proto", geminiHello, 400, "INVALID_ARGUMENT"},
			{"gpt-4o-mini:predict", geminiHello, 404, "NOT_FOUND"},
			{"gpt-4o-mini:embedContent", geminiHello, 400, "INVALID_ARGUMENT"}, // no "content"
			{"gpt-4o-mini", geminiHello, 404, "NOT_FOUND"},
		} {
			resp, body := e.gemini(c.path, c.body)
			googleErr(t, resp, body, c.status, c.name)
		}
		resp, body := e.do("DELETE", "/v1beta/models/gpt-4o-mini:generateContent", nil, map[string]string{"x-goog-api-key": e.key})
		googleErr(t, resp, body, 405, "INVALID_ARGUMENT")
		e.up.SetFault("ge-openai", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
		resp, body = e.gemini("gpt-4o-mini:generateContent", geminiHello)
		if resp.StatusCode < 500 || gjson.GetBytes(body, "error.status").String() == "" || gjson.GetBytes(body, "error.code").Int() != int64(resp.StatusCode) {
			t.Fatalf("upstream down: %d %s", resp.StatusCode, body)
		}
		e.up.ClearFaults()
	})

	t.Run("allowedModels on the URL's model", func(t *testing.T) {
		code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "limited", "allowedModels": []string{"gpt-4o-mini"}})
		if code != http.StatusCreated {
			t.Fatalf("create key: %d %v", code, m)
		}
		key := m["key"].(string)
		hdr := map[string]string{"x-goog-api-key": key}
		resp, body := e.do("POST", "/v1beta/models/gpt-4o-mini:generateContent", geminiHello, hdr)
		if resp.StatusCode != 200 {
			t.Fatalf("allowed model: %d %s", resp.StatusCode, body)
		}
		withModel := map[string]any{"model": "gpt-4o-mini", "contents": geminiHello["contents"]}
		resp, body = e.do("POST", "/v1beta/models/gpt-4o:generateContent", withModel, hdr)
		googleErr(t, resp, body, 403, "PERMISSION_DENIED")
		if e.up.LastModel("ge-openai") == "gpt-4o" {
			t.Fatal("the refused model reached the upstream")
		}
	})

	t.Run("hostile model names", func(t *testing.T) {
		for _, path := range []string{
			"/v1beta/models/" + strings.Repeat("m", 300) + ":generateContent",
			"/v1beta/models/a%2Fb:generateContent",
			"/v1beta/models/..%2F..%2Fapi%2Fkeys:generateContent",
			"/v1beta/models/%2e%2e/x:generateContent",
			"/v1beta/models/a//b:generateContent",
			"/v1beta/models/gpt%00x:generateContent",
			"/v1beta/models/gpt%20x:generateContent",
			"/v1beta/models/gpt%25x:generateContent",
			"/v1beta/models/:generateContent",
		} {
			resp, body := e.do("POST", path, geminiHello, map[string]string{"x-goog-api-key": e.key})
			googleErr(t, resp, body, 400, "INVALID_ARGUMENT")
			if gjson.GetBytes(body, "error.details.0.reason").String() != "INVALID_MODEL" {
				t.Fatalf("%s: %s", path, body)
			}
		}
		// provider/model names route as on the other APIs.
		resp, body := e.gemini("openai-compatible/gpt-4o-mini:generateContent", geminiHello)
		if resp.StatusCode != 200 {
			t.Fatalf("provider/model: %d %s", resp.StatusCode, body)
		}
	})
}

// TestGeminiNativeStreamFaults: a stream cut (or an error event) after text
// reached a Gemini client ends with Google's error object in the client's
// framing (the JSON array closed, so it stays one valid array), never a
// clean finish; a fault before any text fails over unseen.
func TestGeminiNativeStreamFaults(t *testing.T) {
	for _, up := range []string{"openai-compatible", "gemini"} {
		for _, alt := range []string{"?alt=sse", ""} {
			for _, f := range []struct {
				name     string
				fault    fakeupstream.Fault
				failover bool
			}{
				{"cut after 2 events", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2}, false},
				{"error event after 2", fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, AfterChunks: 2}, false},
				{"cut before content", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 0}, true},
			} {
				t.Run(up+alt+"/"+f.name, func(t *testing.T) {
					e := newEnv(t)
					model := "gpt-4o-mini"
					if up == "gemini" {
						model = "gemini-2.5-flash"
						e.addGeminiConn("first", "gf-a", 1)
						e.addGeminiConn("second", "gf-b", 2)
					} else {
						e.addModelConn(up, "first", "gf-a", 1, model)
						e.addModelConn(up, "second", "gf-b", 2, model)
					}
					e.up.SetFault("gf-a", f.fault)
					resp, body := e.gemini(model+":streamGenerateContent"+alt, geminiHello)
					if resp.StatusCode != 200 {
						t.Fatalf("%d %s", resp.StatusCode, body)
					}
					chunks := geminiChunks(t, resp, body) // also: the array is valid JSON
					text, _, finish, _ := geminiAnswer(chunks)
					lastErr := chunks[len(chunks)-1].Get("error")
					if f.failover {
						if text != fakeupstream.Content("gf-b") || finish != "STOP" || lastErr.Exists() {
							t.Fatalf("want the second connection's whole answer: %s", body)
						}
						return
					}
					if text == fakeupstream.Content("gf-b") && finish == "STOP" && !lastErr.Exists() {
						return // the fault came before the first flush: failing over was still safe
					}
					if finish == "STOP" || !lastErr.Exists() || lastErr.Get("status").String() == "" || lastErr.Get("code").Int() < 500 {
						t.Fatalf("want Google's error object last and no clean finish:\n%s", body)
					}
				})
			}
		}
	}
}

// TestGeminiNativeUsageLogged: the request log counts a Gemini client's
// tokens, whole and streamed, from a Gemini upstream (usageMetadata passed
// through) and an OpenAI one (usage translated).
func TestGeminiNativeUsageLogged(t *testing.T) {
	for _, c := range []struct{ name, path string }{
		{"gemini whole", "gemini-2.5-flash:generateContent"},
		{"gemini streamed", "gemini-2.5-flash:streamGenerateContent"},
		{"openai whole", "gpt-4o-mini:generateContent"},
		{"openai streamed", "gpt-4o-mini:streamGenerateContent?alt=sse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.addGeminiConn("gem", "gu-gem", 1)
			e.addModelConn("openai-compatible", "openai", "gu-openai", 2, "gpt-4o-mini")
			resp, body := e.gemini(c.path, geminiHello)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			e.restart() // flushes the request log
			_, logs := e.mgmt("GET", "/api/logs?limit=1", nil)
			row := logs["logs"].([]any)[0].(map[string]any)
			if row["promptTokens"] != float64(10) || row["completionTokens"] != float64(5) {
				t.Fatalf("log row: %v", row)
			}
		})
	}
}

// TestGeminiNativeClientOnResponsesWire: a Gemini client's call served by a
// codex connection (the Responses wire, through the Chat hub), whole and
// streamed in both framings, the Codex backend's wire contract kept.
func TestGeminiNativeClientOnResponsesWire(t *testing.T) {
	s := newSubEnv(t, codexClientID, "codex")
	_, access := s.codexConn()
	hdr := map[string]string{"x-goog-api-key": s.key}
	for _, path := range []string{":generateContent", ":streamGenerateContent?alt=sse", ":streamGenerateContent"} {
		resp, body := s.do("POST", "/v1beta/models/codex/gpt-5-codex"+path, geminiHello, hdr)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		chunks := []gjson.Result{gjson.ParseBytes(body)}
		if path != ":generateContent" {
			chunks = geminiChunks(t, resp, body)
		}
		if text, _, finish, _ := geminiAnswer(chunks); text != fakeupstream.Content(access) || finish != "STOP" {
			t.Fatalf("%s: text %q finish %q\n%s", path, text, finish, body)
		}
		h, sent := s.up.LastRequest(access)
		if msg := fakeupstream.CodexContractError(h, sent); msg != "" || s.up.LastPath(access) != "/backend-api/codex/responses" {
			t.Fatalf("%s: wire contract: %s (path %s)", path, msg, s.up.LastPath(access))
		}
	}
}

// TestGeminiNativeStreamIsContinued: a Gemini client's SSE stream cut after
// text is finished by the other Anthropic connection (which takes a
// prefill): one answer, no comment line (Google's SDK reads only data
// events), the delivered text sent as a trailing model turn without the
// thinking options; the JSON-array framing is not spliced (an error ends it).
func TestGeminiNativeStreamIsContinued(t *testing.T) {
	for _, alt := range []string{"?alt=sse", ""} {
		t.Run("alt="+alt, func(t *testing.T) {
			e := newEnv(t)
			e.addAnthropicConn("first", "key-a", 1)
			e.addAnthropicConn("second", "key-b", 2)
			e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: fakeupstream.DefaultStreamChunks + 2, Times: 1})
			body := map[string]any{"contents": geminiHello["contents"], "generationConfig": map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 2048}}}
			resp, out := e.gemini("anthropic-compatible/claude-sonnet-4-5:streamGenerateContent"+alt, body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, out)
			}
			chunks := geminiChunks(t, resp, out)
			text, _, finish, _ := geminiAnswer(chunks)
			if alt == "" {
				if finish == "STOP" || !chunks[len(chunks)-1].Get("error").Exists() {
					t.Fatalf("the JSON array was spliced:\n%s", out)
				}
				return
			}
			if text != fakeupstream.Content("key-b") || finish != "STOP" || strings.Contains(string(out), "\n:") || strings.HasPrefix(string(out), ":") {
				t.Fatalf("text %q finish %q, want %q continued:\n%s", text, finish, fakeupstream.Content("key-b"), out)
			}
			_, sent := e.up.LastRequest("key-b")
			if gjson.GetBytes(sent, "thinking").Exists() || gjson.GetBytes(sent, "messages.@reverse.0.role").String() != "assistant" {
				t.Fatalf("the continuation asked for thinking or carried no prefill: %s", sent)
			}
		})
	}
}
