package server_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"omniroute/backend/store"
	"omniroute/tests/fakeupstream"
)

// seedLogs writes n request logs spread over the last week in one SQL
// statement (12 connections, 20 models, 3 keys, every 10th an error, latencies
// 10 ms…10 s), then rebuilds the rollup from them.
func seedLogs(t testing.TB, st *store.Store, now time.Time, n int) {
	t.Helper()
	week := int64((7*24 - 2) * time.Hour / time.Millisecond) // inside the week window, whatever the bucket alignment
	err := st.DB().Exec(`WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?)
		INSERT INTO request_logs (request_id, created_at, api_key_id, model, provider, connection_id, status, latency_ms,
			prompt_tokens, completion_tokens, cached_tokens, attempts)
		SELECT 'r' || i, ? - i * ? / ? - 1, 'key' || (i % 3), 'model-' || (i % 20), 'openai', 'conn' || (i % 12),
			CASE WHEN i % 10 = 0 THEN 503 ELSE 200 END, 10 + (i * 37) % 10000, 100, 20, (i % 2) * 50, '[]' FROM seq`,
		n, now.UnixMilli(), week, n).Error
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RebuildUsageRollup(); err != nil {
		t.Fatal(err)
	}
}

// TestUsageChartsAreBoundedOver100kRows: over 100,000 log rows every chart
// endpoint returns at most buckets × (8 top series + other) points per measure,
// the totals add up, and the time per query is printed (not asserted).
func TestUsageChartsAreBoundedOver100kRows(t *testing.T) {
	e := newEnv(t)
	const n = 100_000
	seedLogs(t, e.srv.Store(), e.clk.Now(), n)
	for _, tc := range []struct {
		rng     string
		buckets int
		inRange int
	}{{"hour", 60, 0}, {"day", 96, 0}, {"week", 84, n}} {
		for _, by := range []string{"connection", "model", "key", "provider"} {
			start := time.Now()
			code, rep := e.mgmt("GET", "/api/usage?range="+tc.rng+"&by="+by, nil)
			took := time.Since(start)
			if code != 200 {
				t.Fatalf("%s/%s: %d %v", tc.rng, by, code, rep)
			}
			t.Logf("usage range=%s by=%s over %d rows: %v, %v points", tc.rng, by, n, took, rep["points"])
			series := rep["series"].([]any)
			if len(series) > 9 {
				t.Fatalf("%s/%s: %d series, want at most 8 + other", tc.rng, by, len(series))
			}
			points := 0
			var total float64
			for _, s := range series {
				m := s.(map[string]any)
				for _, k := range []string{"requests", "errors", "tokensIn", "tokensOut", "tokensCached", "costUsd", "savedUsd", "unpriced"} {
					if l := len(m[k].([]any)); l != tc.buckets {
						t.Fatalf("%s/%s %s: %d buckets, want %d", tc.rng, by, k, l, tc.buckets)
					}
					points += tc.buckets
				}
				total += m["total"].(map[string]any)["requests"].(float64)
			}
			if points > 9*8*tc.buckets || int(rep["points"].(float64)) > 9*8*tc.buckets+3*tc.buckets {
				t.Fatalf("%s/%s: %d points", tc.rng, by, points)
			}
			if tc.inRange > 0 && int(total) != tc.inRange {
				t.Fatalf("%s/%s: %v requests in the week, want %d", tc.rng, by, total, tc.inRange)
			}
			if tc.rng == "week" && by == "model" {
				tot := rep["totals"].(map[string]any)
				if tot["errors"].(float64) != n/10 || tot["tokensCached"].(float64) != n/2*50 {
					t.Fatalf("totals %v", tot)
				}
				lat := rep["latency"].(map[string]any)["overall"].(map[string]any)
				if lat["p50"].(float64) < 3000 || lat["p50"].(float64) > 7500 || lat["p99"].(float64) < 10000 {
					t.Fatalf("latency %v", lat)
				}
			}
		}
	}
	resp, body := e.do("GET", "/api/usage.csv?range=week&by=key", nil, map[string]string{"Authorization": "Bearer " + e.token})
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(recs) < 2 || strings.Join(recs[0], ",") != "bucket_start,key,label,requests,errors,tokens_in,tokens_out,tokens_cached,cost_usd,saved_usd" {
		t.Fatalf("csv %v %q", err, body[:min(len(body), 200)])
	}
	if code, m := e.mgmt("GET", "/api/usage?range=year", nil); code != 400 || !strings.Contains(fmt.Sprint(m), "INVALID_QUERY") {
		t.Fatalf("bad range %d %v", code, m)
	}
	if code, _ := e.mgmt("GET", "/api/usage?by=colour", nil); code != 400 {
		t.Fatalf("bad dimension %d", code)
	}
}

// TestUsageTimelineShowsBreakerAndCooldown: a connection cooldown (a 429 the
// upstream says is account-wide), a model lock (a 429 that blames the model)
// and an OPEN breaker (503s without a streak cooldown) appear as segments of
// their provider's row.
func TestUsageTimelineShowsBreakerAndCooldown(t *testing.T) {
	e := newEnv(t)
	e.addConn("primary", "key-a", 1)
	e.addEndpoint("lab", "key-b")
	e.patchResilience(map[string]any{"failover": map[string]any{"failureStreak": 100, "retriesPerTarget": 0}})
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
		Headers: map[string]string{"Retry-After": "30", "X-RateLimit-Scope": "account"}})
	e.chat("openai-compatible/gpt-4o-mini", false, nil)
	e.clk.Advance(31 * time.Second)
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Headers: map[string]string{"Retry-After": "30"}})
	e.chat("openai-compatible/gpt-4o-mini", false, nil)
	e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})
	for i := 0; i < 12; i++ {
		e.chat("lab/gpt-4o-mini", false, nil)
	}
	e.clk.Advance(10 * time.Second)
	code, m := e.mgmt("GET", "/api/usage/timeline?range=hour", nil)
	if code != 200 {
		t.Fatalf("timeline %d %v", code, m)
	}
	b, _ := json.Marshal(m["providers"])
	got := string(b)
	for _, want := range []string{`"provider":"openai-compatible:lab"`, `"kind":"breaker","state":"OPEN"`, `"kind":"cooldown","state":"cooling_down"`,
		`"kind":"model_lock","state":"locked"`, `"name":"lab"`, `"name":"primary"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("timeline lacks %s: %s", want, got)
		}
	}
}
