package e2e

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// Tests of the guide items docs/GUIDE.md marks "fixed": each failed on the
// binary before its fix.

// TestPassingTestLiftsTerminalState: a terminal state (guide §2: banned,
// expired, credits_exhausted) holds until the credentials change or an
// operator resets it. The operator's reset is the connection Test: once the
// account answers again (credits topped up) a passing Test brings it back
// without re-entering the same key; the cooldown manager still never clears it.
func TestPassingTestLiftsTerminalState(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	gw := startGateway(t, t.TempDir(), 0)
	id := gw.addConn("credits", base, "key-credits", 1)
	up.SetFault("key-credits", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: http.StatusPaymentRequired,
		Body: `{"error":{"message":"insufficient credits","type":"billing_error"}}`, Times: 1})

	if resp, body := gw.chat(gw.key, "gpt-4o-mini", false); resp.StatusCode == http.StatusOK {
		t.Fatalf("status 200 from an account out of credits: %s", body)
	}
	if st, _ := gw.connStatus(id); st != "terminal" {
		t.Fatalf("status %q after a 402 credits answer, want terminal", st)
	}
	clear := gw.mustMgmt(http.StatusOK, http.MethodPost, "/api/resilience/cooldowns", map[string]any{"connectionIds": []string{id}})
	if n, _ := clear["skippedTerminal"].(float64); n != 1 {
		t.Fatalf("cooldown manager: %v, want the terminal connection skipped", clear)
	}
	if st, _ := gw.connStatus(id); st != "terminal" {
		t.Fatalf("status %q after the cooldown manager's clear, want still terminal", st)
	}

	chk := gw.mustMgmt(http.StatusOK, http.MethodPost, "/api/providers/"+id+"/test", nil)
	if chk["ok"] != true {
		t.Fatalf("Test of a working account: %v", chk)
	}
	if st, _ := gw.connStatus(id); st != "healthy" {
		t.Fatalf("status %q after a passing Test, want healthy (the operator's reset)", st)
	}
	conn := gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/providers/"+id, nil)["connection"].(map[string]any)
	if conn["testStatus"] != "active" || conn["errorCode"] != "" {
		t.Fatalf("connection after the reset: testStatus %v errorCode %v, want active and no error", conn["testStatus"], conn["errorCode"])
	}
	if resp, body := gw.chat(gw.key, "gpt-4o-mini", false); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d after the reset, want 200: %s", resp.StatusCode, body)
	}
}

// TestOperatorRuleGuideReasonSpelling: an operator rule may give the guide's
// fallback reason concurrency_limited (§2); the Rules page's reason list
// names it, and a matching answer fails over at once without a backoff step.
func TestOperatorRuleGuideReasonSpelling(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rule := map[string]any{"id": "busy-workspace", "provider": "openai-compatible",
		"match": map[string]any{"statuses": []int{429}, "textMarkers": []string{"workspace busy"}}, "reason": "concurrency_limited", "scope": "connection"}
	s.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"providerErrorRules": []any{rule}})
	listed := s.gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/rules", nil)
	reasons, _ := listed["reasons"].([]any)
	if !slices.Contains(reasons, any("concurrency_limited")) {
		t.Fatalf("reasons %v do not name concurrency_limited", reasons)
	}

	s.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
		Body: `{"error":{"message":"workspace busy, try again","type":"requests"}}`})
	resp, body := s.gw.chat(s.gw.key, "openai-compatible/gpt-4o-mini", false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != s.secondary {
		t.Fatalf("status %d via %s, want 200 from the second connection: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	conn := s.gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/providers/"+s.primary, nil)["connection"].(map[string]any)
	if conn["lastErrorType"] != "concurrency_limit" || conn["backoffLevel"] != float64(0) {
		t.Fatalf("primary lastErrorType %v backoffLevel %v, want concurrency_limit at level 0", conn["lastErrorType"], conn["backoffLevel"])
	}
	if h := s.gw.ruleHits("operator", "busy-workspace"); h != 1 {
		t.Fatalf("rule hits %v, want 1", h)
	}
}

// TestBreakerMaxBackoffMultiplierExposed: the guide's maxBackoffMultiplier
// (§1) is in GET /api/resilience for each breaker category (default 1),
// patchable and clamped to 1–64.
func TestBreakerMaxBackoffMultiplierExposed(t *testing.T) {
	t.Parallel()
	gw := startGateway(t, t.TempDir(), 0)
	pb := gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience", nil)["providerBreaker"].(map[string]any)
	for _, cat := range []string{"oauth", "apikey", "local"} {
		if got := pb[cat].(map[string]any)["maxBackoffMultiplier"]; got != float64(1) {
			t.Fatalf("providerBreaker.%s.maxBackoffMultiplier = %v, want 1", cat, got)
		}
	}
	r := gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/resilience", map[string]any{
		"providerBreaker": map[string]any{"oauth": map[string]any{"maxBackoffMultiplier": 8}, "local": map[string]any{"maxBackoffMultiplier": 100}}})
	pb = r["providerBreaker"].(map[string]any)
	if got := pb["oauth"].(map[string]any)["maxBackoffMultiplier"]; got != float64(8) {
		t.Fatalf("oauth multiplier after the patch = %v, want 8", got)
	}
	if got := pb["local"].(map[string]any)["maxBackoffMultiplier"]; got != float64(64) {
		t.Fatalf("local multiplier 100 = %v, want clamped to 64", got)
	}
}

// TestClaudeLaneWaitsOnAStream: a Claude subscription in the low-priority
// lane (guide §2) answered slot_busy waits the upstream's slow-retry-after
// and tries again; the wait is bounded by the request's first-byte budget
// minus 5 s, and the attempt's own timer keeps that same budget. Before, a
// stream's short header wait (streamFirstByteTimeoutMs, 1 s here) cut the
// attempt in the middle of the lane's wait: a timeout instead of the answer
// the lane was waiting for.
func TestClaudeLaneWaitsOnAStream(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	gw := startGateway(t, t.TempDir(), 0)
	gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"streamFirstByteTimeoutMs": 1000})
	const token = "sk-ant-oat01-lane-stream-token"
	m := gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", map[string]any{
		"provider": "claude", "name": "lane", "authType": "oauth", "accessToken": token, "baseUrl": base + "/v1",
		"models": []string{"claude-sonnet-4-5"}, "providerSpecificData": map[string]any{"lowPriorityMode": true}, "verify": false})
	if m["connection"] == nil {
		t.Fatalf("create: %v", m)
	}
	reset := strconv.FormatInt(time.Now().Add(2*time.Hour).Unix(), 10)
	up.AddFault(token, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Headers: map[string]string{
		"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-slow-offer": "treatment",
		"anthropic-ratelimit-unified-reset": reset}})
	up.AddFault(token, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Headers: map[string]string{
		"anthropic-ratelimit-unified-status": "allowed", "anthropic-ratelimit-unified-slow-status": "slot_busy",
		"anthropic-ratelimit-unified-slow-retry-after": "5", "anthropic-ratelimit-unified-reset": reset}})

	resp, body := gw.do(http.MethodPost, "/v1/messages", map[string]any{"model": "claude/claude-sonnet-4-5", "max_tokens": 64, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"x-api-key": gw.key, "anthropic-version": "2023-06-01"})
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("message_stop")) {
		t.Fatalf("status %d, want the whole stream after the lane's wait: %s", resp.StatusCode, body)
	}
	if n := up.Hits(token); n != 3 {
		t.Fatalf("upstream hits %d, want 3 (wall, slot_busy, answer)", n)
	}
	if h, _ := up.LastRequest(token); h.Get("anthropic-usage-limit") != "slow" {
		t.Fatalf("the answer was not asked in the lane: %v", h)
	}
}
