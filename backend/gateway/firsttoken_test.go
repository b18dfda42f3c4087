package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// TestFirstTokenMemoryLimit: nothing until firstTokenMinSamples streams;
// then max(30 s, 3 × p95) of the last firstTokenSamples, rolling.
func TestFirstTokenMemoryLimit(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		samples []time.Duration
		want    time.Duration
	}{
		{"nothing learned", nil, 0},
		{"four samples: not yet", []time.Duration{s, s, s, s}, 0},
		{"fast model: the floor", []time.Duration{s, 2 * s, s, s, 2 * s}, 30 * s},
		{"3 × p95", []time.Duration{5 * s, 5 * s, 20 * s, 5 * s, 5 * s}, 60 * s},
		{"p95 of twenty: the 19th", append(repeat(18, 4*s), 12*s, 40*s), 36 * s},
		{"old samples roll out", append(repeat(5, 50*s), repeat(20, 2*s)...), 30 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m firstTokenMemory
			for _, d := range tt.samples {
				m.observe("c1", "m", d)
			}
			if got := m.limit("c1", "m"); got != tt.want {
				t.Fatalf("limit %v, want %v", got, tt.want)
			}
			if got := m.limit("c1", "other"); got != 0 {
				t.Fatalf("another model's limit %v, want none", got)
			}
		})
	}
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// quietGateway is a gateway whose only stream limits are a 10 min stall
// budget and the learned first-token limit.
func quietGateway() *Gateway {
	gen := config.DefaultGeneral()
	gen.StreamIdleTimeoutMs, gen.FirstTokenTimeoutMs, gen.AttemptDeadlineMs = 600_000, 0, 0
	res := config.DefaultResilience(func(string) string { return "" })
	return New(Deps{Clock: clock.Real{}, General: func() *config.General { return &gen }, Resilience: func() *config.Resilience { return &res }})
}

// quietStream starts a streaming attempt on cand (first-byte deadline 1 h,
// so only the watchdog acts), its relay state made as relayStream makes it.
func quietStream(g *Gateway, cand routing.Candidate) *attemptCtx {
	a := timedAttempt(g, time.Hour)
	a.cand, a.req.stream, a.req.format = cand, true, translate.Chat
	a.codec = newCodec(translate.Chat, providers.FormatOpenAI)
	s := a.newStreamState()
	s.armWatchdog()
	return a
}

var (
	commentEvent   = sse.Event{Comment: true}
	reasoningEvent = sse.Event{Data: []byte(`{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}`)}
)

// TestLearnedFirstTokenLimit: on by default once learned (5 streams whose
// first token came within 2 s: the 30 s floor), a stream quiet since its
// headers is cancelled as a first-token timeout — not at limit − 1 ms, at
// limit + 1 ms — which fails over like a first-byte timeout; an SSE comment
// starts the quiet over; thinking deltas every 3 s for 3 minutes are never
// cut; a model not learned yet, or a local connection, has no such limit.
func TestLearnedFirstTokenLimit(t *testing.T) {
	remote := routing.Candidate{Conn: &routing.Conn{ID: "c1", Provider: providers.Provider{ID: "openai-compatible",
		Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI}}, Model: "m"}
	local := routing.Candidate{Conn: &routing.Conn{ID: "c2", Provider: providers.Provider{ID: "ollama-local",
		Category: providers.CategoryLocal, Format: providers.FormatOpenAI}}, Model: "m"}
	const limit = 30 * time.Second
	synctest.Test(t, func(t *testing.T) {
		g := quietGateway()
		for range firstTokenMinSamples {
			g.firstTokens.observe("c1", "m", 2*time.Second)
			g.firstTokens.observe("c2", "m", 2*time.Second)
		}

		a := quietStream(g, remote)
		time.Sleep(limit - time.Millisecond)
		if err := cause(a); err != nil {
			t.Fatalf("at limit − 1 ms: cause %v", err)
		}
		time.Sleep(2 * time.Millisecond)
		if err := cause(a); err != errFirstToken {
			t.Fatalf("at limit + 1 ms: cause %v, want the first-token timeout", err)
		}
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
		if v := g.classifyErr(a.ctx, r, context.Canceled, remote); v.Kind != verdict.KindTimeout || !v.Failover {
			t.Fatalf("verdict %+v: want a timeout that fails over", v)
		}
		a.stopTimer()

		// A keep-alive comment at 20 s: the quiet starts over, due at 50 s.
		a = quietStream(g, remote)
		time.Sleep(20 * time.Second)
		a.stream.handle(commentEvent)
		time.Sleep(limit - time.Millisecond)
		if err := cause(a); err != nil {
			t.Fatalf("30 s after a keep-alive, − 1 ms: cause %v", err)
		}
		time.Sleep(2 * time.Millisecond)
		if err := cause(a); err != errFirstToken {
			t.Fatalf("30 s after a keep-alive, + 1 ms: cause %v", err)
		}
		a.stopTimer()

		// Thinking every 3 s for 3 minutes, then text: never cut.
		a = quietStream(g, remote)
		for range 60 {
			time.Sleep(3 * time.Second)
			a.stream.handle(reasoningEvent)
		}
		a.stream.handle(contentEvent)
		time.Sleep(time.Second)
		if err := cause(a); err != nil {
			t.Fatalf("a reasoning stream was cut: %v", err)
		}
		a.stopTimer()

		for name, cand := range map[string]routing.Candidate{
			"not learned": {Conn: remote.Conn, Model: "new-model"},
			"local":       local,
		} {
			a = quietStream(g, cand)
			time.Sleep(5 * time.Minute)
			if err := cause(a); err != nil {
				t.Fatalf("%s: cause %v, want no first-token limit", name, err)
			}
			a.stopTimer()
		}
	})
}

// TestStreamLearnsItsFirstToken: a stream that completes with an answer
// records its time to the first token (from its headers) for its target.
func TestStreamLearnsItsFirstToken(t *testing.T) {
	remote := routing.Candidate{Conn: &routing.Conn{ID: "c1", Provider: providers.Provider{ID: "openai-compatible",
		Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI}}, Model: "m"}
	synctest.Test(t, func(t *testing.T) {
		g := quietGateway()
		for i := range firstTokenMinSamples {
			a := quietStream(g, remote)
			time.Sleep(time.Duration(10+i) * time.Second)
			a.stream.handle(contentEvent)
			a.stream.learnFirstToken()
			a.stopTimer()
		}
		if got, want := g.firstTokens.limit("c1", "m"), 3*14*time.Second; got != want {
			t.Fatalf("learned limit %v, want %v (3 × the p95 of 10–14 s)", got, want)
		}
	})
}
