package fakeupstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestHappyPathJSON(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name      string
		call      call
		modelPath string
		textPath  string
	}{
		{"openai", call{format: FormatOpenAI, key: "key-a", model: "gpt-x"}, "model", "choices.0.message.content"},
		{"anthropic x-api-key", call{format: FormatAnthropic, key: "key-b", model: "claude-x"}, "model", "content.0.text"},
		{"anthropic bearer", call{format: FormatAnthropic, key: "key-c", bearer: true, model: "claude-y"}, "model", "content.0.text"},
		{"unicode key", call{format: FormatOpenAI, key: "clé-ü", model: "m"}, "model", "choices.0.message.content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // second time from the precomputed cache
				resp, body := f.do(t, tc.call)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("content-type %q", ct)
				}
				if !gjson.ValidBytes(body) {
					t.Fatalf("invalid JSON %s", body)
				}
				if got := gjson.GetBytes(body, tc.modelPath).String(); got != tc.call.model {
					t.Errorf("model %q, want %q", got, tc.call.model)
				}
				if got, want := gjson.GetBytes(body, tc.textPath).String(), Content(tc.call.key); got != want {
					t.Errorf("content %q, want %q", got, want)
				}
			}
		})
	}
	if got := gjson.GetBytes(must(f.do(t, call{format: FormatAnthropic, key: "k", model: "m"})), "stop_reason").String(); got != "end_turn" {
		t.Errorf("anthropic stop_reason %q", got)
	}
}

func must(_ *http.Response, body []byte) []byte { return body }

func TestHappyPathStream(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		format Format
		chunks int // 0: default
		key    string
	}{
		{"openai default chunks", FormatOpenAI, 0, "key-a"},
		{"anthropic default chunks", FormatAnthropic, 0, "key-a"},
		{"openai 1 chunk", FormatOpenAI, 1, "key-b"},
		{"anthropic 3 chunks", FormatAnthropic, 3, "key-b"},
		{"openai more chunks than runes", FormatOpenAI, 40, "k"},
		{"anthropic more chunks than runes", FormatAnthropic, 40, "k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.u.Reset()
			want := DefaultStreamChunks
			if tc.chunks != 0 {
				f.u.SetStreamChunks(tc.chunks)
				want = tc.chunks
			}
			resp, body := f.do(t, call{format: tc.format, key: tc.key, model: "model-z", stream: true})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("content-type %q", ct)
			}
			frames, err := readFrames(strings.NewReader(string(body)))
			if err != nil {
				t.Fatalf("framing: %v in %q", err, body)
			}
			n, text := contentFrames(tc.format, frames)
			if n != want || text != Content(tc.key) {
				t.Errorf("got %d chunks %q, want %d chunks %q", n, text, want, Content(tc.key))
			}
			if !isComplete(tc.format, frames) {
				t.Errorf("stream not complete: %+v", frames)
			}
			if tc.format == FormatAnthropic {
				checkAnthropicSequence(t, frames, want)
			} else {
				checkOpenAIStream(t, frames, want)
			}
		})
	}
}

func checkAnthropicSequence(t *testing.T, frames []frame, chunks int) {
	t.Helper()
	want := []string{"message_start", "content_block_start", "ping"}
	for range chunks {
		want = append(want, "content_block_delta")
	}
	want = append(want, "content_block_stop", "message_delta", "message_stop")
	var got []string
	for _, f := range frames {
		got = append(got, f.event)
		if typ := gjson.Get(f.data, "type").String(); typ != f.event {
			t.Errorf("event %q carries type %q", f.event, typ)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if m := gjson.Get(frames[0].data, "message.model").String(); m != "model-z" {
		t.Errorf("message_start model %q", m)
	}
	md := frames[len(frames)-2].data
	if gjson.Get(md, "delta.stop_reason").String() != "end_turn" || gjson.Get(md, "usage.output_tokens").Int() != int64(chunks) {
		t.Errorf("message_delta %s", md)
	}
}

func checkOpenAIStream(t *testing.T, frames []frame, chunks int) {
	t.Helper()
	if len(frames) != chunks+3 {
		t.Fatalf("%d frames, want role + %d chunks + final + [DONE]", len(frames), chunks)
	}
	for _, f := range frames[:len(frames)-1] {
		if gjson.Get(f.data, "object").String() != "chat.completion.chunk" || gjson.Get(f.data, "model").String() != "model-z" {
			t.Errorf("bad chunk %s", f.data)
		}
	}
	if r := gjson.Get(frames[0].data, "choices.0.delta.role").String(); r != "assistant" {
		t.Errorf("first chunk role %q", r)
	}
	final := frames[len(frames)-2].data
	if gjson.Get(final, "choices.0.finish_reason").String() != "stop" {
		t.Errorf("final chunk %s", final)
	}
	for _, f := range frames {
		if gjson.Get(f.data, "usage").Exists() {
			t.Errorf("usage without stream_options.include_usage: %s", f.data)
		}
	}
}

func TestAuth(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		call   call
		status int
		body   string
	}{
		{"openai missing", call{format: FormatOpenAI}, 401, OpenAIMissingKeyBody},
		{"openai x-api-key is not enough", call{format: FormatOpenAI, header: map[string]string{"x-api-key": "k"}}, 401, OpenAIMissingKeyBody},
		{"openai empty bearer", call{format: FormatOpenAI, header: map[string]string{"Authorization": "Bearer "}}, 401, OpenAIMissingKeyBody},
		{"anthropic missing", call{format: FormatAnthropic}, 401, AnthropicMissingKeyBody},
		{"openai bearer", call{format: FormatOpenAI, key: "any"}, 200, ""},
		{"openai lowercase bearer", call{format: FormatOpenAI, header: map[string]string{"Authorization": "bearer any"}}, 200, ""},
		{"anthropic x-api-key", call{format: FormatAnthropic, key: "any"}, 200, ""},
		{"anthropic bearer", call{format: FormatAnthropic, key: "any", bearer: true}, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.call)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.body != "" && string(body) != tc.body {
				t.Errorf("body %s, want %s", body, tc.body)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		path   string
		body   string
		status int
	}{
		{"invalid json", "/v1/chat/completions", `{"model":`, 400},
		{"no model", "/v1/messages", `{"messages":[]}`, 400},
		{"unknown route", "/v1/no-such-route", `{}`, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, f.base+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer k")
			req.Header.Set("x-api-key", "k")
			resp, err := f.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !gjson.ValidBytes(body) {
				t.Errorf("status %d body %s, want %d with JSON", resp.StatusCode, body, tc.status)
			}
		})
	}
}

func TestModels(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		headers map[string]string
		models  []string
		status  int
		idPath  string
	}{
		{"openai", map[string]string{"Authorization": "Bearer k"}, nil, 200, "data.#.id"},
		{"anthropic", map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"}, nil, 200, "data.#.id"},
		{"custom list", map[string]string{"Authorization": "Bearer k"}, []string{"a", "b"}, 200, "data.#.id"},
		{"no key", nil, nil, 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.u.Reset()
			want := DefaultModels()
			if tc.models != nil {
				f.u.SetModels(tc.models)
				want = tc.models
			}
			req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.base+"/v1/models", nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := f.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if tc.idPath == "" {
				return
			}
			var got []string
			for _, id := range gjson.GetBytes(body, tc.idPath).Array() {
				got = append(got, id.String())
			}
			if !slices.Equal(got, want) {
				t.Errorf("models %v, want %v (%s)", got, want, body)
			}
		})
	}
}

func TestRecords(t *testing.T) {
	f := newFixture(t)
	for range 3 {
		f.do(t, call{format: FormatOpenAI, key: "key-a", model: "first"})
	}
	f.do(t, call{format: FormatAnthropic, key: "key-b", model: "rewritten", header: map[string]string{"X-Session-Id": "s1"}})
	f.do(t, call{format: FormatOpenAI})

	tests := []struct {
		key      string
		hits     int
		model    string
		hasSessn bool
	}{
		{"key-a", 3, "first", false},
		{"key-b", 1, "rewritten", true},
		{"", 1, "gpt-4o-mini", false},
		{"never", 0, "", false},
	}
	for _, tc := range tests {
		t.Run("key="+tc.key, func(t *testing.T) {
			if got := f.u.Hits(tc.key); got != tc.hits {
				t.Errorf("hits %d, want %d", got, tc.hits)
			}
			h, body := f.u.LastRequest(tc.key)
			if tc.hits == 0 {
				if h != nil || body != nil {
					t.Errorf("unexpected record %v %s", h, body)
				}
				return
			}
			if got := gjson.GetBytes(body, "model").String(); got != tc.model {
				t.Errorf("recorded model %q, want %q", got, tc.model)
			}
			if got := h.Get("X-Session-Id") != ""; got != tc.hasSessn {
				t.Errorf("X-Session-Id recorded=%v, want %v", got, tc.hasSessn)
			}
		})
	}
	if got := f.u.AllHits(); len(got) != 3 {
		t.Errorf("AllHits %v", got)
	}
	f.u.Reset()
	if f.u.Hits("key-a") != 0 || len(f.u.AllHits()) != 0 {
		t.Error("Reset kept hits")
	}
}

func TestStatusFault(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name       string
		call       call
		fault      Fault
		status     int
		body       string
		retryAfter string
	}{
		{"openai 429 default", call{format: FormatOpenAI, key: "k"}, Fault{Mode: ModeStatus, Status: 429}, 429, OpenAIRateLimitBody, ""},
		{"openai 500 default status", call{format: FormatOpenAI, key: "k"}, Fault{Mode: ModeStatus}, 500, OpenAIServerErrorBody, ""},
		{"openai 503 stream request", call{format: FormatOpenAI, key: "k", stream: true}, Fault{Mode: ModeStatus, Status: 503}, 503, OpenAIOverloadedBody, ""},
		{"openai 401", call{format: FormatOpenAI, key: "k"}, Fault{Mode: ModeStatus, Status: 401}, 401, OpenAIInvalidKeyBody, ""},
		{"openai 404", call{format: FormatOpenAI, key: "k"}, Fault{Mode: ModeStatus, Status: 404}, 404, OpenAIModelNotFoundBody, ""},
		{"openai 400", call{format: FormatOpenAI, key: "k"}, Fault{Mode: ModeStatus, Status: 400}, 400, OpenAIBadRequestBody, ""},
		{"anthropic 429 retry-after", call{format: FormatAnthropic, key: "k"}, Fault{Mode: ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "7"}}, 429, AnthropicRateLimitBody, "7"},
		{"anthropic 529", call{format: FormatAnthropic, key: "k", stream: true}, Fault{Mode: ModeStatus, Status: 529}, 529, AnthropicOverloadedBody, ""},
		{"anthropic 503", call{format: FormatAnthropic, key: "k"}, Fault{Mode: ModeStatus, Status: 503}, 503, AnthropicOverloadedBody, ""},
		{"anthropic 500", call{format: FormatAnthropic, key: "k"}, Fault{Mode: ModeStatus, Status: 500}, 500, AnthropicServerErrorBody, ""},
		{"glm concurrency", call{format: FormatOpenAI, key: "k"}, Fault{Mode: ModeStatus, Status: 429, Body: GLMConcurrencyBody}, 429, GLMConcurrencyBody, ""},
		{"odd status generic body", call{format: FormatOpenAI, key: "k"}, Fault{Mode: ModeStatus, Status: 502}, 502, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.u.SetFault("k", tc.fault)
			resp, body := f.do(t, tc.call)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.body != "" && string(body) != tc.body {
				t.Errorf("body %s, want %s", body, tc.body)
			}
			if !gjson.ValidBytes(body) || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("not a JSON error: %q %s", resp.Header.Get("Content-Type"), body)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
		})
	}
	if !strings.Contains(GLMConcurrencyBody, "并发数过高") {
		t.Error("GLM body lost its message")
	}
}

func TestFaultSelection(t *testing.T) {
	rate := Fault{Mode: ModeStatus, Status: 429}
	boom := Fault{Mode: ModeStatus, Status: 500}
	type step struct {
		key, model string
		status     int
		toolResult bool // the request ends with a tool result
	}
	tests := []struct {
		name  string
		setup func(u *Upstream)
		steps []step
	}{
		{"times counts down", func(u *Upstream) { f := rate; f.Times = 2; u.SetFault("a", f) },
			[]step{{"a", "m", 429, false}, {"a", "m", 429, false}, {"a", "m", 200, false}, {"a", "m", 200, false}}},
		{"zero times is until cleared", func(u *Upstream) { u.SetFault("a", rate) },
			[]step{{"a", "m", 429, false}, {"a", "m", 429, false}, {"a", "m", 429, false}}},
		{"per-key isolation", func(u *Upstream) { u.SetFault("key-a", rate) },
			[]step{{"key-a", "m", 429, false}, {"key-b", "m", 200, false}, {"key-a", "m", 429, false}}},
		{"star applies to every key", func(u *Upstream) { u.SetFault("*", boom) },
			[]step{{"key-a", "m", 500, false}, {"key-b", "m", 500, false}}},
		{"own key before star", func(u *Upstream) { u.SetFault("*", boom); u.SetFault("key-a", rate) },
			[]step{{"key-a", "m", 429, false}, {"key-b", "m", 500, false}}},
		{"models filter", func(u *Upstream) { f := rate; f.Models = []string{"big"}; u.SetFault("a", f) },
			[]step{{"a", "small", 200, false}, {"a", "big", 429, false}, {"a", "small", 200, false}}},
		{"filtered request does not consume times", func(u *Upstream) {
			f := rate
			f.Models, f.Times = []string{"big"}, 1
			u.SetFault("a", f)
		}, []step{{"a", "small", 200, false}, {"a", "big", 429, false}, {"a", "big", 200, false}}},
		{"tool results only", func(u *Upstream) { f := rate; f.ToolResultsOnly = true; u.SetFault("a", f) },
			[]step{{"a", "m", 200, false}, {"a", "m", 429, true}, {"a", "m", 200, false}, {"a", "m", 429, true}}},
		{"add fault sequence", func(u *Upstream) {
			f1, f2 := rate, boom
			f1.Times, f2.Times = 1, 2
			u.AddFault("a", f1)
			u.AddFault("a", f2)
		}, []step{{"a", "m", 429, false}, {"a", "m", 500, false}, {"a", "m", 500, false}, {"a", "m", 200, false}}},
		{"set replaces", func(u *Upstream) { u.SetFault("a", rate); u.SetFault("a", boom) },
			[]step{{"a", "m", 500, false}}},
		{"clear faults", func(u *Upstream) { u.SetFault("a", rate); u.SetFault("*", boom); u.ClearFaults() },
			[]step{{"a", "m", 200, false}, {"b", "m", 200, false}}},
		{"clear one key", func(u *Upstream) { u.SetFault("a", rate); u.SetFault("b", boom); u.ClearFault("a") },
			[]step{{"a", "m", 200, false}, {"b", "m", 500, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f.u)
			for i, s := range tc.steps {
				c := call{format: FormatOpenAI, key: s.key, model: s.model}
				if s.toolResult {
					c.raw = fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"},`+
						`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},`+
						`{"role":"tool","tool_call_id":"c1","content":"out"}]}`, s.model)
				}
				resp, body := f.do(t, c)
				if resp.StatusCode != s.status {
					t.Fatalf("step %d (%s/%s): status %d, want %d: %s", i, s.key, s.model, resp.StatusCode, s.status, body)
				}
			}
		})
	}
}

func TestFaultValidate(t *testing.T) {
	tests := []struct {
		name string
		f    Fault
		ok   bool
	}{
		{"status", Fault{Mode: ModeStatus, Status: 429}, true},
		{"every mode", Fault{Mode: ModeSlowDrip, DripMs: 1}, true},
		{"unknown mode", Fault{Mode: "explode"}, false},
		{"empty mode", Fault{}, false},
		{"bad status", Fault{Mode: ModeStatus, Status: 42}, false},
		{"negative", Fault{Mode: ModeLatency, LatencyMs: -1}, false},
		{"cut after events", Fault{Mode: ModeCutAfterEvents, AfterChunks: 2}, true},
		{"no done", Fault{Mode: ModeNoDone}, true},
		{"malformed event", Fault{Mode: ModeMalformedEvent}, true},
		{"slow first token", Fault{Mode: ModeSlowFirstToken, LatencyMs: 5}, true},
		{"reasoning only heartbeat", Fault{Mode: ModeReasoningOnlyHeartbeat, DripMs: 5}, true},
		{"error event", Fault{Mode: ModeErrorEvent, AfterChunks: 1}, true},
		{"stall after events alias", Fault{Mode: ModeStallAfterEvents}, true},
		{"negative drip", Fault{Mode: ModeReasoningOnlyHeartbeat, DripMs: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.f.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestResetBeforeHeaders(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		stream bool
		hard   bool
	}{
		{"openai eof", FormatOpenAI, false, false},
		{"openai rst", FormatOpenAI, true, true},
		{"anthropic eof", FormatAnthropic, true, false},
		{"anthropic rst", FormatAnthropic, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.u.SetFault("k", Fault{Mode: ModeResetBeforeHeaders, HardReset: tc.hard, Times: 1})
			resp, err := f.client.Do(f.request(testCtx(t), t, call{format: tc.format, key: "k", stream: tc.stream}))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("got status %d, want a transport error", resp.StatusCode)
			}
			if tc.hard && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("hard reset gave %v, want ECONNRESET", err)
			}
			if !tc.hard && !errors.Is(err, io.EOF) {
				t.Errorf("close gave %v, want EOF", err)
			}
			if f.u.Hits("k") != 1 {
				t.Errorf("hits %d", f.u.Hits("k"))
			}
			// The fault is used up: the next request is fine.
			if resp, body := f.do(t, call{format: tc.format, key: "k"}); resp.StatusCode != 200 {
				t.Errorf("after reset: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// startCall sends c in the background and returns a channel with its outcome.
func (f *fixture) startCall(ctx context.Context, t *testing.T, c call) <-chan error {
	done := make(chan error, 1)
	req := f.request(ctx, t, c)
	go func() {
		resp, err := f.client.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	return done
}

// TestBlockingModesRespectCancel stalls a request for ever (or for a minute),
// cancels the client and checks the handler returns without waiting.
func TestBlockingModesRespectCancel(t *testing.T) {
	tests := []struct {
		name   string
		fault  Fault
		stream bool
	}{
		{"stall before headers", Fault{Mode: ModeStallBeforeHeaders}, false},
		{"stall before headers bounded", Fault{Mode: ModeStallBeforeHeaders, StallMs: 60_000}, true},
		{"stall mid stream", Fault{Mode: ModeStallMidStream, AfterChunks: 2}, true},
		{"stall mid json", Fault{Mode: ModeStallMidStream, AfterChunks: 1}, false},
		{"slow drip", Fault{Mode: ModeSlowDrip, DripMs: 60_000}, true},
		{"latency", Fault{Mode: ModeLatency, LatencyMs: 60_000}, false},
		{"slow first token", Fault{Mode: ModeSlowFirstToken, LatencyMs: 60_000}, true},
		{"slow first token json", Fault{Mode: ModeSlowFirstToken, LatencyMs: 60_000}, false},
		{"heartbeat", Fault{Mode: ModeReasoningOnlyHeartbeat, AfterChunks: 1, DripMs: 1}, true},
		{"heartbeat json", Fault{Mode: ModeReasoningOnlyHeartbeat}, false},
		{"heartbeat bounded", Fault{Mode: ModeReasoningOnlyHeartbeat, StallMs: 60_000, DripMs: 1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.u.SetFault("k", tc.fault)
			ctx := testCtx(t)
			reqCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := f.startCall(reqCtx, t, call{format: FormatOpenAI, key: "k", stream: tc.stream})
			if err := f.u.WaitInFlight(ctx, 1); err != nil {
				t.Fatal(err)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("client error %v, want context.Canceled", err)
			}
			if err := f.u.WaitInFlight(ctx, 0); err != nil {
				t.Fatalf("handler did not return after cancel: %v", err)
			}
		})
	}
}

// TestCloseUnblocksStalledHandlers checks Close returns while requests are
// stalled for ever, and their clients see an error rather than a success.
func TestCloseUnblocksStalledHandlers(t *testing.T) {
	modes := []Fault{
		{Mode: ModeStallBeforeHeaders},
		{Mode: ModeStallMidStream, AfterChunks: 1},
		{Mode: ModeSlowDrip, DripMs: 60_000},
		{Mode: ModeLatency, LatencyMs: 60_000},
		{Mode: ModeSlowFirstToken, LatencyMs: 60_000},
		{Mode: ModeReasoningOnlyHeartbeat, AfterChunks: 1, DripMs: 1},
	}
	for _, fault := range modes {
		t.Run(string(fault.Mode), func(t *testing.T) {
			f := newFixture(t)
			f.u.SetFault("k", fault)
			ctx := testCtx(t)
			var dones []<-chan error
			for _, stream := range []bool{false, true} {
				dones = append(dones, f.startCall(ctx, t, call{format: FormatAnthropic, key: "k", stream: stream}))
			}
			if err := f.u.WaitInFlight(ctx, len(dones)); err != nil {
				t.Fatal(err)
			}
			f.u.Close()
			for _, d := range dones {
				if err := <-d; err == nil {
					t.Error("client saw a complete answer from a closed fake")
				}
			}
			if n := f.u.InFlight(); n != 0 {
				t.Errorf("in flight after Close: %d", n)
			}
		})
	}
}

// readUntilBroken opens a stream and reads every frame the fake sends; after
// afterChunks content frames it calls between (which breaks the stream).
func readUntilBroken(t *testing.T, f *fixture, format Format, afterChunks int, between func()) ([]frame, error) {
	t.Helper()
	resp, err := f.client.Do(f.request(testCtx(t), t, call{format: format, key: "k", stream: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	fr := newFrameReader(resp.Body)
	var frames []frame
	n := 0
	for n < afterChunks {
		fm, err := fr.next()
		if err != nil {
			t.Fatalf("before the break: %v", err)
		}
		frames = append(frames, fm)
		if _, ok := contentOf(format, fm); ok {
			n++
		}
	}
	between()
	for {
		fm, err := fr.next()
		if err != nil {
			return frames, err
		}
		frames = append(frames, fm)
	}
}

func TestMidStreamExactChunks(t *testing.T) {
	tests := []struct {
		name        string
		format      Format
		mode        Mode
		afterChunks int
	}{
		{"openai stall 2", FormatOpenAI, ModeStallMidStream, 2},
		{"anthropic stall 3", FormatAnthropic, ModeStallMidStream, 3},
		{"openai stall 0", FormatOpenAI, ModeStallMidStream, 0},
		{"anthropic stall all", FormatAnthropic, ModeStallMidStream, 5},
		{"openai reset 2", FormatOpenAI, ModeResetMidStream, 2},
		{"anthropic reset 4", FormatAnthropic, ModeResetMidStream, 4},
		{"anthropic reset 0", FormatAnthropic, ModeResetMidStream, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.u.SetFault("k", Fault{Mode: tc.mode, AfterChunks: tc.afterChunks})
			between := func() {}
			if tc.mode == ModeStallMidStream {
				// The handler is stalled after exactly afterChunks chunks:
				// closing the fake makes it drop the connection, so every byte
				// it wrote before the stall reaches us, then an error.
				between = f.u.Close
			}
			frames, err := readUntilBroken(t, f, tc.format, tc.afterChunks, between)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("stream ended with %v, want unexpected EOF", err)
			}
			if n, _ := contentFrames(tc.format, frames); n != tc.afterChunks {
				t.Errorf("%d content chunks, want %d", n, tc.afterChunks)
			}
			if isComplete(tc.format, frames) {
				t.Error("broken stream looks complete")
			}
		})
	}
}

func TestHardResetMidStream(t *testing.T) {
	f := newFixture(t)
	f.u.SetFault("k", Fault{Mode: ModeResetMidStream, AfterChunks: 2, HardReset: true})
	resp, err := f.client.Do(f.request(testCtx(t), t, call{format: FormatOpenAI, key: "k", stream: true}))
	if err != nil {
		return // the RST may beat the headers: also a valid outcome
	}
	defer resp.Body.Close()
	frames, err := readFrames(resp.Body)
	if err == nil {
		t.Fatal("hard reset stream ended cleanly")
	}
	if n, _ := contentFrames(FormatOpenAI, frames); n > 2 || isComplete(FormatOpenAI, frames) {
		t.Errorf("got %d chunks (complete=%v), want at most 2", n, isComplete(FormatOpenAI, frames))
	}
}

// TestBoundedFaultsFinish checks the modes that pause for a bounded time then
// answer normally produce complete, well-formed answers (durations are tiny:
// nothing here asserts timing).
func TestBoundedFaultsFinish(t *testing.T) {
	faults := []Fault{
		{Mode: ModeStallBeforeHeaders, StallMs: 1},
		{Mode: ModeStallMidStream, AfterChunks: 2, StallMs: 1},
		{Mode: ModeSlowDrip, DripMs: 1, Headers: map[string]string{"X-Fake": "drip"}},
		{Mode: ModeLatency, LatencyMs: 1},
		{Mode: ModeLatency},
	}
	for _, fault := range faults {
		for _, format := range []Format{FormatOpenAI, FormatAnthropic} {
			for _, stream := range []bool{false, true} {
				name := string(fault.Mode) + "/" + format.String()
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					f := newFixture(t)
					want := must(f.do(t, call{format: format, key: "k", stream: stream}))
					f.u.SetFault("k", fault)
					resp, got := f.do(t, call{format: format, key: "k", stream: stream})
					if resp.StatusCode != 200 || string(got) != string(want) {
						t.Errorf("status %d body %q, want 200 %q", resp.StatusCode, got, want)
					}
					if fault.Headers != nil && resp.Header.Get("X-Fake") != "drip" {
						t.Error("fault headers not sent")
					}
				})
			}
		}
	}
}

func TestControlAPI(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	raw := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, f.base+path, strings.NewReader(body))
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	steps := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		check  func(t *testing.T, body string)
	}{
		{"set fault", "POST", "/_fake/faults", `{"key":"key-a","fault":{"mode":"status","status":429,"headers":{"Retry-After":"7"},"times":1}}`, 204, nil},
		{"append fault", "POST", "/_fake/faults", `{"key":"key-a","append":true,"fault":{"mode":"status","status":503,"times":1}}`, 204, nil},
		{"list faults", "GET", "/_fake/faults", "", 200, func(t *testing.T, body string) {
			if gjson.Get(body, "faults.key-a.#").Int() != 2 || gjson.Get(body, "faults.key-a.0.times").Int() != 1 {
				t.Errorf("faults %s", body)
			}
		}},
		{"bad mode", "POST", "/_fake/faults", `{"key":"key-a","fault":{"mode":"nope"}}`, 400, nil},
		{"no key", "POST", "/_fake/faults", `{"fault":{"mode":"status"}}`, 400, nil},
		{"unknown field", "POST", "/_fake/faults", `{"key":"a","fault":{"mode":"status","stalms":3}}`, 400, nil},
		{"first request 429", "POST", "/v1/chat/completions", "", 429, nil},
		{"second request 503", "POST", "/v1/chat/completions", "", 503, nil},
		{"third request ok", "POST", "/v1/chat/completions", "", 200, nil},
		{"stats", "GET", "/_fake/stats", "", 200, func(t *testing.T, body string) {
			if gjson.Get(body, "hits.key-a").Int() != 3 || gjson.Get(body, "inFlight").Int() != 0 {
				t.Errorf("stats %s", body)
			}
		}},
		{"last request", "GET", "/_fake/last?key=key-a", "", 200, func(t *testing.T, body string) {
			if gjson.Get(body, "headers.X-Session-Id.0").String() != "sess" || gjson.Get(gjson.Get(body, "body").String(), "model").String() != "gpt-4o-mini" {
				t.Errorf("last %s", body)
			}
		}},
		{"last request unknown key", "GET", "/_fake/last?key=zzz", "", 404, nil},
		{"star fault", "POST", "/_fake/faults", `{"key":"*","fault":{"mode":"status","status":500}}`, 204, nil},
		{"star applies", "POST", "/v1/chat/completions", "", 500, nil},
		{"delete faults", "DELETE", "/_fake/faults", "", 204, nil},
		{"ok again", "POST", "/v1/chat/completions", "", 200, nil},
		{"config", "POST", "/_fake/config", `{"streamChunks":2,"models":["only"]}`, 204, nil},
		{"models after config", "GET", "/v1/models", "", 200, func(t *testing.T, body string) {
			if gjson.Get(body, "data.#.id").String() != `["only"]` {
				t.Errorf("models %s", body)
			}
		}},
		{"reset", "POST", "/_fake/reset", "", 204, nil},
		{"stats after reset", "GET", "/_fake/stats", "", 200, func(t *testing.T, body string) {
			if gjson.Get(body, "hits").String() != "{}" {
				t.Errorf("stats %s", body)
			}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			var status int
			var body string
			if strings.HasPrefix(s.path, "/v1/") {
				resp, b := f.do(t, call{format: FormatOpenAI, key: "key-a", header: map[string]string{"X-Session-Id": "sess"}})
				if s.path == "/v1/models" {
					req, _ := http.NewRequestWithContext(ctx, "GET", f.base+"/v1/models", nil)
					req.Header.Set("Authorization", "Bearer key-a")
					r2, err := f.client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ = io.ReadAll(r2.Body)
					r2.Body.Close()
					resp = r2
				}
				status, body = resp.StatusCode, string(b)
			} else {
				status, body = raw(s.method, s.path, s.body)
			}
			if status != s.status {
				t.Fatalf("status %d, want %d: %s", status, s.status, body)
			}
			if s.check != nil {
				s.check(t, body)
			}
		})
	}
}

func TestRemote(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	rc := Remote{BaseURL: f.base, Client: f.client}
	if err := rc.SetFault(ctx, "key-a", Fault{Mode: ModeStatus, Status: 429, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if err := rc.AddFault(ctx, "key-a", Fault{Mode: ModeStatus, Status: 500, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if err := rc.SetFault(ctx, "key-a", Fault{Mode: "bogus"}); err == nil {
		t.Error("bogus fault accepted")
	}
	steps := []int{429, 500, 200}
	for i, want := range steps {
		if resp, _ := f.do(t, call{format: FormatOpenAI, key: "key-a"}); resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	st, err := rc.Stats(ctx)
	if err != nil || st.Hits["key-a"] != 3 {
		t.Fatalf("stats %+v %v", st, err)
	}
	last, err := rc.LastRequest(ctx, "key-a")
	if err != nil || last.Headers.Get("Authorization") != "Bearer key-a" {
		t.Fatalf("last %+v %v", last, err)
	}
	if err := rc.Configure(ctx, Config{StreamChunks: 2}); err != nil {
		t.Fatal(err)
	}
	_, body := f.do(t, call{format: FormatOpenAI, key: "key-a", stream: true})
	frames, _ := readFrames(strings.NewReader(string(body)))
	if n, _ := contentFrames(FormatOpenAI, frames); n != 2 {
		t.Errorf("chunks after Configure: %d", n)
	}
	if err := rc.SetFault(ctx, "*", Fault{Mode: ModeStatus}); err != nil {
		t.Fatal(err)
	}
	if err := rc.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rc.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if f.u.Hits("key-a") != 0 || len(f.u.Faults()) != 0 {
		t.Error("remote reset did not reset")
	}
}

func TestServe(t *testing.T) {
	u := New()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- u.Serve(l) }()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	f := &fixture{u: u, base: "http://" + l.Addr().String(), client: &http.Client{Transport: tr}}
	if resp, body := f.do(t, call{format: FormatOpenAI, key: "k"}); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	u.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve returned %v", err)
	}
	u.Close() // idempotent
	if err := u.Serve(l); err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
}

func TestWaitHits(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	done := f.startCall(ctx, t, call{format: FormatOpenAI, key: "w"})
	if err := f.u.WaitHits(ctx, "w", 1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.u.WaitHits(short, "w", 2); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitHits on cancelled ctx: %v", err)
	}
}

func TestSplitContent(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"abcde", 2, []string{"ab", "cde"}},
		{"ab", 4, []string{"", "a", "", "b"}},
		{"并发数过高", 2, []string{"并发", "数过高"}},
		{"", 2, []string{"", ""}},
	}
	for _, tc := range tests {
		if got := splitContent(tc.s, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("splitContent(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// discardWriter is a minimal flushing ResponseWriter for benchmarks.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

func BenchmarkServe(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "json"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			u := New()
			defer u.Close()
			body := `{"model":"gpt-4o-mini","stream":false,"messages":[{"role":"user","content":"hi"}]}`
			if stream {
				body = strings.Replace(body, "false", "true", 1)
			}
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer bench")
				u.ServeHTTP(&discardWriter{h: http.Header{}}, req)
			}
		})
	}
}

// TestStatusFaultGather: with Gather 3 the first two requests wait until the
// third arrives, then all three are answered; a fourth is answered at once.
func TestStatusFaultGather(t *testing.T) {
	f := newFixture(t)
	f.u.SetFault("k", Fault{Mode: ModeStatus, Status: 429, Gather: 3})
	answered := make(chan int, 4)
	for range 2 {
		go func() {
			resp, _ := f.do(t, call{format: FormatOpenAI, key: "k"})
			answered <- resp.StatusCode
		}()
	}
	for f.u.Hits("k") < 2 { // both held at the barrier
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case s := <-answered:
		t.Fatalf("a request was answered (%d) before the third arrived", s)
	case <-time.After(50 * time.Millisecond): // a bounded look for an early answer
	}
	resp, _ := f.do(t, call{format: FormatOpenAI, key: "k"})
	if resp.StatusCode != 429 {
		t.Fatalf("third: %d", resp.StatusCode)
	}
	for range 2 {
		if s := <-answered; s != 429 {
			t.Fatalf("held request answered %d", s)
		}
	}
	if resp, _ := f.do(t, call{format: FormatOpenAI, key: "k"}); resp.StatusCode != 429 {
		t.Fatalf("fourth: %d", resp.StatusCode)
	}
	if err := (Fault{Mode: ModeStatus, Gather: -1}).Validate(); err == nil {
		t.Fatal("negative Gather accepted")
	}
}

// TestPrefillContinuesItsAnswer: an Anthropic request ending in an assistant
// prefill gets the rest of the answer the prefill begins — the key's Content,
// or, after a tool result, the reply to it — and a 400 for a prefill that
// does not begin it or comes with thinking on.
func TestPrefillContinuesItsAnswer(t *testing.T) {
	f := newFixture(t)
	user := `{"role":"user","content":"hi"}`
	toolUse := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}`
	toolResult := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`
	body := func(prefill string, thinking bool, msgs ...string) string {
		b := `{"model":"m","max_tokens":64,"messages":[` + strings.Join(append(msgs, `{"role":"assistant","content":"`+prefill+`"}`), ",") + `]`
		if thinking {
			b += `,"thinking":{"type":"enabled","budget_tokens":1024}`
		}
		return b + "}"
	}
	cases := []struct {
		name, raw string
		status    int
		text      string
	}{
		{"plain", body("Hello fr", false, user), 200, "om key-p"},
		{"after a tool result", body("Tool sa", false, user, toolUse, toolResult), 200, "id: ok"},
		{"not its beginning", body("Tool sa", false, user), 400, ""},
		{"thinking on", body("Hello fr", true, user), 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, b := f.do(t, call{format: FormatAnthropic, key: "key-p", raw: c.raw})
			if resp.StatusCode != c.status || c.status == 200 && gjson.GetBytes(b, "content.0.text").String() != c.text {
				t.Fatalf("status %d, body %s; want %d with %q", resp.StatusCode, b, c.status, c.text)
			}
		})
	}
}

// TestRestartModes: ModeRestartAnswer answers every request, a prefill one
// included, with the whole answer of the key it names; ModeRestartDiverges
// with DivergentContent, which departs from that answer at its fourth byte.
func TestRestartModes(t *testing.T) {
	f := newFixture(t)
	prefill := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello fr"}],"continue_final_message":true}`
	plain := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		mode Mode
		want string
	}{
		{ModeRestartAnswer, Content("key-a")},
		{ModeRestartDiverges, DivergentContent("key-a")},
	}
	for _, c := range cases {
		f.u.SetFault("key-r", Fault{Mode: c.mode, AnswerAs: "key-a"})
		for _, raw := range []string{prefill, plain} {
			resp, b := f.do(t, call{format: FormatOpenAI, key: "key-r", raw: raw})
			if got := gjson.GetBytes(b, "choices.0.message.content").String(); resp.StatusCode != 200 || got != c.want {
				t.Fatalf("%s: %d %q, want %q", c.mode, resp.StatusCode, got, c.want)
			}
		}
	}
	if c, d := Content("key-a"), DivergentContent("key-a"); c[:3] != d[:3] || c[3] == d[3] {
		t.Fatalf("%q and %q should part at the fourth byte", c, d)
	}
}

// TestConfigSetsAWSCredentials: out-of-process tests (the browser specs)
// register AWS access key ids through POST /_fake/config, as in-process
// tests call SetAWSCredentials.
func TestConfigSetsAWSCredentials(t *testing.T) {
	u := New()
	rec := httptest.NewRecorder()
	u.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/_fake/config", strings.NewReader(`{"awsCredentials":{"AKIAFAKEBROWSER01":{"secret":"s3cret","sessionToken":"tok"}}}`)))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("config: %d %s", rec.Code, rec.Body)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if got := u.aws["AKIAFAKEBROWSER01"]; got != (awsCreds{"s3cret", "tok"}) {
		t.Errorf("aws creds %+v", got)
	}
}
