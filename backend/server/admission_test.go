package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"omniroute/backend/routing"
	"omniroute/tests/fakeupstream"
)

// TestAdmissionLoadWithCancels: 1,000 concurrent requests, streamed and
// buffered, through a connection whose maxConcurrent and modelConcurrency
// make most of them wait in the gate and the queue; 30 % of the clients go
// away at a random moment (queued, waiting, or mid-stream). Afterwards every
// gate counter and queue is back to zero, the upstream never saw more than the
// model cap at once, and (TestMain's goleak) no goroutine is left behind.
func TestAdmissionLoadWithCancels(t *testing.T) {
	e := newEnvClock(t, true)
	id := e.addConn("capped", "key-a", 1)
	// A wait budget no request reaches: about 700 requests pass 4 at a time
	// (40-50 s in all at load 25-30 on 2 cores); with the default 30 s budget
	// 514 of them were refused (503) in one run at that load, 24 in another.
	// What is checked is that everything is released, not the queue's length.
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"maxConcurrent": 8,
		"rateLimitOverrides": map[string]any{"modelConcurrency": map[string]any{"gpt-4o-mini": 4}, "maxWaitMs": 600_000}}); code != 200 {
		t.Fatalf("patch connection: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeSlowDrip, DripMs: 2})
	gw := e.srv.API().Gateway

	const n = 1000
	var ok, canceled, other atomic.Int64
	var wg sync.WaitGroup
	client := e.ts.Client()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 14))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if r.IntN(10) < 3 {
				time.AfterFunc(time.Duration(r.IntN(400))*time.Millisecond, cancel)
			}
			body, _ := json.Marshal(map[string]any{"model": "openai-compatible/gpt-4o-mini", "stream": i%2 == 0,
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
			req, _ := http.NewRequestWithContext(ctx, "POST", e.ts.URL+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				canceled.Add(1)
				return
			}
			_, rerr := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch {
			case rerr != nil || ctx.Err() != nil:
				canceled.Add(1)
			case resp.StatusCode == http.StatusOK:
				ok.Add(1)
			default:
				other.Add(1)
				t.Logf("unexpected status %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	t.Logf("served %d, client-cancelled %d, other %d", ok.Load(), canceled.Load(), other.Load())
	if ok.Load() < n/2 || canceled.Load() == 0 {
		t.Errorf("served %d and cancelled %d of %d: the load did not exercise both paths", ok.Load(), canceled.Load(), n)
	}
	if other.Load() != 0 {
		t.Errorf("%d requests got an unexpected status", other.Load())
	}
	deadline := time.Now().Add(10 * time.Second)
	for !(gw.AdmissionIdle() && gw.InFlight() == 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !gw.AdmissionIdle() || gw.InFlight() != 0 {
		t.Fatalf("after the load: admission idle %v, in flight %d; want every gate and queue at zero", gw.AdmissionIdle(), gw.InFlight())
	}
	code, m := e.mgmt("GET", "/api/rate-limits", nil)
	c := m["connections"].([]any)[0].(map[string]any)
	if code != 200 || c["inFlight"] != float64(0) || c["waiting"] != float64(0) || c["queued"] != float64(0) {
		t.Errorf("GET /api/rate-limits after the load = %d %v, want zero counters", code, c)
	}
	if peak := e.up.PeakInFlight("gpt-4o-mini"); peak > 4 {
		t.Errorf("upstream saw %d concurrent requests for the model, over its cap of 4", peak)
	}
	e.stop()
	e.srv.CloseIdleConnections()
}

// quotaShareEnv is one connection (maxConcurrent 1) serving models a and b,
// and a quota-share combo over both, against a slow upstream.
func quotaShareEnv(t *testing.T, overrides map[string]any) (*env, string) {
	e := newEnvClock(t, true)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "shared account",
		"apiKey": "key-a", "baseUrl": e.upURL, "models": []string{"a", "b"}, "maxConcurrent": 1, "rateLimitOverrides": overrides})
	if code != http.StatusCreated {
		t.Fatalf("create connection: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	code, m = e.mgmt("POST", "/api/combos", map[string]any{"name": "qs", "strategy": "priority", "quotaShare": true,
		"targets": []any{map[string]any{"model": "openai-compatible/a"}, map[string]any{"model": "openai-compatible/b"}}})
	if code != http.StatusCreated || m["combo"].(map[string]any)["quotaShare"] != true {
		t.Fatalf("create combo: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 800})
	return e, id
}

func concurrentChats(e *env, model string, n int) []int {
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
			req, _ := http.NewRequest("POST", e.ts.URL+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := e.ts.Client().Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	return statuses
}

// Quota-share targets on one account are serialised through the account's
// gate: three concurrent combo requests, whichever model each is routed to,
// never overlap upstream.
func TestQuotaShareSerialised(t *testing.T) {
	e, _ := quotaShareEnv(t, nil)
	for i, s := range concurrentChats(e, "qs", 3) {
		if s != http.StatusOK {
			t.Errorf("request %d: status %d, want 200", i, s)
		}
	}
	if peak := e.up.PeakInFlightAll(); peak != 1 {
		t.Errorf("upstream saw %d concurrent requests on the shared account, want 1", peak)
	}
	if !e.srv.API().Gateway.AdmissionIdle() {
		t.Error("gate not idle after the requests")
	}
}

// Fail-open: when the wait budget runs out, a quota-share request proceeds
// without a slot instead of being refused; a plain request in the same spot
// gets the queue-timeout code and never reaches the upstream.
func TestQuotaShareFailOpen(t *testing.T) {
	e, _ := quotaShareEnv(t, map[string]any{"maxWaitMs": 100})
	for i, s := range concurrentChats(e, "qs", 2) {
		if s != http.StatusOK {
			t.Errorf("combo request %d: status %d, want 200 (fail-open)", i, s)
		}
	}
	if peak := e.up.PeakInFlightAll(); peak != 2 {
		t.Errorf("upstream peak = %d, want 2: the second request went ahead without a slot", peak)
	}
	hits := e.up.Hits("key-a")
	statuses := concurrentChats(e, "openai-compatible/a", 2)
	ok, timedOut := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
			timedOut++
		}
	}
	if ok != 1 || timedOut != 1 || e.up.Hits("key-a") != hits+1 {
		t.Errorf("plain requests = %v (upstream +%d), want one 200 and one 503 that never reached the upstream", statuses, e.up.Hits("key-a")-hits)
	}
}

// POST /api/rate-limits is the one write path of rateLimitProtection: PUT
// /api/providers/{id} never changes it, and the routing registry follows the
// toggle at once. PATCH takes maxConcurrent and modelConcurrency, merging
// rateLimitOverrides; bad caps are 400s.
func TestRateLimitProtectionAndCaps(t *testing.T) {
	e := newEnv(t)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "ollama-local", "name": "local", "baseUrl": e.upURL,
		"rateLimitOverrides": map[string]any{"baseCooldownMs": 5000}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	entry := func() map[string]any {
		_, m := e.mgmt("GET", "/api/rate-limits", nil)
		return m["connections"].([]any)[0].(map[string]any)
	}
	if l := entry(); l["enabled"] != false || l["effective"] != false {
		t.Fatalf("a local connection starts unprotected: %v", l)
	}
	if code, m := e.mgmt("PUT", "/api/providers/"+id, map[string]any{"rateLimitProtection": true, "name": "renamed"}); code != 200 {
		t.Fatalf("PUT: %d %v", code, m)
	}
	if l := entry(); l["enabled"] != false || l["effective"] != false {
		t.Fatalf("PUT changed the protection: %v", l)
	}
	if code, m := e.mgmt("POST", "/api/rate-limits", map[string]any{"connectionId": id, "enabled": true}); code != 200 || m["effective"] != true {
		t.Fatalf("POST /api/rate-limits: %d %v", code, m)
	}
	if l := entry(); l["enabled"] != true || l["effective"] != true {
		t.Fatalf("after the toggle: %v", l)
	}
	for _, bad := range []map[string]any{
		{"connectionId": id},
		{"enabled": true},
		{"connectionId": "", "enabled": true},
	} {
		if code, _ := e.mgmt("POST", "/api/rate-limits", bad); code != 400 {
			t.Errorf("POST /api/rate-limits %v: %d, want 400", bad, code)
		}
	}
	if code, _ := e.mgmt("POST", "/api/rate-limits", map[string]any{"connectionId": "nope", "enabled": true}); code != 404 {
		t.Errorf("unknown connection: %d, want 404", code)
	}

	code, m = e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"maxConcurrent": 3,
		"rateLimitOverrides": map[string]any{"maxConcurrent": 2, "modelConcurrency": map[string]any{"glm-5": 1, "glm-4.7": 3}}})
	if code != 200 {
		t.Fatalf("PATCH caps: %d %v", code, m)
	}
	ov := m["connection"].(map[string]any)["rateLimitOverrides"].(map[string]any)
	if ov["baseCooldownMs"] != float64(5000) {
		t.Errorf("PATCH dropped an existing override: %v", ov)
	}
	if l := entry(); l["maxConcurrent"] != float64(2) || l["modelConcurrency"].(map[string]any)["glm-4.7"] != float64(3) {
		t.Errorf("caps = %v, want the most restrictive maxConcurrent 2 and the model caps", l)
	}
	// The shorthand replaces the model caps; null lifts them.
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"modelConcurrency": map[string]any{"m": 1}}); code != 200 {
		t.Fatalf("PATCH modelConcurrency: %d %v", code, m)
	}
	if mc := entry()["modelConcurrency"].(map[string]any); len(mc) != 1 || mc["m"] != float64(1) {
		t.Errorf("modelConcurrency = %v, want {m:1}", mc)
	}
	for _, bad := range []map[string]any{
		{"modelConcurrency": map[string]any{"m": 0}},
		{"modelConcurrency": map[string]any{"m": 1.5}},
		{"modelConcurrency": map[string]any{"": 1}},
		{"modelConcurrency": []any{1}},
		{"rateLimitOverrides": map[string]any{"maxConcurrent": -1}},
		{"rateLimitOverrides": map[string]any{"maxWaitMs": "soon"}},
		{"rateLimitOverrides": map[string]any{"requestsPerMinute": -5}},
		{"maxConcurrent": 10001},
	} {
		if code, m := e.mgmt("PATCH", "/api/providers/"+id, bad); code != 400 {
			t.Errorf("PATCH %v: %d %v, want 400", bad, code, m)
		}
	}
	for _, lift := range []map[string]any{
		{"modelConcurrency": nil},
		{"rateLimitOverrides": map[string]any{"modelConcurrency": nil}},
	} {
		if code, _ := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"modelConcurrency": map[string]any{"m": 1}}); code != 200 {
			t.Fatal("PATCH modelConcurrency")
		}
		if code, m := e.mgmt("PUT", "/api/providers/"+id, lift); code != 200 {
			t.Fatalf("%v: %d %v", lift, code, m)
		}
		if mc := entry()["modelConcurrency"].(map[string]any); len(mc) != 0 {
			t.Errorf("modelConcurrency after %v = %v, want none", lift, mc)
		}
	}
}

// A 429 whose body says "retry after 8s" (longer than failover.retryMaxHintMs,
// so the first request is not retried in place) pauses the protected
// connection's queue: a caller already waiting whose 1.5 s budget ends before the pause
// is refused at once with RATE_LIMIT_QUEUE_TIMEOUT, not after its budget, and
// never reaches the upstream.
func TestQueuePauseRefusesEarly(t *testing.T) {
	e := newEnvClock(t, true)
	id := e.addConn("paced", "key-a", 1)
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"maxConcurrent": 1,
		"rateLimitOverrides": map[string]any{"maxWaitMs": 1500}}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, LatencyMs: 600, Times: 1,
		Body: `{"error":{"message":"Rate limit reached. Please retry after 8s.","type":"rate_limit_error"}}`})
	type result struct {
		status  int
		code    string
		retry   string
		elapsed time.Duration
	}
	send := func() result {
		start := time.Now()
		resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
		return result{resp.StatusCode, errorCode(body), resp.Header.Get("Retry-After"), time.Since(start)}
	}
	first := make(chan result, 1)
	go func() { first <- send() }()
	if err := e.up.WaitInFlight(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	second := send()
	if r := <-first; r.status != http.StatusTooManyRequests {
		t.Fatalf("first request: %+v, want the upstream's 429", r)
	}
	if second.status != http.StatusServiceUnavailable || second.code != "RATE_LIMIT_QUEUE_TIMEOUT" || second.retry == "" {
		t.Fatalf("second request: %+v, want 503 RATE_LIMIT_QUEUE_TIMEOUT with Retry-After", second)
	}
	if second.elapsed >= 1400*time.Millisecond {
		t.Errorf("second request refused after %v, want at once when the pause began (~600 ms), before its 1.5 s budget", second.elapsed)
	}
	if n, _ := strconv.Atoi(second.retry); n < 6 {
		t.Errorf("Retry-After %q, want the pause's remaining ~8 s", second.retry)
	}
	if hits := e.up.Hits("key-a"); hits != 1 {
		t.Errorf("upstream hits = %d, want 1", hits)
	}
}

// requestsPerMinute paces dispatches: four concurrent requests at 600/min
// leave at least 100 ms apart.
func TestQueuePacing(t *testing.T) {
	e := newEnvClock(t, true)
	id := e.addConn("paced", "key-a", 1)
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"rateLimitOverrides": map[string]any{"requestsPerMinute": 600}}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	start := time.Now()
	for i, s := range concurrentChats(e, "openai-compatible/gpt-4o-mini", 4) {
		if s != http.StatusOK {
			t.Errorf("request %d: %d", i, s)
		}
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("4 requests at 600/min took %v, want ≥ 300 ms (three 100 ms turns)", d)
	}
}

// A typed RetryInfo is measured against the connection's own maxWaitMs: 10 s
// is a pause under the 30 s default, but a model lockout on a connection whose
// rateLimitOverrides.maxWaitMs is 5 s (1 ms past it too; at it, a pause).
func TestRetryInfoAgainstConnectionMaxWait(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxWaitMs int64
		delay     string
		locked    bool
	}{
		{"default budget: a pause", 0, "10s", false},
		{"1ms past the connection's budget: a lockout", 5000, "5.001s", true},
		{"at the connection's budget: a pause", 5000, "5s", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.addOpenAIConn("gm", "key-a", []string{"gemini-2.5-pro"})
			if tc.maxWaitMs > 0 {
				if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"rateLimitOverrides": map[string]any{"maxWaitMs": tc.maxWaitMs}}); code != 200 {
					t.Fatalf("patch: %d %v", code, m)
				}
			}
			e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
				Body: `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + tc.delay + `"}]}}`})
			e.chat("openai/gemini-2.5-pro", false, nil)
			locks := e.lockouts()
			if got := len(locks) == 1 && locks[0]["scope"] == "exact"; got != tc.locked {
				t.Fatalf("lockouts = %v, want locked %v", locks, tc.locked)
			}
			_, m := e.mgmt("GET", "/api/rate-limits", nil)
			paused := m["connections"].([]any)[0].(map[string]any)["pausedUntil"] != nil
			if paused == tc.locked {
				t.Fatalf("queue paused = %v, want %v (a lockout never pauses the queue)", paused, !tc.locked)
			}
		})
	}
}

// An unprotected connection (the API-key safety net off, no explicit
// rateLimitProtection) is still held to its caps by the gate, with the gate's
// own codes: SEMAPHORE_QUEUE_FULL past maxQueueDepth waiters,
// SEMAPHORE_TIMEOUT past maxWaitMs; neither reaches the upstream.
func TestGateCodesOnUnprotectedConnection(t *testing.T) {
	e := newEnvClock(t, true)
	id := e.addConn("unprotected", "key-a", 1)
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"maxConcurrent": 1, "rateLimitOverrides": map[string]any{"maxWaitMs": 400}}); code != 200 {
		t.Fatalf("patch connection: %d %v", code, m)
	}
	if code, m := e.mgmt("PATCH", "/api/resilience", map[string]any{"requestQueue": map[string]any{"maxQueueDepth": 1, "autoEnableApiKeyProviders": false}}); code != 200 {
		t.Fatalf("patch resilience: %d %v", code, m)
	}
	if _, m := e.mgmt("GET", "/api/rate-limits", nil); m["connections"].([]any)[0].(map[string]any)["effective"] != false {
		t.Fatalf("the connection is still protected: %v", m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 1000})
	gw := e.srv.API().Gateway
	type res struct {
		status int
		code   string
	}
	results := make(chan res, 3)
	send := func() {
		resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
		results <- res{resp.StatusCode, errorCode(body)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go send()
	if err := e.up.WaitInFlight(ctx, 1); err != nil {
		t.Fatal(err)
	}
	go send()
	for ctx.Err() == nil && gw.Admission(mustConn(t, e, id)).Waiting != 1 {
		time.Sleep(5 * time.Millisecond)
	}
	send()
	got := map[string]int{}
	for i := 0; i < 3; i++ {
		r := <-results
		got[fmt.Sprint(r.status, " ", r.code)]++
	}
	want := map[string]int{"200 ": 1, "503 SEMAPHORE_QUEUE_FULL": 1, "503 SEMAPHORE_TIMEOUT": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("answers = %v, want %v", got, want)
	}
	if hits := e.up.Hits("key-a"); hits != 1 {
		t.Errorf("upstream hits = %d, want only the served request", hits)
	}
	// The log row of the timed-out request shows the wait and the code.
	var row map[string]any
	for deadline := time.Now().Add(5 * time.Second); row == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, m := e.mgmt("GET", "/api/logs", nil)
		for _, l := range m["logs"].([]any) {
			if l := l.(map[string]any); l["errorCode"] == "SEMAPHORE_TIMEOUT" {
				row = l
			}
		}
	}
	if row == nil || row["queueReason"] != "SEMAPHORE_TIMEOUT" || row["queueMs"].(float64) < 400 || row["attemptCount"] != float64(0) {
		t.Errorf("log row of the timed-out request = %v, want queueMs ≥ 400, queueReason SEMAPHORE_TIMEOUT, no attempt", row)
	}
}

func mustConn(t *testing.T, e *env, id string) *routing.Conn {
	t.Helper()
	c, ok := e.srv.API().Engine.Registry().Get(id)
	if !ok {
		t.Fatalf("connection %s not in the registry", id)
	}
	return c
}

// TestGateWaiterBehindAPausedRequestRefusedAtOnce (docs/CONCURRENCY.md, issue
// 33 item 7): the request holding a connection's only slot meets a 429 whose
// body says "retry after 2s" and waits in place to retry, holding the slot;
// the queue pauses for 2 s on the gateway's injected clock. A caller already
// waiting for the slot with a 1 s budget is refused at once with
// RATE_LIMIT_QUEUE_TIMEOUT instead of waiting its budget out, and never
// reaches the upstream; the paused request is answered by its retry once the
// clock has moved past the pause.
func TestGateWaiterBehindAPausedRequestRefusedAtOnce(t *testing.T) {
	e := newEnv(t)
	id := e.addConn("paced", "key-a", 1)
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"maxConcurrent": 1,
		"rateLimitOverrides": map[string]any{"maxWaitMs": 1000}}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, LatencyMs: 300, Times: 1,
		Body: `{"error":{"message":"Rate limit reached. Please retry after 2s.","type":"rate_limit_error"}}`})
	type result struct {
		status  int
		code    string
		retry   string
		elapsed time.Duration
	}
	send := func() result {
		start := time.Now()
		resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
		return result{resp.StatusCode, errorCode(body), resp.Header.Get("Retry-After"), time.Since(start)}
	}
	first := make(chan result, 1)
	go func() { first <- send() }()
	if err := e.up.WaitInFlight(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	r := send() // waits for the slot; the pause begins ~300 ms later
	if r.status != http.StatusServiceUnavailable || r.code != "RATE_LIMIT_QUEUE_TIMEOUT" || r.retry != "2" {
		t.Errorf("the caller waiting for the slot: %+v, want 503 RATE_LIMIT_QUEUE_TIMEOUT with Retry-After 2", r)
	}
	if r.elapsed >= 900*time.Millisecond {
		t.Errorf("the caller waiting for the slot was refused after %v, want at once when the pause began (~300 ms), before its 1 s budget", r.elapsed)
	}
	e.clk.Advance(2100 * time.Millisecond) // past the pause and the model cooldown, before the retry (~2 s after the 429)
	if r := <-first; r.status != http.StatusOK {
		t.Fatalf("the paused request: %+v, want its in-place retry's 200", r)
	}
	if hits := e.up.Hits("key-a"); hits != 2 {
		t.Errorf("upstream hits = %d, want 2 (the paused request and its retry)", hits)
	}
}

// TestArrivalDuringAShortPauseIsPaced (guide §5, issue 33 item 5): a 429
// whose body says "retry after 2s" pauses the protected connection's queue
// (its 30 s budget covers the pause); a caller arriving during the pause is
// paced like the callers already queued — dispatched when the pause ends —
// instead of being refused with a 429 by a model cooldown.
func TestArrivalDuringAShortPauseIsPaced(t *testing.T) {
	e := newEnv(t)
	e.addConn("paced", "key-a", 1)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
		Body: `{"error":{"message":"Rate limit reached. Please retry after 2s.","type":"rate_limit_error"}}`})
	first := make(chan int, 1)
	go func() {
		resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil)
		first <- resp.StatusCode
	}()
	paused := func() bool {
		_, m := e.mgmt("GET", "/api/rate-limits", nil)
		return m["connections"].([]any)[0].(map[string]any)["pausedUntil"] != nil
	}
	for deadline := time.Now().Add(5 * time.Second); !paused(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the 429's body hint never paused the queue")
		}
	}
	start := time.Now()
	resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a caller arriving during the pause: %d %s, want it paced to the pause's end and answered", resp.StatusCode, body)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("answered after %v, want held until the pause ended (~2 s after the 429)", d)
	}
	if s := <-first; s != http.StatusOK {
		t.Fatalf("the paused request: %d, want its in-place retry's 200", s)
	}
	_, m := e.mgmt("GET", "/api/resilience/model-cooldowns", nil)
	if items, _ := m["items"].([]any); len(items) != 0 {
		t.Fatalf("model cooldowns %v: the queue's pause paces the callers, no model cooldown refuses them", items)
	}
}
