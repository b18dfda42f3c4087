package server_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// keyOf lists the key named name from GET /api/keys.
func (e *env) keyOf(name string) map[string]any {
	e.t.Helper()
	_, m := e.mgmt("GET", "/api/keys", nil)
	for _, k := range m["keys"].([]any) {
		if k := k.(map[string]any); k["name"] == name {
			return k
		}
	}
	e.t.Fatalf("key %s not listed: %v", name, m)
	return nil
}

// TestUnpricedModelRefusedUnderAUSDBudget (issue 42 item 3): a key with a USD
// budget asking for a model its connection has no price for is refused 403
// MODEL_PRICE_UNKNOWN before dispatch, naming the model, the connection, the
// key and the fix; a token-only budget, a budget that allows unpriced
// models, and a price set on the connection each let it through (an
// unpriced fallback beside a priced connection does not refuse it).
func TestUnpricedModelRefusedUnderAUSDBudget(t *testing.T) {
	e := newEnv(t)
	conn := e.addConn("Lab box", "key-lab", 1)
	newKey := func(name string, budget map[string]any) map[string]string {
		code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": name, "budget": budget})
		if code != http.StatusCreated {
			t.Fatalf("create key %s: %d %v", name, code, m)
		}
		return map[string]string{"Authorization": "Bearer " + m["key"].(string)}
	}
	capped := newKey("capped", map[string]any{"usd": 1, "period": "day"})
	tokensOnly := newKey("tokens only", map[string]any{"tokens": 100000, "period": "day"})

	resp, body := e.chat("gpt-4o-mini", false, capped)
	msg := string(body)
	if resp.StatusCode != http.StatusForbidden || errorCode(body) != "MODEL_PRICE_UNKNOWN" {
		t.Fatalf("an unpriced model under a USD budget: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{`\"gpt-4o-mini\"`, `\"Lab box\"`, `\"capped\"`, "set its price", "allowUnpriced", "$1.0000 per day"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %s: %s", want, msg)
		}
	}
	if n := e.up.Hits("key-lab"); n != 0 {
		t.Fatalf("the refused request reached the upstream %d times", n)
	}

	if resp, body := e.chat("gpt-4o-mini", false, tokensOnly); resp.StatusCode != 200 {
		t.Fatalf("a token budget sees unpriced answers: %d %s", resp.StatusCode, body)
	}

	// The key says otherwise: unpriced models allowed.
	id := e.keyOf("capped")["id"].(string)
	if code, m := e.mgmt("PATCH", "/api/keys/"+id, map[string]any{"budget": map[string]any{"usd": 1, "period": "day", "allowUnpriced": true}}); code != 200 ||
		m["budget"].(map[string]any)["allowUnpriced"] != true {
		t.Fatalf("allowUnpriced: %d %v", code, m)
	}
	if resp, body := e.chat("gpt-4o-mini", false, capped); resp.StatusCode != 200 {
		t.Fatalf("a key allowing unpriced models: %d %s", resp.StatusCode, body)
	}

	// Back to a strict budget, and the model priced on its connection: served.
	if code, m := e.mgmt("PATCH", "/api/keys/"+id, map[string]any{"budget": map[string]any{"usd": 1, "period": "day"}}); code != 200 {
		t.Fatalf("strict again: %d %v", code, m)
	}
	if resp, _ := e.chat("gpt-4o-mini", false, capped); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("strict again, still unpriced: %d", resp.StatusCode)
	}
	if code, m := e.mgmt("PATCH", "/api/providers/"+conn, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": 1, "outputPerMTok": 1}}}); code != 200 {
		t.Fatalf("pricing: %d %v", code, m)
	}
	if resp, body := e.chat("gpt-4o-mini", false, capped); resp.StatusCode != 200 {
		t.Fatalf("a priced model under a USD budget: %d %s", resp.StatusCode, body)
	}
	// A fallback without a price beside it: the model has a known price.
	e.addConn("Spare", "key-spare", 2)
	if resp, body := e.chat("gpt-4o-mini", false, capped); resp.StatusCode != 200 {
		t.Fatalf("a model priced on one of its connections: %d %s", resp.StatusCode, body)
	}
	if s := e.keyOf("capped")["spend"].(map[string]any); s["usd"].(float64) <= 0 {
		t.Fatalf("the priced answer was not charged: %v", s)
	}
}

// TestBudgetHoldsShownAndNamedInTheRefusal (issue 42 item 4): while a
// request is in flight, GET /api/keys shows its hold beside what was spent
// (spend.heldUsd, spend.inFlight), and the refusal it causes names the key,
// the budget, the spent part and the held part.
func TestBudgetHoldsShownAndNamedInTheRefusal(t *testing.T) {
	e := newEnv(t)
	conn := e.addConn("metered", "key-m", 1)
	// 100 $/MTok: a request without max_tokens holds its 4,096 output tokens,
	// about $0.41, over the $0.10 budget by itself.
	if code, m := e.mgmt("PATCH", "/api/providers/"+conn, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": 100, "outputPerMTok": 100}}}); code != 200 {
		t.Fatalf("pricing: %d %v", code, m)
	}
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "Ana's agent", "budget": map[string]any{"usd": 0.1, "period": "day"}})
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %v", code, m)
	}
	if s := m["spend"].(map[string]any); s["heldUsd"] != float64(0) || s["inFlight"] != float64(0) {
		t.Fatalf("a new key holds nothing: %v", s)
	}
	as := "Bearer " + m["key"].(string)
	e.up.SetFault("key-m", fakeupstream.Fault{Mode: fakeupstream.ModeStallBeforeHeaders, Times: 1})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "POST", e.ts.URL+"/v1/chat/completions",
			bytes.NewReader([]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", as)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	var spend map[string]any
	for deadline := time.Now().Add(20 * time.Second); ; {
		spend = e.keyOf("Ana's agent")["spend"].(map[string]any)
		if spend["inFlight"] == float64(1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stalled request never showed in flight: %v", spend)
		}
		time.Sleep(20 * time.Millisecond)
	}
	held := spend["heldUsd"].(float64)
	if held < 0.4 || held > 0.5 || spend["usd"].(float64) != held {
		t.Fatalf("spend while one request is in flight: %v, want about $0.41 held, all of usd", spend)
	}

	resp, body := e.do("POST", "/v1/chat/completions", map[string]any{"model": "gpt-4o-mini",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"Authorization": as})
	msg := string(body)
	if resp.StatusCode != 429 || errorCode(body) != "KEY_BUDGET_EXCEEDED" {
		t.Fatalf("over the budget with the hold: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{`\"Ana's agent\"`, "day budget of $0.1000", "$0.0000 spent", "held by 1 request(s) in flight"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %s: %s", want, msg)
		}
	}
	cancel()
	<-done
	for deadline := time.Now().Add(20 * time.Second); ; {
		spend = e.keyOf("Ana's agent")["spend"].(map[string]any)
		if spend["inFlight"] == float64(0) && spend["heldUsd"] == float64(0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hold of a cancelled request was never given back: %v", spend)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
