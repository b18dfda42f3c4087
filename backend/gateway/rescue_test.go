package gateway

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
	"omniroute/backend/translate"
	"omniroute/backend/translate/frames"
	"omniroute/backend/translate/sse"
)

func gatewayWith(f config.Failover) *Gateway {
	r := config.DefaultResilience(func(string) string { return "" })
	r.Failover = f
	return &Gateway{resil: func() *config.Resilience { return &r }}
}

// TestRetryDelay: which failures are retried in place, and after how long —
// a 429's hint up to failover.retryMaxHintMs inclusive (boundary −1 ms / +1 ms),
// never less than the hint; 5xx and resets; never timeouts or client errors.
func TestRetryDelay(t *testing.T) {
	g := gatewayWith(config.Failover{RetryMaxHintMs: 5000, RetriesPerTarget: 1})
	rl := func(hint time.Duration) verdict.Verdict {
		return verdict.Verdict{Kind: verdict.KindRateLimit, Scope: verdict.ScopeModel, Failover: true, RetryAfter: hint}
	}
	tests := []struct {
		name  string
		v     verdict.Verdict
		retry bool
		min   time.Duration
		max   time.Duration
	}{
		{"429 hint 2 s", rl(2 * time.Second), true, 2 * time.Second, 2*time.Second + 200*time.Millisecond + retryMargin},
		{"429 hint at the limit", rl(5 * time.Second), true, 5 * time.Second, 5*time.Second + 500*time.Millisecond + retryMargin},
		{"429 hint limit −1 ms", rl(5*time.Second - time.Millisecond), true, 5*time.Second - time.Millisecond, 6 * time.Second},
		{"429 hint limit +1 ms", rl(5*time.Second + time.Millisecond), false, 0, 0},
		{"429 without hint", rl(0), false, 0, 0},
		{"503", verdict.Verdict{Kind: verdict.KindServer, Status: 503, Failover: true}, true, 250 * time.Millisecond, 313 * time.Millisecond},
		{"503 with a long hint", verdict.Verdict{Kind: verdict.KindServer, Status: 503, RetryAfter: 30 * time.Second}, false, 0, 0},
		{"reset", verdict.Verdict{Kind: verdict.KindTransport, Failover: true}, true, 250 * time.Millisecond, 313 * time.Millisecond},
		{"first-byte timeout", verdict.Verdict{Kind: verdict.KindTimeout, Failover: true}, false, 0, 0},
		{"quota", verdict.Verdict{Kind: verdict.KindQuota, RetryAfter: time.Second, CoolConnection: true}, false, 0, 0},
		{"bad request", verdict.Verdict{Kind: verdict.KindBadRequest, Status: 400}, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 50; i++ { // jitter: every draw within bounds
				d, ok := g.retryDelay(tt.v, 0)
				if ok != tt.retry {
					t.Fatalf("retry = %v, want %v", ok, tt.retry)
				}
				if ok && (d < tt.min || d > tt.max) {
					t.Fatalf("delay %v, want in [%v, %v]", d, tt.min, tt.max)
				}
			}
		})
	}
	off := gatewayWith(config.Failover{RetryMaxHintMs: 0})
	if _, ok := off.retryDelay(rl(time.Second), 0); ok {
		t.Fatal("retryMaxHintMs 0 still retries a 429 in place")
	}
}

func TestRetriesPerTarget(t *testing.T) {
	two := 2
	tests := []struct {
		name string
		plan routing.Plan
		set  int
		want int
	}{
		{"plain model uses the setting", routing.Plan{}, 1, 1},
		{"plain model, retries off", routing.Plan{}, 0, 0},
		{"combo default", routing.Plan{Combo: &routing.Combo{}}, 0, 1},
		{"combo maxRetriesPerTarget", routing.Plan{Combo: &routing.Combo{Config: routing.ComboConfig{MaxRetriesPerTarget: &two}}}, 0, 2},
	}
	for _, tt := range tests {
		if got := gatewayWith(config.Failover{RetriesPerTarget: tt.set}).retriesPerTarget(&tt.plan); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestTerminalAnswers: every attempt limited → 429 with the real soonest
// eligibility; quota only → 429 QUOTA_EXHAUSTED with the reset; genuine
// breakage → 502.
func TestTerminalAnswers(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	x := func(reason, detail string, d time.Duration, transient bool) routing.Exclusion {
		return routing.Exclusion{ConnectionID: "c", Model: "m", Reason: reason, Detail: detail, Remaining: d, Transient: transient}
	}
	att := func(kinds ...verdict.Kind) *request {
		r := &request{model: "combo"}
		for _, k := range kinds {
			r.attempts = append(r.attempts, AttemptRecord{Verdict: string(k)})
		}
		return r
	}
	tests := []struct {
		name   string
		req    *request
		last   verdict.Verdict
		ex     []routing.Exclusion
		status errs.Class
		code   string
		retry  time.Duration
	}{
		{"all rate limited: real cooldown", att(verdict.KindRateLimit, verdict.KindRateLimit),
			verdict.Verdict{Kind: verdict.KindRateLimit, RetryAfter: time.Second},
			[]routing.Exclusion{x("model_cooldown", "", 90*time.Second, true), x("model_cooldown", "", 40*time.Second, true)},
			errs.RateLimited, "rate_limit_error", 40 * time.Second},
		{"quota only: the reset", att(verdict.KindQuota),
			verdict.Verdict{Kind: verdict.KindQuota, RetryAfter: 2 * time.Hour},
			[]routing.Exclusion{x("connection_cooldown", "quota", 2*time.Hour, false)},
			errs.RateLimited, "QUOTA_EXHAUSTED", 2 * time.Hour},
		{"rate limit and quota: soonest of both", att(verdict.KindQuota, verdict.KindRateLimit),
			verdict.Verdict{Kind: verdict.KindRateLimit},
			[]routing.Exclusion{x("connection_cooldown", "quota", 2*time.Hour, false), x("model_cooldown", "", 30*time.Second, true)},
			errs.RateLimited, "rate_limit_error", 30 * time.Second},
		{"breakage: 502", att(verdict.KindServer, verdict.KindTransport),
			verdict.Verdict{Kind: verdict.KindTransport, Message: "reset"}, nil,
			errs.Upstream, "ALL_ATTEMPTS_FAILED", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := terminalError(tt.req, &failure{v: tt.last}, routing.Plan{Excluded: tt.ex}, now)
			var e *errs.Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v", err, err)
			}
			if e.Class != tt.status || e.Code != tt.code || e.RetryAfter != tt.retry {
				t.Fatalf("class %v code %q retry %v, want %v %q %v", e.Class, e.Code, e.RetryAfter, tt.status, tt.code, tt.retry)
			}
		})
	}
	// Nothing dispatched, only a quota cooldown: 429 with its reset, not 503 without a hint.
	err := terminalError(&request{model: "m"}, nil, routing.Plan{Excluded: []routing.Exclusion{x("connection_cooldown", "quota", time.Hour, false)}}, now)
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != "QUOTA_EXHAUSTED" || e.RetryAfter != time.Hour {
		t.Fatalf("pre-dispatch quota: %v", err)
	}
}

// TestOpeningFilter: a continuation's client bytes lose the frames that open
// an answer (and the white space the prefill left out), keep the rest.
func TestOpeningFilter(t *testing.T) {
	chat := func(delta string) []byte {
		return sse.Append(nil, "", []byte(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":`+delta+`,"finish_reason":null}]}`))
	}
	f := openingFilter(translate.Chat, true, nil)
	var in []byte
	in = append(in, chat(`{"role":"assistant","content":""}`)...)
	in = append(in, chat(`{"content":"  from"}`)...)
	in = append(in, chat(`{"content":" key"}`)...)
	in = append(in, sse.Append(nil, "", []byte("[DONE]"))...)
	out := string(f(in))
	if strings.Contains(out, `"role"`) || !strings.Contains(out, `"content":"from"`) || !strings.Contains(out, `"content":" key"`) ||
		!strings.Contains(out, "data: [DONE]") {
		t.Fatalf("chat filter output:\n%s", out)
	}
	m := openingFilter(translate.Messages, false, &clientBlocks{started: 1, lastText: true, open: true})
	var min []byte
	min = sse.Append(min, "message_start", []byte(`{"type":"message_start","message":{"id":"x"}}`))
	min = sse.Append(min, "content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	min = sse.Append(min, "ping", []byte(`{"type":"ping"}`))
	min = sse.Append(min, "content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" rest"}}`))
	min = sse.Append(min, "message_stop", []byte(`{"type":"message_stop"}`))
	out = string(m(min))
	for _, gone := range []string{"message_start", "content_block_start", "ping"} {
		if strings.Contains(out, "event: "+gone) {
			t.Fatalf("%s kept:\n%s", gone, out)
		}
	}
	if !strings.Contains(out, `"text":" rest"`) || !strings.Contains(out, "event: message_stop") {
		t.Fatalf("messages filter output:\n%s", out)
	}
	// After a thinking block the client's open text block is 1: the
	// continuation's blocks are numbered from there.
	min = sse.Append(min[:0], "content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	min = sse.Append(min, "content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" rest"}}`))
	min = sse.Append(min, "content_block_stop", []byte(`{"type":"content_block_stop","index":0}`))
	min = sse.Append(min, "message_delta", []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`))
	out = string(openingFilter(translate.Messages, false, &clientBlocks{started: 2, lastText: true, open: true})(min))
	if strings.Contains(out, "content_block_start") || strings.Contains(out, `"index":0`) ||
		strings.Count(out, `"index":1`) != 2 || !strings.Contains(out, `"text":" rest"`) || !strings.Contains(out, `"stop_reason":"end_turn"`) {
		t.Fatalf("messages filter output after a thinking block:\n%s", out)
	}
}

func TestWithPrefillAndDeltaText(t *testing.T) {
	body, err := withPrefill(translate.Chat, []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`), "Hello")
	if err != nil {
		t.Fatal(err)
	}
	last := gjson.GetBytes(body, "messages.1")
	if last.Get("role").String() != "assistant" || last.Get("content").String() != "Hello" || gjson.GetBytes(body, "messages.#").Int() != 2 {
		t.Fatalf("prefill body %s", body)
	}
	// A prefill never asks for reasoning: Anthropic refuses one with thinking on.
	for _, c := range []struct {
		f    translate.Format
		body string
	}{
		{translate.Chat, `{"model":"m","reasoning_effort":"high","reasoning":{"effort":"high"},"messages":[{"role":"user","content":"hi"}]}`},
		{translate.Messages, `{"model":"m","max_tokens":64,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`},
	} {
		body, err := withPrefill(c.f, []byte(c.body), "Hel")
		if err != nil {
			t.Fatal(err)
		}
		root := gjson.ParseBytes(body)
		if root.Get("thinking").Exists() || root.Get("reasoning_effort").Exists() || root.Get("reasoning").Exists() ||
			root.Get("messages.1.content").String() != "Hel" || !root.Get("stream").Bool() || root.Get("model").String() != "m" {
			t.Fatalf("%v prefill body %s", c.f, body)
		}
	}
	if _, got := frames.ClassifyText(translate.Chat, sse.Event{Data: []byte(`{"choices":[{"delta":{"content":"ab"}}]}`)}); got != "ab" {
		t.Fatalf("chat delta %q", got)
	}
	if _, got := frames.ClassifyText(translate.Messages, sse.Event{Event: "content_block_delta",
		Data: []byte(`{"type":"content_block_delta","delta":{"type":"text_delta","text":"cd"}}`)}); got != "cd" {
		t.Fatalf("messages delta %q", got)
	}
}
