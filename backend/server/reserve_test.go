package server_test

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"sync"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestConcurrentRequestsOnTwoInstancesOverspendByOneRequestAtMost: two
// instances on PostgreSQL, 50 concurrent requests of one budgeted key each,
// all in flight together (the upstream answers after 300 ms): each admission
// holds the request's estimated cost in the database, so the key's spend
// ends under its budget plus one request's cost, and no hold is left behind
// (the spend is exactly what the served answers cost). Without the holds
// every request passed the check before any was charged: 100 served for a
// budget of 20.
func TestConcurrentRequestsOnTwoInstancesOverspendByOneRequestAtMost(t *testing.T) {
	a, b := newTeam(t)
	conn := a.addConn("metered", "key-a", 1)
	if code, m := a.mgmt("PATCH", "/api/providers/"+conn, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": 100, "outputPerMTok": 100}}}); code != 200 {
		t.Fatalf("pricing: %d %v", code, m)
	}
	const perRequest = 15 * 100 / 1e6 // the fake's 10 + 5 tokens at 100 $/MTok
	const budget = 20 * perRequest
	code, m := a.mgmt("POST", "/api/keys", map[string]any{"name": "capped", "budget": map[string]any{"usd": budget, "period": "total"}})
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %v", code, m)
	}
	keyID, as := m["id"].(string), map[string]string{"Authorization": "Bearer " + m["key"].(string)}
	eventually(t, "the connection's prices known to B", func() bool {
		_, m := b.mgmt("GET", "/api/pricing", nil)
		ov, _ := m["overrides"].(map[string]any)
		return ov[conn] != nil
	})
	eventually(t, "the key known to B", func() bool {
		resp, _ := b.chat("gpt-4o-mini", false, as)
		return resp.StatusCode == 200
	})
	a.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 300})

	body := []byte(`{"model":"gpt-4o-mini","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)
	var mu sync.Mutex
	served, refused := 1, 0 // B's request above
	var unexpected []string
	var wg sync.WaitGroup
	for _, e := range []*env{a, b} {
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", e.ts.URL+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", as["Authorization"])
				resp, err := e.ts.Client().Do(req)
				if err != nil {
					mu.Lock()
					unexpected = append(unexpected, err.Error())
					mu.Unlock()
					return
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				switch {
				case resp.StatusCode == 200:
					served++
				case resp.StatusCode == 429 && errorCode(out) == "KEY_BUDGET_EXCEEDED":
					refused++
				default:
					unexpected = append(unexpected, resp.Status+" "+string(out))
				}
			}()
		}
	}
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("%d unexpected answers, e.g. %s", len(unexpected), unexpected[0])
	}
	spent := float64(served) * perRequest
	t.Logf("served %d, refused %d: $%.4f of a $%.4f budget", served, refused, spent, budget)
	if spent > budget+perRequest+1e-9 {
		t.Fatalf("%d requests served ($%.4f) for a $%.4f budget: overspent by more than one request ($%.4f)", served, spent, budget, perRequest)
	}
	if refused == 0 || served < 2 {
		t.Fatalf("served %d, refused %d", served, refused)
	}
	for _, e := range []*env{a, b} {
		_, m := e.mgmt("GET", "/api/keys", nil)
		for _, k := range m["keys"].([]any) {
			if k := k.(map[string]any); k["id"] == keyID {
				if got := k["spend"].(map[string]any)["usd"].(float64); math.Abs(got-spent) > 1e-9 {
					t.Fatalf("spend %v, want %v: a hold was left behind or lost", got, spent)
				}
			}
		}
	}
}
