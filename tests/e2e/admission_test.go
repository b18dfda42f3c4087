package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// answer is one client request's outcome, safe to collect from goroutines.
type answer struct {
	status  int
	code    string
	retry   string
	elapsed time.Duration
	err     error
}

// post sends a chat completion without touching t (usable from goroutines).
func (g *gatewayProc) post(ctx context.Context, model string) answer {
	b, _ := json.Marshal(chatBody(model, false))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.base+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.key)
	start := time.Now()
	resp, err := g.client.Do(req)
	if err != nil {
		return answer{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, retry: resp.Header.Get("Retry-After"), elapsed: time.Since(start)}
	var env envelope
	if json.Unmarshal(out, &env) == nil && env.Error != nil {
		a.code = env.Error.Code
	}
	return a
}

// liveLimits reads one connection's GET /api/rate-limits entry.
func liveLimits(t *testing.T, g *gatewayProc, id string) map[string]any {
	t.Helper()
	m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/rate-limits", nil)
	list, _ := m["connections"].([]any)
	for _, c := range list {
		if c, _ := c.(map[string]any); c["connectionId"] == id {
			return c
		}
	}
	t.Fatalf("connection %s not in GET /api/rate-limits: %v", id, m)
	return nil
}

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestQueueCapAndDepth: a connection with maxConcurrent 1 and maxQueueDepth 1
// gets three concurrent requests against a slow upstream: one is served, one
// waits in the queue and is then served, the third is refused at once with
// RATE_LIMIT_QUEUE_FULL and never reaches the upstream.
func TestQueueCapAndDepth(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	id := g.addConn("glm-like", upURL, "key-a", 1)
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/resilience", map[string]any{"requestQueue": map[string]any{"maxQueueDepth": 1}})
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+id, map[string]any{"maxConcurrent": 1})
	if l := liveLimits(t, g, id); l["effective"] != true || l["maxConcurrent"] != float64(1) {
		t.Fatalf("rate-limits entry = %v, want effective protection (API-key safety net) and maxConcurrent 1", l)
	}
	up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 1500})

	ctx := context.Background()
	var wg sync.WaitGroup
	var first, second answer
	wg.Add(2)
	go func() { defer wg.Done(); first = g.post(ctx, "openai-compatible/gpt-4o-mini") }()
	waitFor(t, "the first request upstream", func() bool { return up.InFlight() == 1 })
	go func() { defer wg.Done(); second = g.post(ctx, "openai-compatible/gpt-4o-mini") }()
	waitFor(t, "the second request queued", func() bool { return liveLimits(t, g, id)["queued"] == float64(1) })

	third := g.post(ctx, "openai-compatible/gpt-4o-mini")
	t.Logf("RATE_LIMIT_QUEUE_FULL answered in %v", third.elapsed)
	if third.err != nil || third.status != http.StatusServiceUnavailable || third.code != "RATE_LIMIT_QUEUE_FULL" || third.retry == "" {
		t.Fatalf("third request = %+v, want 503 RATE_LIMIT_QUEUE_FULL with Retry-After", third)
	}
	if third.elapsed > time.Second { // the figure is logged; the bound is generous on a loaded machine
		t.Errorf("the refusal took %v, want an immediate answer", third.elapsed)
	}
	if hits := up.Hits("key-a"); hits != 1 {
		t.Errorf("upstream hits while the third was refused = %d, want 1 (the refused request never reaches it)", hits)
	}
	wg.Wait()
	for i, a := range []answer{first, second} {
		if a.err != nil || a.status != http.StatusOK {
			t.Errorf("request %d = %+v, want 200", i+1, a)
		}
	}
	if hits, peak := up.Hits("key-a"), up.PeakInFlight("gpt-4o-mini"); hits != 2 || peak != 1 {
		t.Errorf("upstream hits = %d, peak in flight = %d; want 2 and 1", hits, peak)
	}
	if second.elapsed < 2*time.Second {
		t.Errorf("the queued request took %v, want it to wait for the first (1.5 s each)", second.elapsed)
	}
	l := liveLimits(t, g, id)
	if l["inFlight"] != float64(0) || l["queued"] != float64(0) || l["waiting"] != float64(0) {
		t.Errorf("live counters after the burst = %v, want zeros", l)
	}
	// A saturated gate or full queue blames nobody: no cooldown, lockout or breaker failure.
	conn := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/providers/"+id, nil)["connection"].(map[string]any)
	if conn["testStatus"] != "active" || conn["rateLimitedUntil"] != nil {
		t.Errorf("connection after the refusal = %v / %v, want active with no cooldown", conn["testStatus"], conn["rateLimitedUntil"])
	}
	if items := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience/model-cooldowns", nil)["items"].([]any); len(items) != 0 {
		t.Errorf("model lockouts after the refusal = %v, want none", items)
	}
	health := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/monitoring/health", nil)
	if ph, _ := health["providerHealth"].(map[string]any); ph != nil {
		for p, v := range ph {
			if v := v.(map[string]any); v["state"] != "CLOSED" || v["failures"] != float64(0) {
				t.Errorf("breaker %s after the refusal = %v, want CLOSED with no failure", p, v)
			}
		}
	}

	// The Logs rows: queue time apart from upstream time, and why.
	var rows []any
	waitFor(t, "three request log rows", func() bool {
		m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs?limit=10", nil)
		rows, _ = m["logs"].([]any)
		return len(rows) >= 3
	})
	var queuedRow, refusedRow map[string]any
	for _, r := range rows {
		r := r.(map[string]any)
		switch {
		case r["errorCode"] == "RATE_LIMIT_QUEUE_FULL":
			refusedRow = r
		case r["queueMs"].(float64) >= 1000:
			queuedRow = r
		}
	}
	if refusedRow == nil || refusedRow["queueReason"] != "RATE_LIMIT_QUEUE_FULL" || refusedRow["attemptCount"] != float64(0) {
		t.Errorf("refused row = %v, want queueReason RATE_LIMIT_QUEUE_FULL and no attempt", refusedRow)
	}
	if queuedRow == nil || queuedRow["queueReason"] != "connection maxConcurrent" || queuedRow["upstreamMs"].(float64) < 1000 {
		t.Errorf("queued row = %v, want ≥1 s queued for the connection's maxConcurrent and ≥1 s upstream", queuedRow)
	}
}

// TestModelConcurrency: modelConcurrency {"m":1} keeps the upstream from ever
// seeing two concurrent requests for m, while another model on the same
// connection still runs in parallel.
func TestModelConcurrency(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	m := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
		"verify": false, "provider": "openai-compatible", "name": "shared", "apiKey": "key-a", "baseUrl": upURL + "/v1",
		"models": []string{"m", "other"}, "rateLimitOverrides": map[string]any{"modelConcurrency": map[string]any{"m": 1}},
	})
	id := m["connection"].(map[string]any)["id"].(string)
	if l := liveLimits(t, g, id); l["modelConcurrency"].(map[string]any)["m"] != float64(1) {
		t.Fatalf("modelConcurrency not applied: %v", l)
	}
	// A bad cap is a clear 400, never stored.
	code, body := g.mgmt(http.MethodPatch, "/api/providers/"+id, map[string]any{"rateLimitOverrides": map[string]any{"modelConcurrency": map[string]any{"m": 0}}})
	if code != http.StatusBadRequest {
		t.Errorf("modelConcurrency m=0: status %d, want 400: %v", code, body)
	}
	up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 400})

	var wg sync.WaitGroup
	results := make([]answer, 8)
	for i := range results {
		model := "openai-compatible/m"
		if i%2 == 1 {
			model = "openai-compatible/other"
		}
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = g.post(context.Background(), model) }()
	}
	wg.Wait()
	for i, a := range results {
		if a.err != nil || a.status != http.StatusOK {
			t.Errorf("request %d = %+v, want 200", i, a)
		}
	}
	if peak := up.PeakInFlight("m"); peak != 1 {
		t.Errorf("upstream saw %d concurrent requests for m, want 1", peak)
	}
	if peak := up.PeakInFlight("other"); peak < 2 {
		t.Errorf("upstream saw at most %d concurrent requests for other, want them in parallel (≥ 2)", peak)
	}
}

// TestExecutionTimeout: an execution bound at or under the first-byte timeout
// ends a request whose upstream never answers with 504
// RATE_LIMIT_EXECUTION_TIMEOUT; the upstream request is cancelled and no other
// connection is tried.
func TestExecutionTimeout(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	id := g.addConn("slow", upURL, "key-a", 1)
	g.addConn("spare", upURL, "key-b", 2)
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"firstByteTimeoutMs": 1000})
	g.mustMgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+id, map[string]any{"rateLimitOverrides": map[string]any{"executionMaxWaitMs": 500}})
	up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 10_000})

	a := g.post(context.Background(), "openai-compatible/gpt-4o-mini")
	if a.err != nil || a.status != http.StatusGatewayTimeout || a.code != "RATE_LIMIT_EXECUTION_TIMEOUT" {
		t.Fatalf("answer = %+v, want 504 RATE_LIMIT_EXECUTION_TIMEOUT", a)
	}
	if a.elapsed < 900*time.Millisecond || a.elapsed > 5*time.Second {
		t.Errorf("answered after %v, want the bound raised to the 1 s first-byte timeout", a.elapsed)
	}
	waitFor(t, "the upstream request cancelled", func() bool { return up.Canceled() == 1 && up.InFlight() == 0 })
	if hits := up.Hits("key-b"); hits != 0 {
		t.Errorf("the spare connection was tried %d time(s), want 0 (an execution timeout does not fail over)", hits)
	}
}
