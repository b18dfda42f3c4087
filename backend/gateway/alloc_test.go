//go:build !race

package gateway

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/store"
	"omniroute/backend/translate"
	"omniroute/backend/translate/frames"
	"omniroute/backend/translate/sse"
)

// Allocation pins of the gateway's hot-path pieces, each a deterministic
// count with the figure the code reaches now. Not built under -race, whose
// instrumentation changes allocation counts.

// TestHotPathPieceAllocations pins each piece: decode (the body buffer; the
// model name is interned), the same-format answer's check and usage read (none), the
// served headers (their values kept in the attempt), the log row (its
// attempts column), and a content event's text for a continuation (none).
func TestHotPathPieceAllocations(t *testing.T) {
	g := benchGateway()
	set := g.general()
	cand := routing.Candidate{Conn: &routing.Conn{ID: "c1", BreakerKey: "openai-compatible",
		Provider: providers.Provider{ID: "openai-compatible", Format: providers.FormatOpenAI}}, Model: "gpt-4o-mini"}
	answer := []byte(`{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":5}}`)
	codec := newCodec(translate.Chat, providers.FormatOpenAI)
	rd := &rereadBody{}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	w := deadlineRecorder{httptest.NewRecorder()}
	req := &request{format: translate.Chat, tools: -1}
	h := make(http.Header, 8)
	var vals servedValues
	var rows int
	g.logs = sinkFunc(func(store.RequestLog) { rows++ })
	g.clk = fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	served := &request{id: "0123456789abcdef0123456789abcdef", format: translate.Chat, model: "m"}
	served.attempts = append(served.firstAttempts[:0], AttemptRecord{ConnectionID: "c1", Provider: "openai-compatible",
		Model: "gpt-4o-mini", Status: 200, Verdict: "success"})
	event := sse.Event{Data: []byte(`{"choices":[{"index":0,"delta":{"content":"word "}}]}`)}

	for _, c := range []struct {
		name string
		max  float64
		run  func()
	}{
		{"decode", 1, func() {
			rd.Reset(chatBody)
			r.Body, r.ContentLength = rd, int64(len(chatBody))
			*req = request{format: translate.Chat, tools: -1}
			if err := g.decode(w, r, req, set); err != nil {
				t.Fatal(err)
			}
			req.releaseBody()
		}},
		// A stream whose client did not ask for usage: the body gains
		// stream_options (askUsage) in one more allocation (sjson made eight).
		{"decode, a stream without stream_options", 2, func() {
			rd.Reset(streamBody)
			r.Body, r.ContentLength = rd, int64(len(streamBody))
			*req = request{format: translate.Chat, tools: -1}
			if err := g.decode(w, r, req, set); err != nil {
				t.Fatal(err)
			}
			if !req.hideUsage || !bytes.HasSuffix(req.body, []byte(`,"stream_options":{"include_usage":true}}`)) {
				t.Fatalf("usage not asked: %s", req.body)
			}
			req.releaseBody()
		}},
		{"answer check and usage", 0, func() {
			_, text, top, err := codec.response(answer, chatBody)
			if err != nil {
				t.Fatal(err)
			}
			top.get(text)
			g.served(served, cand, http.StatusOK, text, top.usage)
		}},
		{"served headers", 0, func() {
			setServedHeaders(h, &vals, cand, 1, "gpt-4o-mini", "Content-Type", "application/json", "Content-Length", "312")
		}},
		{"log row", 1, func() { g.finishLog(served) }},
		{"continuation text", 0, func() {
			if _, text := frames.ClassifyText(translate.Chat, event); text != "word " {
				t.Fatal("delta text")
			}
		}},
	} {
		if n := testing.AllocsPerRun(100, c.run); n > c.max {
			t.Errorf("%s: %v allocations, want ≤ %v", c.name, n, c.max)
		}
	}
	if rows == 0 || served.log.CompletionTokens != 5 {
		t.Fatalf("rows %d, usage %+v", rows, served.log)
	}
}

// streamBody is chatBody streamed, without stream_options.
var streamBody = []byte(`{"model":"openai-compatible/gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello."}]}`)

// TestHiddenUsageStreamAllocations: a stream whose usage the gateway asked
// for on the client's behalf ("usage":null on every chunk, then the usage
// chunk) is relayed without it and logged with it, allocating nothing: the
// usage is read on arrival through a view of the event's bytes (it was a
// copy of every "usage" member, null ones included).
func TestHiddenUsageStreamAllocations(t *testing.T) {
	g := timerGateway()
	a := &attemptCtx{g: g, req: &request{format: translate.Chat, hideUsage: true}, codec: newCodec(translate.Chat, providers.FormatOpenAI)}
	a.ctx, a.cancel = context.WithCancelCause(context.Background())
	defer a.cancel(nil)
	s := &a.stream
	events := []string{`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"word "}}],"usage":null}`,
		`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
		`{"id":"x","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14,` +
			`"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":3}}}`}
	bufs := make([][]byte, len(events)) // the parser's bytes, rewritten under the state
	run := func() {
		a.startTimer(time.Minute, false)
		*s = streamState{a: a, keepText: true, pending: s.pending[:0]}
		s.watchVal.Init(g.watchConfig(), g.wall.Now())
		s.watch = &s.watchVal
		s.armWatchdog()
		for i, e := range events {
			bufs[i] = append(bufs[i][:0], e...)
			s.handle(sse.Event{Data: bufs[i]})
		}
		for i := range bufs {
			clear(bufs[i]) // the parser reuses its buffer: the usage must not be read from it later
		}
		s.recordUsage()
		a.firstByteDone()
		s.stopWatchdog()
		a.stopTimer()
	}
	run()
	if n := testing.AllocsPerRun(100, run); n > 0 {
		t.Errorf("a stream with hidden usage: %v allocations, want 0", n)
	}
	if l := a.req.log; l.PromptTokens != 9 || l.CompletionTokens != 5 || l.CachedTokens != 2 {
		t.Errorf("logged usage %d/%d/%d, want 9/5/2", l.PromptTokens, l.CompletionTokens, l.CachedTokens)
	}
	if bytes.Contains(s.pending, []byte("usage")) || !bytes.Contains(s.pending, []byte(`"finish_reason":"stop"`)) {
		t.Errorf("client stream %s", s.pending)
	}
}

// TestStreamAttemptAllocations pins what an attempt's timer and a stream's
// relay state cost: nothing. The timer comes from the gateway's pool, its
// callback bound once per timer, and serves the first byte and then the
// watchdog; the continuation text of a short answer stays in the stream
// state's own buffer.
func TestStreamAttemptAllocations(t *testing.T) {
	g := timerGateway()
	a := &attemptCtx{g: g, req: &request{format: translate.Chat}, codec: newCodec(translate.Chat, providers.FormatOpenAI)}
	a.ctx, a.cancel = context.WithCancelCause(context.Background())
	defer a.cancel(nil)
	s := &a.stream
	run := func() {
		a.startTimer(time.Minute, false)
		*s = streamState{a: a, keepText: true, pending: s.pending[:0]}
		s.watchVal.Init(g.watchConfig(), g.wall.Now())
		s.watch = &s.watchVal
		s.armWatchdog()
		for range 5 {
			s.handle(contentEvent)
		}
		a.firstByteDone()
		s.stopWatchdog()
		a.stopTimer()
	}
	run() // the pool's first timer, the client buffer's first growth
	if n := testing.AllocsPerRun(100, run); n > 0 {
		t.Errorf("a stream attempt's timer and relay state: %v allocations, want 0", n)
	}
	if got := string(s.text); got != "word word word word word " {
		t.Errorf("continuation text %q", got)
	}
	if cause := context.Cause(a.ctx); cause != nil {
		t.Errorf("attempt cancelled: %v", cause)
	}
}
