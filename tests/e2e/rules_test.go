package e2e

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// addProviderConn creates a connection of a catalogue provider whose baseUrl
// points at the fake upstream.
func (g *gatewayProc) addProviderConn(provider, name, upstreamBaseURL, upstreamKey string, priority int, models []string, extra map[string]any) string {
	g.t.Helper()
	body := map[string]any{"provider": provider, "name": name, "authType": "apikey", "apiKey": upstreamKey,
		"baseUrl": upstreamBaseURL + "/v1", "priority": priority, "models": models,
		// Without the check a create runs by default: the rule tests count the
		// fake's requests (issue42_probe_test.go covers the check).
		"verify": false}
	for k, v := range extra {
		body[k] = v
	}
	m := g.mustMgmt(http.StatusCreated, http.MethodPost, "/api/providers", body)
	conn, _ := m["connection"].(map[string]any)
	id, _ := conn["id"].(string)
	if id == "" {
		g.t.Fatalf("create connection: no connection.id in %v", m)
	}
	return id
}

// connStatus returns a connection's status in GET /api/resilience/cooldowns.
func (g *gatewayProc) connStatus(id string) (status string, remainingMs float64) {
	g.t.Helper()
	m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience/cooldowns", nil)
	list, _ := m["connections"].([]any)
	for _, it := range list {
		c, _ := it.(map[string]any)
		if c["id"] == id {
			s, _ := c["status"].(string)
			r, _ := c["cooldownRemainingMs"].(float64)
			return s, r
		}
	}
	g.t.Fatalf("connection %s not in cooldowns: %v", id, m)
	return "", 0
}

// ruleHits returns the hit count the Rules page shows for source:id.
func (g *gatewayProc) ruleHits(source, id string) float64 {
	g.t.Helper()
	m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/rules", nil)
	items, _ := m["items"].([]any)
	for _, it := range items {
		r, _ := it.(map[string]any)
		if r["source"] == source && r["id"] == id {
			h, _ := r["hits"].(float64)
			return h
		}
	}
	g.t.Fatalf("rule %s:%s not listed: %v", source, id, m)
	return 0
}

const agentrouterQuota403 = `{"error":{"message":"用户额度不足, 剩余额度: ＄0.000000 (request id: 2025110312000012345)","type":"new_api_error","param":"","code":null}}`

// TestAgentrouterQuotaRestated: agentrouter reports a temporary quota
// exhaustion as 403 with a Chinese body. Claude Code would abort on a 403; the
// gateway restates it: the next connection serves, the exhausted one cools
// (never terminal), and when no connection is left the client gets 429 with
// Retry-After: 60 instead of a dead 403 / 502.
func TestAgentrouterQuotaRestated(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	gw := startGateway(t, t.TempDir(), 0)
	a := gw.addProviderConn("agentrouter", "ar-a", base, "key-a", 1, []string{"claude-sonnet-4"}, nil)
	b := gw.addProviderConn("agentrouter", "ar-b", base, "key-b", 2, []string{"claude-sonnet-4"}, nil)
	up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Body: agentrouterQuota403})

	resp, body := gw.chat(gw.key, "agentrouter/claude-sonnet-4", false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200 from the second connection: %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-OmniRoute-Selected-Connection-Id"); got != b {
		t.Fatalf("served by %s, want the second connection %s", got, b)
	}
	if st, rem := gw.connStatus(a); st != "cooling_down" || rem <= 0 {
		t.Fatalf("exhausted connection status %q (remaining %v ms), want cooling_down, never terminal", st, rem)
	}

	up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Body: agentrouterQuota403})
	resp, body = gw.chat(gw.key, "agentrouter/claude-sonnet-4", false)
	checkError(t, "every agentrouter account out of quota", resp, body, http.StatusTooManyRequests, "UPSTREAM_QUOTA_EXHAUSTED")
	if ra := resp.Header.Get("Retry-After"); ra != "60" {
		t.Fatalf("Retry-After %q, want 60", ra)
	}
	if st, _ := gw.connStatus(b); st != "cooling_down" {
		t.Fatalf("second connection status %q, want cooling_down", st)
	}
	// Claude Code speaks Anthropic Messages: it too gets a retryable 429, not a fatal 403.
	resp, body = gw.do(http.MethodPost, "/v1/messages", map[string]any{"model": "agentrouter/claude-sonnet-4", "max_tokens": 64,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"x-api-key": gw.key, "anthropic-version": "2023-06-01"})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("Anthropic client: %d Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if h := gw.ruleHits("builtin", "agentrouter-quota-as-403"); h != 2 {
		t.Fatalf("restatement hits %v, want 2", h)
	}
	if h := gw.ruleHits("builtin", "agentrouter-user-quota-exhausted"); h != 2 {
		t.Fatalf("user-quota rule hits %v, want 2", h)
	}
}

// TestAgentrouterModelAccessLocksOnlyTheModel: "无权访问模型" is permanent for
// that model on that account: only the model leaves routing (6 h), the
// connection and its sibling model keep serving, the status is never
// restated, and the client gets the upstream's 403, then and while it is locked.
func TestAgentrouterModelAccessLocksOnlyTheModel(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	gw := startGateway(t, t.TempDir(), 0)
	a := gw.addProviderConn("agentrouter", "ar", base, "key-a", 1, []string{"claude-opus-4", "claude-sonnet-4"}, nil)
	up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 403, Models: []string{"claude-opus-4"},
		Body: `{"error":{"message":"无权访问模型 claude-opus-4 (request id: 20251103)","type":"new_api_error"}}`})

	resp, body := gw.chat(gw.key, "agentrouter/claude-opus-4", false)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("denied model answered %d, want the upstream's 403 (a permanent denial is neither a retryable 429 nor a 502): %s", resp.StatusCode, body)
	}
	resp, body = gw.chat(gw.key, "agentrouter/claude-sonnet-4", false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sibling model status %d, want 200: %s", resp.StatusCode, body)
	}
	if st, _ := gw.connStatus(a); st == "cooling_down" || st == "terminal" {
		t.Fatalf("connection status %q: the model-access rule must not cool the connection", st)
	}
	hits := up.Hits("key-a")
	resp, body = gw.chat(gw.key, "agentrouter/claude-opus-4", false)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("locked model answered %d, want 403 (the denial stands): %s", resp.StatusCode, body)
	}
	if up.Hits("key-a") != hits {
		t.Fatalf("the locked model was sent upstream again")
	}
	m := gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience/model-cooldowns", nil)
	items, _ := m["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("model cooldowns %v, want exactly the denied model", m)
	}
	it, _ := items[0].(map[string]any)
	rem, _ := it["remainingMs"].(float64)
	if it["model"] != "claude-opus-4" || rem < 5*3600*1000 || rem > 6*3600*1000 {
		t.Fatalf("lock %v, want claude-opus-4 for ~6 h", it)
	}
	if h := gw.ruleHits("builtin", "agentrouter-quota-as-403"); h != 0 {
		t.Fatalf("the permanent denial was restated (%v hits)", h)
	}
}

// TestOperatorRuleAppliesLive: an operator declares a rule through the API;
// the very next request is judged by it, without a restart, and the preview
// route says what a sample error becomes.
func TestOperatorRuleAppliesLive(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	paused := `{"error":{"message":"workspace paused for maintenance","type":"invalid_request_error"}}`
	s.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Body: paused})

	resp, body := s.gw.chat(s.gw.key, "openai-compatible/gpt-4o-mini", false)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("before the rule: status %d, want the upstream's 400 passed through: %s", resp.StatusCode, body)
	}
	rule := map[string]any{"id": "paused-workspace", "provider": "openai-compatible",
		"match":  map[string]any{"statuses": []int{400}, "textMarkers": []string{"workspace paused"}},
		"reason": "server_error", "scope": "connection", "cooldownMs": 120000}

	code, bad := s.gw.mgmt(http.MethodPatch, "/api/settings", map[string]any{"providerErrorRules": []any{
		map[string]any{"id": "x", "provider": "openai-compatible", "match": map[string]any{}, "reason": "server_error", "scope": "connection"}}})
	if code != http.StatusBadRequest {
		t.Fatalf("a rule with no match criterion: status %d, want 400: %v", code, bad)
	}
	prev := s.gw.mustMgmt(http.StatusOK, http.MethodPost, "/api/rules/preview", map[string]any{
		"provider": "openai-compatible", "status": 400, "body": paused, "rules": []any{rule}})
	if prev["rule"] != "paused-workspace" || prev["leaves"] != "connection" || prev["failover"] != true {
		t.Fatalf("preview %v, want the draft rule to fail over and cool the connection", prev)
	}
	s.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"providerErrorRules": []any{rule}})

	resp, body = s.gw.chat(s.gw.key, "openai-compatible/gpt-4o-mini", false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("after the rule: status %d, want 200 from the second connection: %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-OmniRoute-Selected-Connection-Id"); got != s.secondary {
		t.Fatalf("served by %s, want %s", got, s.secondary)
	}
	if st, rem := s.gw.connStatus(s.primary); st != "cooling_down" || rem < 100_000 {
		t.Fatalf("primary %q remaining %v ms, want cooling_down for the rule's 120 s", st, rem)
	}
	if h := s.gw.ruleHits("operator", "paused-workspace"); h != 1 {
		t.Fatalf("operator rule hits %v, want 1", h)
	}
}

// TestEgressBucketLock: opencode's free tier limits per client IP. Four
// opencode connections: a, b and d leave from 127.0.0.2, c from 127.0.0.3; d
// opted out of shared cooldowns. A 429 on a cools a and its IP sibling b
// before rotation wastes a call on it; c (another IP) and d (opted out) keep
// serving, and nothing becomes terminal.
func TestEgressBucketLock(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	gw := startGateway(t, t.TempDir(), 0)
	ip := func(addr string) map[string]any {
		return map[string]any{"providerSpecificData": map[string]any{"localAddress": addr}}
	}
	models := []string{"qwen3-coder"}
	a := gw.addProviderConn("opencode", "oc-a", base, "key-a", 1, models, ip("127.0.0.2"))
	b := gw.addProviderConn("opencode", "oc-b", base, "key-b", 2, models, ip("127.0.0.2"))
	c := gw.addProviderConn("opencode", "oc-c", base, "key-c", 3, models, ip("127.0.0.3"))
	d := gw.addProviderConn("opencode", "oc-d", base, "key-d", 4, models, map[string]any{
		"providerSpecificData": map[string]any{"localAddress": "127.0.0.2"}, "rateLimitOverrides": map[string]any{"disableCooling": true}})

	code, bad := gw.mgmt(http.MethodPost, "/api/providers", map[string]any{"provider": "opencode", "name": "bad", "apiKey": "k",
		"baseUrl": base + "/v1", "providerSpecificData": map[string]any{"localAddress": "not-an-ip"}})
	if code != http.StatusBadRequest {
		t.Fatalf("a bad localAddress: status %d, want 400: %v", code, bad)
	}

	// Every connection makes one call first, so the gateway knows its egress IP.
	for _, k := range []string{"key-a", "key-b", "key-c"} {
		up.SetFault(k, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404, Times: 1})
	}
	if resp, body := gw.chat(gw.key, "opencode/qwen3-coder", false); resp.StatusCode != http.StatusOK ||
		resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != d {
		t.Fatalf("warm-up: %d from %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}

	up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
		Body: `{"type":"error","error":{"type":"RateLimitError","message":"Rate limit exceeded. Please try again later."}}`})
	hitsB := up.Hits("key-b")
	resp, body := gw.chat(gw.key, "opencode/qwen3-coder", false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != c {
		t.Fatalf("after the 429: %d from %q, want 200 from c (other IP): %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	if up.Hits("key-b") != hitsB {
		t.Fatalf("b shares a's egress IP but was still called")
	}
	for id, want := range map[string]string{a: "cooling_down", b: "cooling_down", c: "healthy", d: "healthy"} {
		if st, _ := gw.connStatus(id); st != want {
			t.Errorf("connection %s status %q, want %q", id, st, want)
		}
	}
	m := gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/resilience/cooldowns", nil)
	for _, it := range m["connections"].([]any) {
		cn := it.(map[string]any)
		if cn["id"] == b && cn["errorCode"] != "EGRESS_BUCKET_COOLDOWN" {
			t.Errorf("b errorCode %v, want EGRESS_BUCKET_COOLDOWN", cn["errorCode"])
		}
		// The egress IP recorded is the local address each connection really left from.
		want := map[string]string{a: "127.0.0.2", b: "127.0.0.2", c: "127.0.0.3", d: "127.0.0.2"}[cn["id"].(string)]
		if want != "" && cn["egressIp"] != want {
			t.Errorf("connection %s egressIp %v, want %s", cn["id"], cn["egressIp"], want)
		}
	}
}

// TestComboAllExcludedLogLine: when every target of a combo is excluded by a
// timer before dispatch, the gateway logs the guide's [COMBO] line with each
// target's reason and seconds left.
func TestComboAllExcludedLogLine(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/combos", map[string]any{"name": "pool", "strategy": "weighted",
		"targets": []any{map[string]any{"model": "openai-compatible/gpt-4o-mini", "connectionId": s.primary, "weight": 1},
			map[string]any{"model": "openai-compatible/gpt-4o-mini", "connectionId": s.secondary, "weight": 1}}})
	for _, k := range []string{"key-a", "key-b"} {
		s.up.SetFault(k, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Headers: map[string]string{"Retry-After": "300"}})
	}
	if resp, body := s.gw.chat(s.gw.key, "pool", false); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("both rate limited: %d %s", resp.StatusCode, body)
	}
	resp, body := s.gw.chat(s.gw.key, "pool", false)
	if resp.StatusCode == http.StatusOK {
		t.Fatalf("every target is cooling, yet 200: %s", body)
	}
	const want = "[COMBO] Weighted selection: every target excluded before dispatch — "
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.gw.logs(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q line in the gateway log:\n%s", want, s.gw.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	line := s.gw.logs()[strings.Index(s.gw.logs(), want):]
	line, _, _ = strings.Cut(line, "\n")
	// A 429 without account-wide evidence cools the model (scope from evidence).
	if n := len(regexp.MustCompile(`\(model_cooldown:UPSTREAM_RATE_LIMITED, \d+s\)`).FindAllString(line, -1)); n != 2 {
		t.Fatalf("line does not name both targets with reason and seconds: %s", line)
	}
}

// TestEmergencyFallbackFlagLive: with the flag off a dead pool answers its
// error; the operator turns the Feature Flags switch on with an emergency
// model and the next request is served by it, without a restart.
func TestEmergencyFallbackFlagLive(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	gw := startGateway(t, t.TempDir(), 0)
	gw.addProviderConn("openai-compatible", "main", base, "key-main", 1, []string{"gpt-4o-mini"}, map[string]any{"prefix": "main"})
	spare := gw.addProviderConn("openai-compatible", "spare", base, "key-spare", 2, []string{"gpt-4o-mini"}, map[string]any{"prefix": "spare"})
	up.SetFault("key-main", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503})

	resp, body := gw.chat(gw.key, "main/gpt-4o-mini", false)
	if resp.StatusCode == http.StatusOK || up.Hits("key-spare") != 0 {
		t.Fatalf("flag off: %d (spare hits %d): %s", resp.StatusCode, up.Hits("key-spare"), body)
	}
	f := gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/feature-flags", nil)
	flag := f["flags"].([]any)[0].(map[string]any)
	if flag["enabled"] != false || flag["source"] != "env" {
		t.Fatalf("default flag %v", flag)
	}
	gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/settings", map[string]any{"featureFlags": map[string]any{
		"emergencyFallback": true, "emergencyFallbackModel": "spare/gpt-4o-mini"}})

	mainBefore := up.Hits("key-main")
	resp, body = gw.chat(gw.key, "main/gpt-4o-mini", false)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != spare {
		t.Fatalf("flag on: %d from %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
	}
	// The attempts header counts the failed round too, as the request log does.
	if failed := up.Hits("key-main") - mainBefore; failed == 0 || resp.Header.Get("X-OmniRoute-Attempts") != strconv.Itoa(failed+1) {
		t.Fatalf("X-OmniRoute-Attempts %q after %d failed attempts on main and one on spare", resp.Header.Get("X-OmniRoute-Attempts"), failed)
	}
	if got := resp.Header.Get("X-OmniRoute-Emergency-Fallback"); got != "spare/gpt-4o-mini" {
		t.Fatalf("emergency header %q", got)
	}
	f = gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/feature-flags", nil)
	if flag := f["flags"].([]any)[0].(map[string]any); flag["enabled"] != true || flag["source"] != "settings" {
		t.Fatalf("flag after PATCH %v", flag)
	}
	// When the emergency model fails too, the client gets the original failure.
	up.SetFault("key-spare", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401})
	resp, body = gw.chat(gw.key, "main/gpt-4o-mini", false)
	if resp.StatusCode == http.StatusOK || resp.Header.Get("X-OmniRoute-Emergency-Fallback") != "" || strings.Contains(string(body), "401") {
		t.Fatalf("both failing: %d, emergency header %q: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Emergency-Fallback"), body)
	}
}
