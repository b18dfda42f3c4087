package fakeupstream_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate/gemini"
	"omniroute/backend/translate/sse"
	"omniroute/tests/fakeupstream"
)

type geminiFake struct {
	u      *fakeupstream.Upstream
	base   string
	client *http.Client
}

func newGeminiFake(t *testing.T) *geminiFake {
	t.Helper()
	u := fakeupstream.New()
	base := u.Start()
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(func() {
		u.Close()
		tr.CloseIdleConnections()
	})
	return &geminiFake{u: u, base: base, client: &http.Client{Transport: tr}}
}

// do sends a request; key goes in x-goog-api-key unless the path carries ?key=.
func (g *geminiFake) do(t *testing.T, method, path, key, body string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-goog-api-key", key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read: %v", err)
	}
	return resp, b
}

const hiBody = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`

// toChat reads a Gemini SSE stream through the gateway's translator.
func toChat(t *testing.T, wire []byte) (text, reasoning string, calls []gjson.Result, complete bool, usage gjson.Result, err error) {
	t.Helper()
	tr := gemini.NewStreamToChat("m")
	var p sse.Parser
	var out []byte
	feed := func(ev sse.Event) bool {
		out, err = tr.Event(out, ev)
		return err == nil
	}
	if perr := p.Feed(wire, feed); perr != nil {
		t.Fatal(perr)
	}
	if err == nil {
		p.Flush(feed)
	}
	complete = tr.Complete()
	if complete {
		out = tr.End(out)
	}
	_ = (&sse.Parser{}).Feed(out, func(ev sse.Event) bool {
		c := gjson.ParseBytes(ev.Data)
		text += c.Get("choices.0.delta.content").String()
		reasoning += c.Get("choices.0.delta.reasoning_content").String()
		calls = append(calls, c.Get("choices.0.delta.tool_calls").Array()...)
		if u := c.Get("usage"); u.Exists() {
			usage = u
		}
		return true
	})
	return text, reasoning, calls, complete, usage, err
}

func TestGeminiGenerateContent(t *testing.T) {
	g := newGeminiFake(t)
	resp, body := g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:generateContent", "key-g", hiBody)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	chat, err := gemini.ResponseToChat(body, "x")
	if err != nil {
		t.Fatal(err)
	}
	r := gjson.ParseBytes(chat)
	if r.Get("choices.0.message.content").String() != fakeupstream.Content("key-g") || r.Get("model").String() != "gemini-2.5-flash" ||
		r.Get("choices.0.finish_reason").String() != "stop" || r.Get("usage.prompt_tokens").Int() != 10 {
		t.Fatalf("got %s from %s", chat, body)
	}
	if g.u.LastModel("key-g") != "gemini-2.5-flash" || g.u.LastPath("key-g") != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Fatalf("recorded %q %q", g.u.LastModel("key-g"), g.u.LastPath("key-g"))
	}
	// ?key= works too.
	resp, body = g.do(t, "POST", "/v1beta/models/gemini-2.5-pro:generateContent?key=key-q", "", hiBody)
	if resp.StatusCode != 200 || !strings.Contains(string(body), fakeupstream.Content("key-q")) || g.u.Hits("key-q") != 1 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
}

func TestGeminiStreams(t *testing.T) {
	g := newGeminiFake(t)
	resp, body := g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "key-s", hiBody)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if n := strings.Count(string(body), "data: "); n != fakeupstream.DefaultStreamChunks+1 || strings.Count(string(body), "\r\n\r\n") != n {
		t.Fatalf("want %d CRLF-framed events:\n%q", fakeupstream.DefaultStreamChunks+1, body)
	}
	text, _, _, complete, usage, err := toChat(t, body)
	if err != nil || !complete || text != fakeupstream.Content("key-s") || usage.Get("completion_tokens").Int() != fakeupstream.DefaultStreamChunks {
		t.Fatalf("text %q complete %v usage %s err %v", text, complete, usage.Raw, err)
	}
	// Without alt=sse: one JSON array.
	resp, body = g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "key-s", hiBody)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	arr := gjson.ParseBytes(body)
	if !gjson.ValidBytes(body) || !arr.IsArray() || len(arr.Array()) != fakeupstream.DefaultStreamChunks+1 {
		t.Fatalf("not an array of %d chunks: %s", fakeupstream.DefaultStreamChunks+1, body)
	}
	last := arr.Array()[fakeupstream.DefaultStreamChunks]
	if last.Get("candidates.0.finishReason").String() != "STOP" || !last.Get("usageMetadata.candidatesTokenCount").Exists() {
		t.Fatalf("last chunk %s", last.Raw)
	}
}

func TestGeminiToolRoundTripAndThinking(t *testing.T) {
	g := newGeminiFake(t)
	req := `{"contents":[{"role":"user","parts":[{"text":"weather?"}]}],"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]}],
		"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":1024}}}`
	_, body := g.do(t, "POST", "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse", "k", req)
	_, reasoning, calls, complete, usage, err := toChat(t, body)
	if err != nil || !complete || reasoning != fakeupstream.ReasoningText || len(calls) != 1 {
		t.Fatalf("reasoning %q calls %v complete %v err %v\n%s", reasoning, calls, complete, err, body)
	}
	c := calls[0]
	if c.Get("function.name").String() != "get_weather" || c.Get("function.arguments").String() != fakeupstream.ToolArguments ||
		c.Get("extra_content.google.thought_signature").String() != fakeupstream.GeminiThoughtSignature || !strings.HasPrefix(c.Get("id").String(), "gcall_") {
		t.Fatalf("call %s", c.Raw)
	}
	if usage.Get("completion_tokens_details.reasoning_tokens").Int() != fakeupstream.DefaultStreamChunks {
		t.Fatalf("usage %s", usage.Raw)
	}
	// The model turn replayed with its signature and the function response:
	// the answer reads the result.
	next := `{"contents":[{"role":"user","parts":[{"text":"weather?"}]},
		{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"` + fakeupstream.GeminiThoughtSignature + `"}]},
		{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}}]}],
		"tools":[{"functionDeclarations":[{"name":"get_weather"}]}]}`
	resp, body := g.do(t, "POST", "/v1beta/models/gemini-3-pro-preview:generateContent", "k", next)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "candidates.0.content.parts.0.text").String() != fakeupstream.ToolResultText("sunny") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	// Scripted tool calls pick their tool and arguments.
	g.u.SetToolCalls(map[string]string{"run_shell_command": `{"command":"ls"}`})
	_, body = g.do(t, "POST", "/v1beta/models/gemini-2.5-pro:generateContent", "k",
		`{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"run_shell_command"}]}]}`)
	if fc := gjson.GetBytes(body, "candidates.0.content.parts.0.functionCall"); fc.Get("name").String() != "run_shell_command" || fc.Get("args.command").String() != "ls" || fc.Get("id").Exists() {
		t.Fatalf("got %s", body)
	}
}

func TestGeminiContract(t *testing.T) {
	g := newGeminiFake(t)
	tests := []struct {
		name, model, body, want string
	}{
		{"a Chat body", "gemini-2.5-flash", `{"model":"x","messages":[{"role":"user","content":"hi"}]}`, `Unknown name "messages"`},
		{"no contents", "gemini-2.5-flash", `{}`, "contents is not specified"},
		{"bad role", "gemini-2.5-flash", `{"contents":[{"role":"assistant","parts":[{"text":"a"}]}]}`, "valid role"},
		{"empty parts", "gemini-2.5-flash", `{"contents":[{"role":"user","parts":[]}]}`, "must not be empty"},
		{"empty text part", "gemini-2.5-flash", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":""}]}]}`, "required oneof field 'data'"},
		{"additionalProperties", "gemini-2.5-flash", `{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}}]}]}`, `Unknown name "additionalProperties"`},
		{"nested $schema", "gemini-2.5-flash", `{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"object","$schema":"x","properties":{"b":{"type":"string"}}}}}}]}]}`, `Unknown name "$schema"`},
		{"empty properties", "gemini-2.5-flash", `{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{}}}]}]}`, "should be non-empty for OBJECT type"},
		{"unnamed function", "gemini-2.5-flash", `{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"description":"d"}]}]}`, "Invalid function name"},
		{"responses ≠ calls", "gemini-2.5-flash", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"a"}},{"functionCall":{"name":"b"}}]},{"role":"user","parts":[{"functionResponse":{"name":"a","response":{}}}]}]}`, "number of function response parts"},
		{"gemini-3 without signature", "gemini-3-pro-preview", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"a"}}]},{"role":"user","parts":[{"functionResponse":{"name":"a","response":{}}}]}]}`, "thought_signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := g.do(t, "POST", "/v1beta/models/"+tt.model+":generateContent", "k", tt.body)
			e, ok := gemini.ParseError(body)
			if resp.StatusCode != 400 || !ok || e.Status != "INVALID_ARGUMENT" || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
		})
	}
	// The same function-call history is fine for gemini-2.5, and with a signature.
	ok := `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"a"}}]},{"role":"user","parts":[{"functionResponse":{"name":"a","response":{}}}]}]}`
	if resp, body := g.do(t, "POST", "/v1beta/models/gemini-2.5-pro:generateContent", "k", ok); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	// Without a key: 403 PERMISSION_DENIED, counted under "".
	resp, body := g.do(t, "POST", "/v1beta/models/gemini-2.5-pro:generateContent", "", hiBody)
	if e, _ := gemini.ParseError(body); resp.StatusCode != 403 || e.Status != "PERMISSION_DENIED" || g.u.Hits("") != 1 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	// Unknown method.
	if resp, _ := g.do(t, "POST", "/v1beta/models/gemini-2.5-pro:predict", "k", hiBody); resp.StatusCode != 404 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestGeminiStatusFaults(t *testing.T) {
	g := newGeminiFake(t)
	tests := []struct {
		name   string
		fault  fakeupstream.Fault
		status int
		code   string
		quota  gemini.QuotaScope
		retry  time.Duration
	}{
		{"429 per minute (default body)", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429}, 429, "RESOURCE_EXHAUSTED", gemini.QuotaPerMinute, 37 * time.Second},
		{"429 per day", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Body: fakeupstream.GeminiQuotaPerDayBody}, 429, "RESOURCE_EXHAUSTED", gemini.QuotaPerDay, 22 * time.Second},
		{"503", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503}, 503, "UNAVAILABLE", gemini.QuotaUnknown, 0},
		{"403", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403}, 403, "PERMISSION_DENIED", gemini.QuotaUnknown, 0},
		{"400", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400}, 400, "INVALID_ARGUMENT", gemini.QuotaUnknown, 0},
		{"400 bad key", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Body: fakeupstream.GeminiInvalidKeyBody}, 400, "INVALID_ARGUMENT", gemini.QuotaUnknown, 0},
		{"400 region", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Body: fakeupstream.GeminiFailedPreconditionBody}, 400, "FAILED_PRECONDITION", gemini.QuotaUnknown, 0},
		{"500", fakeupstream.Fault{Mode: fakeupstream.ModeStatus}, 500, "INTERNAL", gemini.QuotaUnknown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fault
			f.Times = 1
			g.u.SetFault("kf", f)
			for _, path := range []string{":generateContent", ":streamGenerateContent?alt=sse"} {
				g.u.SetFault("kf", f)
				resp, body := g.do(t, "POST", "/v1beta/models/gemini-2.5-flash"+path, "kf", hiBody)
				e, ok := gemini.ParseError(body)
				if resp.StatusCode != tt.status || !ok || e.Status != tt.code || e.Quota != tt.quota || e.RetryDelay != tt.retry {
					t.Fatalf("%s: status %d, parsed %+v from %s", path, resp.StatusCode, e, body)
				}
			}
			// Times: 1 — the next request is answered.
			if resp, _ := g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:generateContent", "kf", hiBody); resp.StatusCode != 200 {
				t.Fatalf("fault outlived Times: %d", resp.StatusCode)
			}
		})
	}
}

func TestGeminiStreamFaults(t *testing.T) {
	g := newGeminiFake(t)
	path := "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"

	// A cut after 2 chunks: the text so far, no finishReason, not complete.
	g.u.SetFault("k", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
	_, body := g.do(t, "POST", path, "k", hiBody)
	text, _, _, complete, _, err := toChat(t, body)
	if err != nil || complete || text == "" || !strings.HasPrefix(fakeupstream.Content("k"), text) || text == fakeupstream.Content("k") {
		t.Fatalf("cut: text %q complete %v err %v\n%s", text, complete, err, body)
	}

	// An in-stream error after 1 chunk: Google's UNAVAILABLE.
	g.u.SetFault("k", fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, AfterChunks: 1, Times: 1})
	_, body = g.do(t, "POST", path, "k", hiBody)
	_, _, _, complete, _, err = toChat(t, body)
	var ue *gemini.UpstreamStreamError
	if !errors.As(err, &ue) || ue.Code != "UNAVAILABLE" || complete {
		t.Fatalf("error event: %v\n%s", err, body)
	}

	// The same in the JSON-array framing: the error is the array's last element.
	g.u.SetFault("k", fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, AfterChunks: 1, Times: 1})
	_, body = g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "k", hiBody)
	arr := gjson.ParseBytes(body).Array()
	if !gjson.ValidBytes(body) || len(arr) != 2 || arr[1].Get("error.status").String() != "UNAVAILABLE" {
		t.Fatalf("array error: %s", body)
	}

	// A reset mid-stream: the body ends early (the client sees the cut).
	g.u.SetFault("k", fakeupstream.Fault{Mode: fakeupstream.ModeResetMidStream, AfterChunks: 1, Times: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", g.base+path, strings.NewReader(hiBody))
	req.Header.Set("x-goog-api-key", "k")
	resp, err := g.client.Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("reset mid-stream read cleanly")
	}

	// A malformed chunk is skipped by the translator; the stream still completes.
	g.u.SetFault("k", fakeupstream.Fault{Mode: fakeupstream.ModeMalformedEvent, AfterChunks: 1, Times: 1})
	_, body = g.do(t, "POST", path, "k", hiBody)
	if !strings.Contains(string(body), fakeupstream.MalformedGeminiData) {
		t.Fatalf("no malformed chunk: %s", body)
	}
	if _, _, _, complete, _, err = toChat(t, body); err != nil || !complete {
		t.Fatalf("malformed: complete %v err %v", complete, err)
	}
}

func TestGeminiModelsPaging(t *testing.T) {
	g := newGeminiFake(t)
	g.u.SetGeminiModels([]string{"gemini-a", "gemini-b", "gemini-c", "embedding-x", "gemini-d"})
	var names []string
	token, pages := "", 0
	for {
		path := "/v1beta/models?pageSize=2"
		if token != "" {
			path += "&pageToken=" + token
		}
		resp, body := g.do(t, "GET", path, "km", "")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		pages++
		for _, m := range gjson.GetBytes(body, "models").Array() {
			names = append(names, m.Get("name").String())
			if !m.Get("supportedGenerationMethods").IsArray() || m.Get("inputTokenLimit").Int() == 0 {
				t.Fatalf("model %s", m.Raw)
			}
		}
		token = gjson.GetBytes(body, "nextPageToken").String()
		if token == "" {
			break
		}
	}
	if pages != 3 || strings.Join(names, ",") != "models/gemini-a,models/gemini-b,models/gemini-c,models/embedding-x,models/gemini-d" {
		t.Fatalf("%d pages: %v", pages, names)
	}
	// One page by default (50 a page).
	if _, body := g.do(t, "GET", "/v1beta/models", "km", ""); len(gjson.GetBytes(body, "models").Array()) != 5 || gjson.GetBytes(body, "nextPageToken").Exists() {
		t.Fatalf("got %s", body)
	}
	if resp, _ := g.do(t, "GET", "/v1beta/models?pageToken=bogus", "km", ""); resp.StatusCode != 400 {
		t.Fatalf("bad token: %d", resp.StatusCode)
	}
	if resp, body := g.do(t, "GET", "/v1beta/models/gemini-c", "km", ""); resp.StatusCode != 200 || gjson.GetBytes(body, "name").String() != "models/gemini-c" {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}
	if resp, _ := g.do(t, "GET", "/v1beta/models/nope", "km", ""); resp.StatusCode != 404 {
		t.Fatalf("unknown model: %d", resp.StatusCode)
	}
	if resp, _ := g.do(t, "GET", "/v1beta/models", "", ""); resp.StatusCode != 403 {
		t.Fatalf("no key: %d", resp.StatusCode)
	}
	g.u.SetFault("km", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503, Times: 1})
	if resp, _ := g.do(t, "GET", "/v1beta/models", "km", ""); resp.StatusCode != 503 {
		t.Fatalf("fault: %d", resp.StatusCode)
	}
}

func TestGeminiCountTokens(t *testing.T) {
	g := newGeminiFake(t)
	resp, body := g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:countTokens", "kc", `{"contents":[{"parts":[{"text":"12345678"}]}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if n, err := gemini.ParseCountTokens(body); err != nil || n != 2 {
		t.Fatalf("got %d %v: %s", n, err, body)
	}
	wrapped, err := gemini.CountRequestFromGenerate([]byte(`{"contents":[{"parts":[{"text":"1234"}]}],"generationConfig":{}}`), "gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	_, body = g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:countTokens", "kc", string(wrapped))
	if n, _ := gemini.ParseCountTokens(body); n != 1 {
		t.Fatalf("wrapped: %s", body)
	}
	if resp, _ := g.do(t, "POST", "/v1beta/models/gemini-2.5-flash:countTokens", "kc", `{}`); resp.StatusCode != 400 {
		t.Fatalf("no contents: %d", resp.StatusCode)
	}
}

// TestGeminiBatchEmbed: :batchEmbedContents answers one embedding per
// request in order, cut to outputDimensionality, and refuses what Google
// refuses.
func TestGeminiBatchEmbed(t *testing.T) {
	g := newGeminiFake(t)
	const path = "/v1beta/models/gemini-embedding-001:batchEmbedContents"
	for _, tt := range []struct {
		name, key, body string
		status, n, dims int
	}{
		{"two", "ke", `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]}},` +
			`{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"b"}]},"outputDimensionality":3}]}`, 200, 2, fakeupstream.EmbeddingDims},
		{"other model", "ke", `{"requests":[{"model":"models/other","content":{"parts":[{"text":"a"}]}}]}`, 400, 0, 0},
		{"no text", "ke", `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[]}}]}`, 400, 0, 0},
		{"no requests", "ke", `{}`, 400, 0, 0},
		{"no key", "", `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]}}]}`, 403, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := g.do(t, "POST", path, tt.key, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if tt.status != 200 {
				if gjson.GetBytes(body, "error.status").String() == "" {
					t.Fatalf("not Google's error shape: %s", body)
				}
				return
			}
			embs := gjson.GetBytes(body, "embeddings").Array()
			if len(embs) != tt.n || len(embs[0].Get("values").Array()) != tt.dims || len(embs[1].Get("values").Array()) != 3 {
				t.Fatalf("answer: %s", body)
			}
			if gjson.GetBytes(body, "usageMetadata").Exists() {
				t.Fatalf("Google sends no token counts for embeddings: %s", body)
			}
		})
	}
}
