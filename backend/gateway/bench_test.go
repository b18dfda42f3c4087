package gateway

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/store"
	"omniroute/backend/translate"
)

// The hot path's pieces, one benchmark each (go test -run='^$' -bench=.
// -benchmem ./backend/gateway). They print figures and assert nothing about
// time; the end-to-end comparison with a bare reverse proxy is tests/bench.

// benchGateway is a gateway with default settings and no collaborators
// beyond what the measured piece touches.
func benchGateway() *Gateway {
	gen := config.DefaultGeneral()
	res := config.DefaultResilience(func(string) string { return "" })
	return New(Deps{General: func() *config.General { return &gen }, Resilience: func() *config.Resilience { return &res }})
}

// chatBody is the request tests/cmd/loadgen sends.
var chatBody = []byte(`{"model":"openai-compatible/gpt-4o-mini","stream":false,"messages":[{"role":"user","content":"Say hello."}]}`)

// agentBody is a coding agent's request: a long conversation (≈ 64 KiB of
// messages, as Claude Code or Codex send after a few turns) with "stream"
// after it.
var agentBody = func() []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"openai-compatible/gpt-4o-mini","messages":[`)
	for i := range 64 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":"turn %d: %s"}`, i, bytes.Repeat([]byte("lorem ipsum dolor sit amet "), 37))
	}
	b.WriteString(`],"temperature":0.2,"stream":true}`)
	return b.Bytes()
}()

// BenchmarkDecode: read, validate (jsonv) and route-parse one client body:
// the load tool's small one, and an agent's long one.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		body []byte
	}{{"small", chatBody}, {"agent-64KiB", agentBody}} {
		b.Run(bc.name, func(b *testing.B) {
			g := benchGateway()
			set := g.general()
			rd := &rereadBody{}
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			w := deadlineRecorder{httptest.NewRecorder()}
			b.SetBytes(int64(len(bc.body)))
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(bc.body)
				r.Body, r.ContentLength = rd, int64(len(bc.body))
				req := &request{format: translate.Chat, tools: -1}
				if err := g.decode(w, r, req, set); err != nil {
					b.Fatal(err)
				}
				req.releaseBody()
			}
		})
	}
}

// discardWriter is a client that reads everything at once.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// chatStream is an OpenAI chat stream of n content chunks, a finish chunk,
// a usage chunk and [DONE], as an OpenAI-compatible upstream sends it.
func chatStream(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"},\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":50,\"total_tokens\":59}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// benchRelay relays one 50-chunk chat stream per op to a client of format
// client: the event loop (parse, watchdog, classify, translate or copy,
// write and flush per upstream read), without sockets.
func benchRelay(b *testing.B, client translate.Format) {
	g := benchGateway()
	conn := &routing.Conn{ID: "c1", Provider: providers.Provider{ID: "openai-compatible", Format: providers.FormatOpenAI},
		BreakerKey: "openai-compatible"}
	cand := routing.Candidate{Conn: conn, Model: "gpt-4o-mini"}
	up := chatStream(50)
	rd := bytes.NewReader(up)
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}}
	w := &discardWriter{h: http.Header{}}
	rc := http.NewResponseController(w)
	b.SetBytes(int64(len(up)))
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(up)
		resp.Body = io.NopCloser(rd)
		req := &request{format: client, model: "openai-compatible/gpt-4o-mini", stream: true, body: chatBody, tools: -1}
		a := &attemptCtx{g: g, w: w, req: req, cand: cand, codec: newCodec(client, conn.Provider.Format)}
		s := a.newStreamState()
		s.rc, s.committed = rc, true
		err, gone := s.pump(resp)
		if err != io.EOF || gone || s.streamErr != nil || !s.sawEnd && s.tr == nil {
			b.Fatalf("relay: err %v gone %v stream %v", err, gone, s.streamErr)
		}
		s.release()
	}
}

// BenchmarkRelayStream: a same-format stream is copied event by event; a
// translated one (chat upstream, Anthropic client) is rebuilt per event.
func BenchmarkRelayStream(b *testing.B) {
	b.Run("same-format", func(b *testing.B) { benchRelay(b, translate.Chat) })
	b.Run("translated", func(b *testing.B) { benchRelay(b, translate.Messages) })
}

// BenchmarkRelayJSONChecks: what a same-format JSON answer costs besides the
// copy: the answer check (valid JSON, an answer and not an error) and the
// usage read for the log.
func BenchmarkRelayJSONChecks(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"gpt-4o-mini","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"Hello from bench-upstream-key"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14}}`)
	g := benchGateway()
	g.spend = nopSpend{} // the server wires one: served reads the bill's usage too
	c := newCodec(translate.Chat, providers.FormatOpenAI)
	cand := routing.Candidate{Conn: &routing.Conn{ID: "c1", BreakerKey: "openai-compatible"}, Model: "gpt-4o-mini"}
	b.ReportAllocs()
	for b.Loop() {
		_, text, top, err := c.response(body, chatBody)
		if err != nil {
			b.Fatal(err)
		}
		req := &request{}
		top.get(text)
		g.served(req, cand, http.StatusOK, text, top.usage)
		if req.log.CompletionTokens != 5 {
			b.Fatalf("usage %+v", req.log)
		}
	}
}

// nopSpend is a Spend that admits everything and prices nothing.
type nopSpend struct{}

func (nopSpend) Admit(string, string, []byte) (Hold, error) { return Hold{}, nil }

func (nopSpend) Charge(store.RequestLog, string, pricing.Usage, Hold) (sql.NullFloat64, float64) {
	return sql.NullFloat64{}, 0
}

func (nopSpend) Release(string, Hold) {}

// sinkFunc is a LogSink.
type sinkFunc func(store.RequestLog)

func (f sinkFunc) Log(l store.RequestLog) { f(l) }

// BenchmarkLogRow: building one request-log row (the attempts column
// included) for a request served on its first attempt.
func BenchmarkLogRow(b *testing.B) {
	g := benchGateway()
	var n int
	g.logs = sinkFunc(func(l store.RequestLog) { n += len(l.Attempts) })
	g.clk = fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	att := []AttemptRecord{{ConnectionID: "9e98eeb3f472a9634668de26d8a876b3", Provider: "openai-compatible", Model: "gpt-4o-mini",
		Status: 200, Verdict: "success", LatencyMs: 1}}
	b.ReportAllocs()
	for b.Loop() {
		req := &request{id: "0123456789abcdef0123456789abcdef", start: g.clk.Now(), format: translate.Chat, model: "openai-compatible/gpt-4o-mini",
			attempts: att}
		req.log.Status, req.log.ConnectionID, req.log.Provider = 200, att[0].ConnectionID, att[0].Provider
		g.finishLog(req)
	}
	if n == 0 {
		b.Fatal("no row logged")
	}
}

// fixedClock is a clock that never moves.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// rereadBody is a request body read again on every run.
type rereadBody struct{ bytes.Reader }

func (*rereadBody) Close() error { return nil }

// deadlineRecorder is a recorder whose connection takes deadlines, as a
// server's does (the recorder alone answers each with a new error value).
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error  { return nil }
func (deadlineRecorder) SetWriteDeadline(time.Time) error { return nil }
