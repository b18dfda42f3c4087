package server_test

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestKeyBudgetRefusesAfterTheCrossingRequest: a key with a $0.01 day budget
// is served until the request that crosses it, then refused with
// KEY_BUDGET_EXCEEDED (429, rate_limit_error, Retry-After to UTC midnight),
// also after a restart (its spend is read back from the request log), and
// served again once the fake clock passes midnight. Each row carries its
// cost, usage sums it, /metrics counts it.
func TestKeyBudgetRefusesAfterTheCrossingRequest(t *testing.T) {
	e := newEnv(t)
	conn := e.addConn("metered", "key-a", 1)
	// 100 $/MTok both ways: a request of T tokens costs T × 0.0001 $.
	if code, m := e.mgmt("PATCH", "/api/providers/"+conn, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": 100, "outputPerMTok": 100}}}); code != 200 {
		t.Fatalf("pricing: %d %v", code, m)
	}
	if code, m := e.mgmt("GET", "/api/providers/"+conn, nil); code != 200 || m["connection"].(map[string]any)["flatRate"] != false ||
		m["connection"].(map[string]any)["pricing"].(map[string]any)["gpt-4o-mini"] == nil {
		t.Fatalf("the connection shows its prices: %d %v", code, m)
	}
	if code, m := e.mgmt("PATCH", "/api/providers/"+conn, map[string]any{"pricing": map[string]any{"x": map[string]any{"inputPerMTok": -1}}}); code != 400 {
		t.Fatalf("a negative price: %d %v", code, m)
	}
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "capped", "budget": map[string]any{"usd": 0.01, "period": "day"}})
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %v", code, m)
	}
	keyID, keyValue := m["id"].(string), m["key"].(string)
	if s := m["spend"].(map[string]any); s["usd"].(float64) != 0 || s["periodStart"].(float64) != float64(e.clk.Now().UnixMilli()) {
		t.Fatalf("spend of a new key %v", s)
	}
	if code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "bad", "budget": map[string]any{"usd": 1, "period": "week"}}); code != 400 {
		t.Fatalf("a bad period: %d %v", code, m)
	}
	as := map[string]string{"Authorization": "Bearer " + keyValue}
	spend := func() float64 {
		_, m := e.mgmt("GET", "/api/keys", nil)
		for _, k := range m["keys"].([]any) {
			if k := k.(map[string]any); k["id"] == keyID {
				return k["spend"].(map[string]any)["usd"].(float64)
			}
		}
		t.Fatal("key not listed")
		return 0
	}
	served := 0
	var last []byte
	for ; served < 100; served++ {
		before := spend()
		var resp *http.Response
		var body []byte
		if served%2 == 1 { // streams are charged from their final usage too
			resp, body = e.do("POST", "/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "stream": true,
				"stream_options": map[string]any{"include_usage": true}, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, as)
		} else {
			resp, body = e.chat("gpt-4o-mini", false, as)
		}
		if resp.StatusCode != 200 {
			if before < 0.01 {
				t.Fatalf("refused at $%v, under the budget: %d %s", before, resp.StatusCode, body)
			}
			last = body
			if resp.StatusCode != 429 || errorCode(body) != "KEY_BUDGET_EXCEEDED" || !strings.Contains(string(body), "rate_limit_error") {
				t.Fatalf("over the budget: %d %s", resp.StatusCode, body)
			}
			if ra := resp.Header.Get("Retry-After"); ra != "86400" { // the fake clock stands at midnight
				t.Fatalf("Retry-After %q, want the seconds to the next UTC midnight", ra)
			}
			break
		}
		if before >= 0.01 {
			t.Fatalf("served at $%v, at or over the budget", before)
		}
	}
	if last == nil || served < 2 {
		t.Fatalf("never refused, or refused too early (%d served)", served)
	}
	spent := spend()
	if spent < 0.01 || spent > 0.02 {
		t.Fatalf("spent %v after %d requests", spent, served)
	}

	e.restart() // flushes the request log; the ledger is read back from it
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 429 || errorCode(body) != "KEY_BUDGET_EXCEEDED" {
		t.Fatalf("after a restart: %d %s", resp.StatusCode, body)
	}
	if got := spend(); math.Abs(got-spent) > 1e-9 {
		t.Fatalf("spend after a restart %v, want %v", got, spent)
	}
	_, logs := e.mgmt("GET", "/api/logs?limit=1000&keyId="+keyID, nil)
	var sum float64
	for _, l := range logs["logs"].([]any) {
		l := l.(map[string]any)
		if l["status"].(float64) == 200 {
			c, ok := l["costUsd"].(float64)
			if !ok {
				t.Fatalf("a served row without cost: %v", l)
			}
			sum += c
		} else if l["costUsd"] != nil {
			t.Fatalf("a refused row has a cost: %v", l)
		}
	}
	if math.Abs(sum-spent) > 1e-9 {
		t.Fatalf("rows sum to %v, the key spent %v", sum, spent)
	}
	if resp, body := e.do("GET", "/api/logs/export?format=csv&keyId="+keyID, nil, map[string]string{"Authorization": "Bearer " + e.token}); resp.StatusCode != 200 ||
		!strings.Contains(strings.SplitN(string(body), "\n", 2)[0], ",costUsd,savedUsd") {
		t.Fatalf("logs export: %d %.300s", resp.StatusCode, body)
	}
	if _, u := e.mgmt("GET", "/api/usage?range=hour&by=key", nil); math.Abs(u["totals"].(map[string]any)["costUsd"].(float64)-spent) > 1e-9 {
		t.Fatalf("usage totals %v, want cost %v", u["totals"], spent)
	}
	_, pr := e.mgmt("GET", "/api/pricing", nil)
	if ov := pr["overrides"].(map[string]any)[conn]; ov == nil || len(pr["catalogue"].([]any)) < 20 {
		t.Fatalf("pricing %v", pr)
	}

	e.clk.Set(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 200 {
		t.Fatalf("the next day: %d %s", resp.StatusCode, body)
	}
	_, metrics := e.do("GET", "/metrics", nil, map[string]string{"Authorization": "Bearer " + e.token})
	if !strings.Contains(string(metrics), `omniroute_spend_usd_total{key="`+keyID+`",model="gpt-4o-mini",provider="openai-compatible`) {
		t.Fatalf("no spend series in /metrics:\n%s", metrics)
	}
	// Removing the budget lifts the cap.
	if code, m := e.mgmt("PATCH", "/api/keys/"+keyID, map[string]any{"budget": nil, "limits": map[string]any{"rpm": 1}}); code != 200 || m["budget"] != nil {
		t.Fatalf("remove budget: %d %v", code, m)
	}
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 200 {
		t.Fatalf("rpm 1, the first request: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 429 || errorCode(body) != "KEY_RATE_LIMITED" || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("rpm 1, the second request this minute: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	e.clk.Advance(time.Minute)
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 200 {
		t.Fatalf("rpm 1, a minute later: %d %s", resp.StatusCode, body)
	}
}

// TestKeyBudgetHoldsAcrossInstances: on PostgreSQL two instances charge a
// key's spend in the database, so alternating requests between them stop at
// the key's budget as one instance would (each alone would serve until its
// own count crossed it, twice the budget together).
func TestKeyBudgetHoldsAcrossInstances(t *testing.T) {
	a, b := newTeam(t)
	conn := a.addConn("metered", "key-a", 1)
	if code, m := a.mgmt("PATCH", "/api/providers/"+conn, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": 100, "outputPerMTok": 100}}}); code != 200 {
		t.Fatalf("pricing: %d %v", code, m)
	}
	code, m := a.mgmt("POST", "/api/keys", map[string]any{"name": "capped", "budget": map[string]any{"usd": 0.01, "period": "month"}})
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %v", code, m)
	}
	keyID, as := m["id"].(string), map[string]string{"Authorization": "Bearer " + m["key"].(string)}
	eventually(t, "the key and the connection's prices known to B", func() bool {
		_, m := b.mgmt("GET", "/api/pricing", nil)
		ov, _ := m["overrides"].(map[string]any)
		return ov[conn] != nil
	})
	eventually(t, "the key known to B", func() bool {
		resp, _ := b.chat("gpt-4o-mini", false, as)
		return resp.StatusCode == 200
	})
	const perRequest = 15 * 100 / 1e6 // the fake's 10 + 5 tokens at 100 $/MTok
	served := 1                       // B's request above
	for i := 0; i < 40; i++ {
		e := a
		if i%2 == 1 {
			e = b
		}
		resp, body := e.chat("gpt-4o-mini", false, as)
		if resp.StatusCode == 429 && errorCode(body) == "KEY_BUDGET_EXCEEDED" {
			break
		}
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
		served++
	}
	spent := float64(served) * perRequest
	if spent < 0.01 || spent >= 0.01+perRequest {
		t.Fatalf("%d requests served ($%.4f) for a $0.01 budget: want the one crossing it and no more", served, spent)
	}
	for _, e := range []*env{a, b} {
		if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 429 || errorCode(body) != "KEY_BUDGET_EXCEEDED" {
			t.Fatalf("after the budget: %d %s", resp.StatusCode, body)
		}
		_, m := e.mgmt("GET", "/api/keys", nil)
		for _, k := range m["keys"].([]any) {
			if k := k.(map[string]any); k["id"] == keyID {
				if got := k["spend"].(map[string]any)["usd"].(float64); math.Abs(got-spent) > 1e-9 {
					t.Fatalf("spend %v, want %v", got, spent)
				}
			}
		}
	}
}

// TestEveryClientFormatsStreamIsCharged: a streamed answer is priced from
// its final usage whatever the client's format (Chat without asking for
// usage, Completions, Messages, Responses, Gemini-native) when the upstream
// speaks OpenAI Chat: each row carries its tokens and its cost.
func TestEveryClientFormatsStreamIsCharged(t *testing.T) {
	e := newEnv(t)
	conn := e.addConn("metered", "key-a", 1)
	if code, m := e.mgmt("PATCH", "/api/providers/"+conn, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": 100, "outputPerMTok": 100}}}); code != 200 {
		t.Fatalf("pricing: %d %v", code, m)
	}
	bearer := map[string]string{"Authorization": "Bearer " + e.key}
	hi := []any{map[string]any{"role": "user", "content": "hi"}}
	calls := []struct {
		name, path string
		body       map[string]any
		hdr        map[string]string
	}{
		{"chat", "/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "stream": true, "messages": hi}, bearer},
		{"completions", "/v1/completions", map[string]any{"model": "gpt-4o-mini", "stream": true, "prompt": "hi"}, bearer},
		{"messages", "/v1/messages", map[string]any{"model": "gpt-4o-mini", "stream": true, "max_tokens": 16, "messages": hi}, bearer},
		{"responses", "/v1/responses", map[string]any{"model": "gpt-4o-mini", "stream": true, "input": "hi"}, bearer},
		{"gemini", "/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse", map[string]any{"contents": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}}, map[string]string{"x-goog-api-key": e.key}},
	}
	for _, c := range calls {
		resp, body := e.do("POST", c.path, c.body, c.hdr)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%s: %d %s %s", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	e.restart() // flushes the request log
	_, m := e.mgmt("GET", "/api/logs?limit=100", nil)
	logs := m["logs"].([]any)
	if len(logs) != len(calls) {
		t.Fatalf("%d rows, want %d", len(logs), len(calls))
	}
	for i, l := range logs {
		l := l.(map[string]any)
		name := calls[len(calls)-1-i].name // newest first
		cost, ok := l["costUsd"].(float64)
		in, out := l["promptTokens"].(float64), l["completionTokens"].(float64)
		if !ok || in == 0 || out == 0 || math.Abs(cost-(in+out)*100/1e6) > 1e-12 || l["stream"] != true {
			t.Errorf("%s: the stream was not charged from its usage: cost %v tokens %v+%v (%v)", name, l["costUsd"], in, out, l)
		}
	}
}

// TestUnservedRequestGivesItsRPMPlaceBack: a request of a key limited to 1
// request per minute that is not served (a model nothing serves) gives its
// place in the key's window back: the next request, the same minute, is
// served; a served one keeps its place.
func TestUnservedRequestGivesItsRPMPlaceBack(t *testing.T) {
	e := newEnv(t)
	e.addConn("metered", "key-a", 1)
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "paced", "limits": map[string]any{"rpm": 1}})
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %v", code, m)
	}
	as := map[string]string{"Authorization": "Bearer " + m["key"].(string)}
	if resp, body := e.chat("no-such-model", false, as); resp.StatusCode < 400 || errorCode(body) == "KEY_RATE_LIMITED" {
		t.Fatalf("a model nothing serves: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 200 {
		t.Fatalf("after an unserved request, the first served one: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 429 || errorCode(body) != "KEY_RATE_LIMITED" {
		t.Fatalf("the second served request this minute: %d %s", resp.StatusCode, body)
	}
}
