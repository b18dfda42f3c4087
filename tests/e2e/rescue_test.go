package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// The rescue suite: a misbehaving OpenAI-compatible provider, a combo
// primary → fallback, and each upstream fault scenario of issue 12, twice:
// with one connection serving the failing model and the fallback model
// ("one"), and with the two models on two connections ("two").

const (
	primaryModel  = "gpt-4o"
	fallbackModel = "gpt-4o-mini"
	rescueCombo   = "rescue"
)

// rescueRig is a fake upstream, a gateway and the combo.
type rescueRig struct {
	t                        *testing.T
	up                       *fakeupstream.Upstream
	gw                       *gatewayProc
	two                      bool
	primaryKey, fallbackKey  string
	primaryConn, fallbackCon string
}

// newRescue starts the rig; general and resil (may be nil) patch the general
// and resilience settings before the connections are added.
func newRescue(t *testing.T, two bool, general, resil map[string]any) *rescueRig {
	t.Helper()
	r := &rescueRig{t: t, up: fakeupstream.New(), two: two, primaryKey: "key-a", fallbackKey: "key-a"}
	base := r.up.Start()
	t.Cleanup(r.up.Close)
	r.gw = startGateway(t, t.TempDir(), 0)
	t.Cleanup(r.gw.stop)
	if general != nil {
		r.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", general)
	}
	if resil != nil {
		r.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/resilience", resil)
	}
	if two {
		r.fallbackKey = "key-b"
		r.primaryConn = r.addPrefixed("p", base, "key-a", primaryModel)
		r.fallbackCon = r.addPrefixed("f", base, "key-b", fallbackModel)
		r.combo("p/"+primaryModel, "f/"+fallbackModel)
	} else {
		r.primaryConn = r.addPrefixed("p", base, "key-a", primaryModel, fallbackModel)
		r.fallbackCon = r.primaryConn
		r.combo("p/"+primaryModel, "p/"+fallbackModel)
	}
	return r
}

func (r *rescueRig) addPrefixed(prefix, base, key string, models ...string) string {
	r.t.Helper()
	m := r.gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
		"verify": false, "provider": "openai-compatible", "name": prefix, "prefix": prefix, "authType": "apikey", "apiKey": key,
		"baseUrl": base + "/v1", "models": models,
	})
	id, _ := m["connection"].(map[string]any)["id"].(string)
	return id
}

func (r *rescueRig) combo(targets ...string) {
	r.t.Helper()
	ts := make([]any, len(targets))
	for i, t := range targets {
		ts[i] = map[string]any{"model": t}
	}
	r.gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/combos", map[string]any{"name": rescueCombo, "strategy": "priority", "targets": ts})
}

// fault installs f on the primary model only.
func (r *rescueRig) fault(f fakeupstream.Fault) {
	f.Models = []string{primaryModel}
	r.up.AddFault(r.primaryKey, f)
}

// fallbackFault installs f on the fallback model only.
func (r *rescueRig) fallbackFault(f fakeupstream.Fault) {
	f.Models = []string{fallbackModel}
	r.up.AddFault(r.fallbackKey, f)
}

// hits returns the upstream requests for the primary and the fallback model.
func (r *rescueRig) hits() (primary, fallback int) {
	return r.up.ModelHits(r.primaryKey, primaryModel), r.up.ModelHits(r.fallbackKey, fallbackModel)
}

// reply is one answered request.
type reply struct {
	resp    *http.Response
	body    []byte
	elapsed time.Duration
}

func (p reply) attempts() string { return p.resp.Header.Get("X-OmniRoute-Attempts") }
func (p reply) model() string    { return p.resp.Header.Get("X-OmniRoute-Model") }

func (r *rescueRig) ask(stream bool) reply {
	r.t.Helper()
	body := chatBody(rescueCombo, stream)
	if stream {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	start := time.Now()
	resp, out := r.gw.do(http.MethodPost, "/v1/chat/completions", body, map[string]string{"Authorization": "Bearer " + r.gw.key})
	return reply{resp: resp, body: out, elapsed: time.Since(start)}
}

// answered checks a 200 with one complete answer and exactly one usage.
func (r *rescueRig) answered(p reply, stream bool) {
	r.t.Helper()
	if p.resp.StatusCode != http.StatusOK {
		r.t.Fatalf("status %d, want 200: %s\ngateway stderr:\n%s", p.resp.StatusCode, p.body, r.gw.stderr.String())
	}
	want := fakeupstream.Content(r.primaryKey)
	if p.model() == fallbackModel {
		want = fakeupstream.Content(r.fallbackKey)
	}
	if !stream {
		if got := jsonContent(r.t, p.body); got != want {
			r.t.Errorf("answer %q, want %q", got, want)
		}
		var u struct {
			Usage struct {
				Total int `json:"total_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(p.body, &u) != nil || u.Usage.Total == 0 {
			r.t.Errorf("no usage in %s", p.body)
		}
		return
	}
	text, done := sseContent(r.t, p.body)
	if !done || text != want {
		r.t.Errorf("stream answer %q (done %v), want %q complete:\n%s", text, done, want, p.body)
	}
	if n := usageChunks(p.body); n != 1 {
		r.t.Errorf("%d usage chunks, want exactly 1:\n%s", n, p.body)
	}
}

// usageChunks counts the stream chunks carrying a usage object.
func usageChunks(body []byte) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Usage *struct {
				Total int `json:"total_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal([]byte(data), &c) == nil && c.Usage != nil && c.Usage.Total > 0 {
			n++
		}
	}
	return n
}

// expect checks the served model, the attempt count and the per-model hits.
func (r *rescueRig) expect(p reply, model string, attempts, primaryHits, fallbackHits int) {
	r.t.Helper()
	if got := p.model(); got != model {
		r.t.Errorf("served by model %q, want %q", got, model)
	}
	if got := p.attempts(); got != strconv.Itoa(attempts) {
		r.t.Errorf("X-OmniRoute-Attempts %q, want %d", got, attempts)
	}
	if ph, fh := r.hits(); ph != primaryHits || fh != fallbackHits {
		r.t.Errorf("upstream hits primary=%d fallback=%d, want %d and %d", ph, fh, primaryHits, fallbackHits)
	}
	wantConn := r.primaryConn
	if model == fallbackModel {
		wantConn = r.fallbackCon
	}
	if got := p.resp.Header.Get("X-OmniRoute-Selected-Connection-Id"); got != wantConn {
		r.t.Errorf("served by connection %q, want %q", got, wantConn)
	}
}

// forEachLayout runs fn with one connection and with two.
func forEachLayout(t *testing.T, fn func(t *testing.T, two bool)) {
	for _, two := range []bool{false, true} {
		name := "one-connection"
		if two {
			name = "two-connections"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, two)
		})
	}
}

// TestRescue429ShortRetryAfter: a 429 with Retry-After: 2 is waited out and
// retried on the same target, which answers.
func TestRescue429ShortRetryAfter(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "2"}, Times: 1})
		p := r.ask(false)
		r.answered(p, false)
		r.expect(p, primaryModel, 2, 2, 0)
		if p.elapsed < 2*time.Second {
			t.Errorf("answered after %v, want at least the 2 s hint", p.elapsed)
		}
		// A plain model (no combo) is retried in place the same way.
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "1"}, Times: 1})
		start := time.Now()
		resp, body := r.gw.chat(r.gw.key, "p/"+primaryModel, false)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Attempts") != "2" || time.Since(start) < time.Second {
			t.Errorf("plain model: %d, attempts %s after %v: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Attempts"), time.Since(start), body)
		}
		if ph, _ := r.hits(); ph != 4 {
			t.Errorf("primary hits %d, want 4", ph)
		}
	})
}

// TestRescue429LongRetryAfter: a 429 with Retry-After: 30 fails over to the
// fallback at once; the next request skips only the cooled model — with one
// connection its other model keeps serving.
func TestRescue429LongRetryAfter(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "30"}})
		p := r.ask(false)
		r.answered(p, false)
		r.expect(p, fallbackModel, 2, 1, 1)
		if p.elapsed > 2*time.Second {
			t.Errorf("fallback answered after %v: the long hint was waited for", p.elapsed)
		}
		for i := 0; i < 2; i++ {
			p = r.ask(i == 1)
			r.answered(p, i == 1)
			r.expect(p, fallbackModel, 1, 1, 2+i)
		}
	})
}

// TestRescue503Once: a 503 before the first byte is retried in place.
func TestRescue503Once(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503, Times: 1})
		p := r.ask(false)
		r.answered(p, false)
		r.expect(p, primaryModel, 2, 2, 0)
	})
}

// TestRescueResetBeforeFirstByte: a connection reset before any byte is
// retried in place, JSON and streaming.
func TestRescueResetBeforeFirstByte(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		for i, stream := range []bool{false, true} {
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeResetBeforeHeaders, HardReset: stream, Times: 1})
			p := r.ask(stream)
			r.answered(p, stream)
			r.expect(p, primaryModel, 2, 2*(i+1), 0)
		}
	})
}

// TestRescueFirstByteTimeout: an upstream that sends nothing before the
// first-byte deadline is not retried in place (another timeout would double the
// wait): the fallback answers.
func TestRescueFirstByteTimeout(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, map[string]any{"firstByteTimeoutMs": 1000}, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStallBeforeHeaders, StallMs: 5000, Times: 1})
		p := r.ask(true)
		r.answered(p, true)
		r.expect(p, fallbackModel, 2, 1, 1)
		if p.elapsed < time.Second || p.elapsed > 4*time.Second {
			t.Errorf("answered after %v, want just past the 1 s deadline", p.elapsed)
		}
	})
}

// TestRescueStallBeforeContent: a stream that opens and then stalls before any
// content reaches the client fails over.
func TestRescueStallBeforeContent(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, map[string]any{"firstByteTimeoutMs": 1000}, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStallMidStream, AfterChunks: 0, StallMs: 5000, Times: 1})
		p := r.ask(true)
		r.answered(p, true)
		r.expect(p, fallbackModel, 2, 1, 1)
	})
}

// TestRescueMalformedChunk: a malformed stream event before any content
// fails the attempt (never dropped into an empty or partial success); the
// retry on the same target is one complete answer with one usage.
func TestRescueMalformedChunk(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeMalformedEvent, AfterChunks: 0, Times: 1})
		p := r.ask(true)
		r.answered(p, true)
		r.expect(p, primaryModel, 2, 2, 0)
	})
}

// TestRescueClientErrorsReturnedAsIs: a 400 context-length is never resent
// unchanged to the model that refused it (a combo's other model may take it;
// a plain model gets the 400), and a 400 bad request is the client's to fix:
// returned as is, once.
func TestRescueClientErrorsReturnedAsIs(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Times: 1}) // context_length_exceeded
		p := r.ask(false)
		r.answered(p, false)
		r.expect(p, fallbackModel, 2, 1, 1)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Times: 1})
		resp, body := r.gw.chat(r.gw.key, "p/"+primaryModel, false)
		// OpenAI's own code relayed, the gateway's beside it (issue 41, M7).
		checkError(t, "context length", resp, body, http.StatusBadRequest, "context_length_exceeded")
		if !strings.Contains(string(body), `"omniroute_code":"CONTEXT_LENGTH_EXCEEDED"`) || !strings.Contains(string(body), `"param":"messages"`) {
			t.Errorf("context length: the gateway's code or the upstream's param is missing: %s", body)
		}
		if ph, fh := r.hits(); ph != 2 || fh != 1 {
			t.Errorf("context length: hits primary=%d fallback=%d, want 2 and 1", ph, fh)
		}
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Times: 1,
			Body: `{"error":{"message":"Invalid value for 'temperature': must be between 0 and 2.","type":"invalid_request_error","param":"temperature","code":null}}`})
		p = r.ask(false)
		checkError(t, "bad request", p.resp, p.body, http.StatusBadRequest, "UPSTREAM_BAD_REQUEST")
		if !strings.Contains(string(p.body), "must be between 0 and 2") {
			t.Errorf("the upstream's message is not returned: %s", p.body)
		}
		if ph, fh := r.hits(); ph != 3 || fh != 1 {
			t.Errorf("bad request: hits primary=%d fallback=%d, want 3 and 1", ph, fh)
		}
	})
}

// TestRescueWaitsOutItsOwnCooldowns: both targets answer 429 with hints too
// long for an in-place retry (retryMaxHintMs 1 s here) but short for the
// combo's cooldown wait: the request waits for the soonest cooldown its own
// attempts wrote and is answered, instead of an immediate 429.
func TestRescueWaitsOutItsOwnCooldowns(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, map[string]any{"failover": map[string]any{"retryMaxHintMs": 1000}})
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "2"}, Times: 1})
		r.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "3"}, Times: 1})
		p := r.ask(false)
		r.answered(p, false)
		r.expect(p, primaryModel, 3, 2, 1)
		if p.elapsed < 2*time.Second || p.elapsed > 3500*time.Millisecond {
			t.Errorf("answered after %v, want just past the soonest (2 s) cooldown", p.elapsed)
		}
	})
}

// TestRescueAllRateLimited: every target rate limited → 429 whose Retry-After
// is the real cooldown, before and after the attempts.
func TestRescueAllRateLimited(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		// 90 s is past comboCooldownWait.maxWaitMs (65 s): no waiting.
		r := newRescue(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "90"}})
		r.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "90"}})
		p := r.ask(false)
		checkRateLimited(t, "all rate limited", p, "rate_limit_error")
		if got := p.resp.Header.Get("Retry-After"); got != "90" {
			t.Errorf("Retry-After %q, want 90 (the real cooldown)", got)
		}
		if p.attempts() != "" && p.attempts() != "2" {
			t.Errorf("attempts %q", p.attempts())
		}
		if ph, fh := r.hits(); ph != 1 || fh != 1 {
			t.Errorf("hits primary=%d fallback=%d, want 1 and 1", ph, fh)
		}
		p = r.ask(false) // nothing is dispatched while both cool
		checkRateLimited(t, "still rate limited", p, "rate_limit_error")
		if s, _ := strconv.Atoi(p.resp.Header.Get("Retry-After")); s < 88 || s > 90 {
			t.Errorf("second Retry-After %d, want the remaining ~90 s", s)
		}
		if ph, fh := r.hits(); ph != 1 || fh != 1 {
			t.Errorf("a cooling target was dispatched: hits %d %d", ph, fh)
		}
	})
}

// TestRescueQuotaExhausted: an exhausted quota cools until the announced
// reset and is answered 429 with that reset, never 502 / 503 without a hint.
func TestRescueQuotaExhausted(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		quota := fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "7200"},
			Body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`}
		r.fault(quota)
		r.fallbackFault(quota)
		p := r.ask(false)
		checkRateLimited(t, "quota", p, "QUOTA_EXHAUSTED")
		if p.elapsed > 2*time.Second {
			t.Errorf("a quota exhaustion was waited for (%v)", p.elapsed)
		}
		if got := p.resp.Header.Get("Retry-After"); got != "7200" {
			t.Errorf("Retry-After %q, want 7200 (the announced reset)", got)
		}
		// One connection: the quota is the account's, so its fallback model is
		// not tried; two connections: each account says so once.
		wantFallback := 0
		if two {
			wantFallback = 1
		}
		if ph, fh := r.hits(); ph != 1 || fh != wantFallback {
			t.Errorf("hits primary=%d fallback=%d, want 1 and %d", ph, fh, wantFallback)
		}
		p = r.ask(false)
		checkRateLimited(t, "quota again", p, "QUOTA_EXHAUSTED")
		if s, _ := strconv.Atoi(p.resp.Header.Get("Retry-After")); s < 7190 || s > 7200 {
			t.Errorf("second Retry-After %d, want the remaining ~7200 s", s)
		}
	})
}

// TestRescueAlways5xxStopsWastingAttempts: a target that answers 503 to every
// request is retried once in place (a request counts once towards the failure
// streak), the third request's failure cools it, and from then on no attempt
// is wasted on it; the connection's other model keeps serving.
func TestRescueAlways5xxStopsWastingAttempts(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
		want := []struct{ attempts, primary int }{{3, 2}, {3, 4}, {2, 5}, {1, 5}, {1, 5}}
		for i, w := range want {
			p := r.ask(false)
			r.answered(p, false)
			r.expect(p, fallbackModel, w.attempts, w.primary, i+1)
		}
	})
}

// TestRescueFlappingPrimary: a primary down for a while and healthy afterwards
// (the 60 s down / 20 requests 4 s apart / used again within 30 s,
// scaled to 2.5 s down / 20 requests 250 ms apart / used again within 1.5 s,
// with a 1 s breaker reset timeout and a 200 ms cooldown ladder capped at
// 800 ms): every request is answered, and the primary serves again soon after
// it recovers.
func TestRescueFlappingPrimary(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newRescue(t, two, nil, map[string]any{
			"providerBreaker":    map[string]any{"apikey": map[string]any{"resetTimeoutMs": 1000}},
			"connectionCooldown": map[string]any{"apikey": map[string]any{"baseCooldownMs": 200, "maxBackoffSteps": 2}},
		})
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
		const (
			down    = 2500 * time.Millisecond
			spacing = 250 * time.Millisecond
		)
		start := time.Now()
		var recoveredAt time.Time
		backAt := time.Duration(-1)
		for i := 0; i < 20; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i) * spacing)))
			if recoveredAt.IsZero() && time.Since(start) >= down {
				r.up.ClearFaults()
				recoveredAt = time.Now()
			}
			p := r.ask(false)
			r.answered(p, false)
			if !recoveredAt.IsZero() && backAt < 0 && p.model() == primaryModel {
				backAt = time.Since(recoveredAt)
			}
		}
		if recoveredAt.IsZero() {
			t.Fatal("the requests ended before the primary recovered")
		}
		t.Logf("primary serving again %v after recovery", backAt)
		if backAt < 0 || backAt > 1500*time.Millisecond {
			t.Errorf("primary used again %v after recovery, want within 1.5 s", backAt)
		}
	})
}

// checkRateLimited asserts a 429 in the error envelope with a code, a
// rate_limit_error type and a Retry-After.
func checkRateLimited(t *testing.T, what string, p reply, code string) {
	t.Helper()
	var env envelope
	if p.resp.StatusCode != http.StatusTooManyRequests || json.Unmarshal(p.body, &env) != nil || env.Error == nil {
		t.Fatalf("%s: %d %s, want 429 in the error envelope", what, p.resp.StatusCode, p.body)
	}
	if env.Error.Code != code || env.Error.Type != "rate_limit_error" || p.resp.Header.Get("Retry-After") == "" {
		t.Errorf("%s: code %q type %q Retry-After %q, want %s / rate_limit_error / set: %s", what, env.Error.Code, env.Error.Type,
			p.resp.Header.Get("Retry-After"), code, p.body)
	}
}

// newContinueRig is the continuation layout: the fallback speaks Anthropic
// Messages (which takes an assistant prefill). One connection: an
// Anthropic-compatible endpoint serving both models; two: the primary on an
// OpenAI-compatible endpoint, the fallback on an Anthropic-compatible one.
func newContinueRig(t *testing.T, two bool, general, resil map[string]any) *rescueRig {
	t.Helper()
	r := &rescueRig{t: t, up: fakeupstream.New(), two: two, primaryKey: "key-a", fallbackKey: "key-a"}
	base := r.up.Start()
	t.Cleanup(r.up.Close)
	r.gw = startGateway(t, t.TempDir(), 0)
	t.Cleanup(r.gw.stop)
	if general != nil {
		r.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", general)
	}
	if resil != nil {
		r.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/resilience", resil)
	}
	add := func(provider, prefix, key string, models ...string) string {
		m := r.gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
			"verify": false, "provider": provider, "name": prefix, "prefix": prefix, "authType": "apikey", "apiKey": key,
			"baseUrl": base + "/v1", "models": models,
		})
		id, _ := m["connection"].(map[string]any)["id"].(string)
		return id
	}
	if two {
		r.fallbackKey = "key-b"
		r.primaryConn = add("openai-compatible", "p", "key-a", primaryModel)
		r.fallbackCon = add("anthropic-compatible", "f", "key-b", fallbackModel)
		r.combo("p/"+primaryModel, "f/"+fallbackModel)
	} else {
		r.primaryConn = add("anthropic-compatible", "p", "key-a", primaryModel, fallbackModel)
		r.fallbackCon = r.primaryConn
		r.combo("p/"+primaryModel, "p/"+fallbackModel)
	}
	return r
}

// continuedText is the answer a continued stream must assemble: the
// delivered prefix of the primary's answer and the fallback's rest; the fake
// fallback refuses (400) a prefill that is not the start of its own answer.
func (r *rescueRig) continuedText() string { return fakeupstream.Content(r.fallbackKey) }

// expectContinued checks one complete answer, one usage, the continuation
// note, and that the prefill reached the fallback as a trailing assistant message.
func (r *rescueRig) expectContinued(p reply, wantAttempts int) {
	r.t.Helper()
	if p.resp.StatusCode != http.StatusOK {
		r.t.Fatalf("status %d: %s", p.resp.StatusCode, p.body)
	}
	text, done := sseContent(r.t, p.body)
	if !done || text != r.continuedText() {
		r.t.Errorf("continued answer %q (done %v), want %q complete:\n%s", text, done, r.continuedText(), p.body)
	}
	if n := usageChunks(p.body); n != 1 {
		r.t.Errorf("%d usage chunks, want exactly 1:\n%s", n, p.body)
	}
	if !strings.Contains(string(p.body), ": omniroute continued the answer on anthropic-compatible/"+fallbackModel+" after ") {
		r.t.Errorf("the stream does not say it was continued:\n%s", p.body)
	}
	if ph, fh := r.hits(); ph != 1 || fh != 1 {
		r.t.Errorf("hits primary=%d fallback=%d, want 1 and 1", ph, fh)
	}
	_, last := r.up.LastRequest(r.fallbackKey)
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if json.Unmarshal(last, &req) != nil || len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role != "assistant" {
		r.t.Errorf("the fallback did not get the delivered text as a trailing assistant message: %s", last)
	}
	r.checkLogContinued(wantAttempts)
}

// checkLogContinued: the request log names the continuation and where it began.
func (r *rescueRig) checkLogContinued(wantAttempts int) {
	r.t.Helper()
	var b []byte
	for i := 0; i < 40; i++ { // the log is written in batches, about once a second
		code, m := r.gw.mgmt(http.MethodGet, "/api/logs?limit=1", nil)
		if code != http.StatusOK {
			r.t.Fatalf("logs: %d %v", code, m)
		}
		b, _ = json.Marshal(m)
		if strings.Contains(string(b), "continuedFromChars") {
			if !strings.Contains(string(b), `\"attemptCount\":`+strconv.Itoa(wantAttempts)) && !strings.Contains(string(b), `"attemptCount":`+strconv.Itoa(wantAttempts)) {
				r.t.Errorf("log attempt count, want %d: %s", wantAttempts, b)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Errorf("the request log does not record the continuation: %s", b)
}

// originalFailure checks the stream ended with the original break's error
// event and no clean end, and that nothing claims a continuation.
func originalFailure(t *testing.T, p reply, code string) {
	t.Helper()
	body := string(p.body)
	if p.resp.StatusCode != http.StatusOK || !strings.Contains(body, code) || strings.Contains(body, "[DONE]") ||
		strings.Contains(body, "omniroute continued") || strings.Contains(body, "omniroute restarted") {
		t.Errorf("want the original %s failure, no clean end and no continuation:\n%s", code, body)
	}
}

// TestRescueStreamCutIsContinued: a committed stream cut after N events is
// finished by the fallback from the delivered text (prefill): one complete
// answer with one usage. A fallback that rejects prefill is sent the
// original request instead and its answer spliced once it reproduced the
// delivered text (issue 40); when its answer diverges, or with continuation
// turned off, the client gets the original failure.
func TestRescueStreamCutIsContinued(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		t.Run("continued", func(t *testing.T) {
			r := newContinueRig(t, two, nil, nil)
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
			r.expectContinued(r.ask(true), 2)
		})
		t.Run("anthropic client", func(t *testing.T) {
			r := newContinueRig(t, two, nil, nil)
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
			resp, body := r.gw.do(http.MethodPost, "/v1/messages", map[string]any{"model": rescueCombo, "max_tokens": 64, "stream": true,
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
				map[string]string{"x-api-key": r.gw.key, "anthropic-beta": "context-management-2025-06-27"})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			// The continuation is an Anthropic passthrough too: the client's betas go with it.
			if h, _ := r.up.LastRequest(r.fallbackKey); !strings.Contains(h.Get("anthropic-beta"), "context-management-2025-06-27") {
				t.Errorf("continuation anthropic-beta %q, want the client's beta", h.Get("anthropic-beta"))
			}
			text, events := anthropicStream(t, body)
			if text != r.continuedText() || events["message_start"] != 1 || events["message_stop"] != 1 || events["error"] != 0 ||
				events["content_block_start"] != 1 {
				t.Errorf("continued Anthropic stream: text %q events %v, want %q with one message_start / block start / message_stop:\n%s",
					text, events, r.continuedText(), body)
			}
		})
		t.Run("fallback rejects prefill", func(t *testing.T) {
			r := newContinueRig(t, two, nil, nil)
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
			r.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill})
			p := r.ask(true)
			text, done := sseContent(t, p.body)
			if !done || text != r.continuedText() || usageChunks(p.body) != 1 ||
				!strings.Contains(string(p.body), ": omniroute restarted the answer on anthropic-compatible/"+fallbackModel+" and spliced it after ") {
				t.Fatalf("want the restart spliced: %q (done %v):\n%s", text, done, p.body)
			}
			if _, fh := r.hits(); fh != 2 { // the refused prefill, then the restart
				t.Errorf("the fallback was called %d times, want 2", fh)
			}
		})
		t.Run("fallback rejects prefill and restarts another answer", func(t *testing.T) {
			r := newContinueRig(t, two, nil, nil)
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
			r.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeRejectPrefill, Times: 1})
			r.fallbackFault(fakeupstream.Fault{Mode: fakeupstream.ModeRestartDiverges, AnswerAs: r.primaryKey})
			originalFailure(t, r.ask(true), "STREAM_TRUNCATED")
		})
		t.Run("continuation off", func(t *testing.T) {
			r := newContinueRig(t, two, nil, map[string]any{"failover": map[string]any{"streamContinuation": false}})
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
			originalFailure(t, r.ask(true), "STREAM_TRUNCATED")
			if _, fh := r.hits(); fh != 0 {
				t.Errorf("the fallback was called %d times with continuation off", fh)
			}
		})
	})
}

// TestRescueStallAndErrorEventAreContinued: a stream that stalls after some
// text, or carries an upstream error event, is continued the same way.
func TestRescueStallAndErrorEventAreContinued(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		t.Run("stall mid-stream", func(t *testing.T) {
			r := newContinueRig(t, two, map[string]any{"streamIdleTimeoutMs": 1000}, nil)
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeStallMidStream, AfterChunks: 1, StallMs: 10_000, Times: 1})
			p := r.ask(true)
			r.expectContinued(p, 2)
			if p.elapsed < time.Second {
				t.Errorf("continued after %v, before the 1 s stall budget", p.elapsed)
			}
		})
		t.Run("error event", func(t *testing.T) {
			r := newContinueRig(t, two, nil, nil)
			r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeErrorEvent, AfterChunks: 1, LatencyMs: 200, Times: 1})
			r.expectContinued(r.ask(true), 2)
		})
	})
}

// anthropicStream assembles the text of an Anthropic Messages stream and
// counts its events by name.
func anthropicStream(t *testing.T, body []byte) (string, map[string]int) {
	t.Helper()
	var text strings.Builder
	events := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			events[name]++
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type  string `json:"type"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			text.WriteString(ev.Delta.Text)
		}
	}
	return text.String(), events
}
