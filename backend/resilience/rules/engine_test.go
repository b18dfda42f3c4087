package rules_test

import (
	"fmt"
	"testing"
	"time"

	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/verdict"
)

// TestScopeHonouredOnlyWhenFlagged: a built-in rule's scope acts only for a
// provider whose catalogue entry says so; elsewhere it is a label.
func TestScopeHonouredOnlyWhenFlagged(t *testing.T) {
	e := rules.New(nil, registry.Catalog(nil).Restatements(), registry.Catalog(nil).Rules()...)
	o := verdict.Outcome{Status: 403, Provider: "agentrouter", Now: now, Body: []byte(`{"error":{"message":"无权访问模型 x"}}`)}
	on := e.Classify(o, rules.Traits{FullText: true, HonorsScope: true})
	off := e.Classify(o, rules.Traits{FullText: true, HonorsScope: false})
	if on.ModelLock != 6*time.Hour || on.CoolConnection || on.Scope != verdict.ScopeModel {
		t.Fatalf("honoured: %+v", on)
	}
	if off.ModelLock != 0 || off.Scope == verdict.ScopeModel || off.Rule != "agentrouter-model-access-denied" {
		t.Fatalf("not honoured: %+v", off)
	}
	// Without full text the body markers are invisible: the classifier alone decides.
	blind := e.Classify(o, rules.Traits{HonorsScope: true})
	if blind.Rule != "" || blind.ModelLock != 0 {
		t.Fatalf("structured-only: %+v", blind)
	}
}

// TestOperatorRulesWinAndSeeFullText: an operator rule is tried before the
// built-ins, sees the whole error text and has its scope honoured, whatever
// the catalogue flags say.
func TestOperatorRulesWinAndSeeFullText(t *testing.T) {
	ops := []rules.Rule{{ID: "op-model", Provider: "openai", Match: rules.Match{Statuses: []int{400}, TextMarkers: []string{"model is retired"}},
		Reason: "not_found", Scope: rules.ScopeModel, CooldownMs: 90_000}}
	e := rules.New(func() []rules.Rule { return ops }, registry.Catalog(nil).Restatements())
	o := verdict.Outcome{Status: 400, Provider: "openai", Now: now, Body: []byte(`{"error":{"message":"This model is retired.","type":"invalid_request_error"}}`)}
	v := e.Classify(o, rules.Traits{})
	if v.Rule != "op-model" || v.Kind != verdict.KindNotFound || v.ModelLock != 90*time.Second || !v.Failover {
		t.Fatalf("operator rule: %+v", v)
	}
	// Another provider is untouched.
	o.Provider = "anthropic"
	if v := e.Classify(o, rules.Traits{}); v.Rule != "" || v.Kind != verdict.KindBadRequest {
		t.Fatalf("other provider: %+v", v)
	}
	var hits int64
	for _, l := range e.List() {
		if l.Source == rules.SourceOperator && l.ID == "op-model" {
			hits = l.Hits
		}
	}
	if hits != 1 {
		t.Fatalf("hits %d, want 1", hits)
	}
	// Preview counts nothing and can try a draft list.
	draft := []rules.Rule{{ID: "draft", Provider: "openai", Match: rules.Match{Codes: []string{"invalid_request_error"}},
		Reason: "server_error", Scope: rules.ScopeProvider}}
	o.Provider = "openai"
	res := e.Preview(o, rules.Traits{}, draft)
	if res.Rule == nil || res.Rule.ID != "draft" || res.Verdict.Scope != verdict.ScopeProvider || !res.Verdict.CountsForBreaker {
		t.Fatalf("preview: %+v", res)
	}
	for _, l := range e.List() {
		if l.ID == "op-model" && l.Hits != 1 {
			t.Fatalf("preview counted a hit: %+v", l)
		}
	}
}

// TestConnectionScopeNeverTerminal: a rule with connection scope cools, never
// makes the account terminal, even when the classifier alone would have.
func TestConnectionScopeNeverTerminal(t *testing.T) {
	ops := []rules.Rule{{ID: "balance-window", Provider: "minimax", Match: rules.Match{Codes: []string{"1008"}},
		Reason: "quota_exhausted", Scope: rules.ScopeConnection, CooldownMs: 600_000}}
	e := rules.New(func() []rules.Rule { return ops }, registry.Catalog(nil).Restatements())
	v := e.Classify(verdict.Outcome{Status: 400, Provider: "minimax", Now: now,
		Body: []byte(`{"base_resp":{"status_code":1008,"status_msg":"insufficient balance"}}`)}, rules.Traits{})
	if v.Terminal != "" || !v.CoolConnection || v.FixedCooldown != 10*time.Minute || v.Kind != verdict.KindQuota {
		t.Fatalf("%+v", v)
	}
}

// TestStreamErrors: in-stream errors carry no HTTP status; rules that name
// text or codes still apply, status-only rules never do.
func TestStreamErrors(t *testing.T) {
	e := rules.New(nil, registry.Catalog(nil).Restatements(), registry.Catalog(nil).Rules()...)
	tr := rules.Traits{FullText: true, HonorsScope: true}
	v, ok := e.ClassifyStreamError("agentrouter", []byte(`{"error":{"message":"用户额度不足"}}`), now, tr)
	if !ok || v.Kind != verdict.KindQuota || v.ClientRetryAfter != time.Minute || !v.CoolConnection || v.RestatedFrom != 200 {
		t.Fatalf("in-stream quota: ok=%v %+v", ok, v)
	}
	v, ok = e.ClassifyStreamError("agentrouter", []byte(`{"error":{"message":"\u989d\u5ea6\u4e0d\u8db3"}}`), now, tr)
	if !ok || v.Kind != verdict.KindQuota || v.Code != verdict.CodeQuotaRestated {
		t.Fatalf("in-stream quota, \\u-escaped: ok=%v %+v", ok, v)
	}
	v, ok = e.ClassifyStreamError("opencode", []byte(`{"error":{"code":"429","message":"slow down"}}`), now, rules.Traits{FullText: true})
	if !ok || v.Rule != "opencode-rate-limit" || v.Status != 429 {
		t.Fatalf("in-stream status as a string: ok=%v %+v", ok, v)
	}
	if _, ok := e.ClassifyStreamError("opencode", []byte(`{"error":{"message":"upstream hiccup"}}`), now, rules.Traits{FullText: true}); ok {
		t.Fatal("a status-only rule (opencode 429) matched an in-stream error without a status")
	}
	v, ok = e.ClassifyStreamError("opencode", []byte(`{"error":{"status":429,"message":"Rate limit exceeded"}}`), now, rules.Traits{FullText: true})
	if !ok || v.Kind != verdict.KindRateLimit || v.Rule != "opencode-rate-limit" {
		t.Fatalf("in-stream 429: ok=%v %+v", ok, v)
	}
}

func TestValidate(t *testing.T) {
	good := rules.Rule{ID: "a", Provider: "p", Match: rules.Match{Statuses: []int{403}}, Reason: "auth_error", Scope: rules.ScopeConnection}
	if err := rules.Validate([]rules.Rule{good}); err != nil {
		t.Fatal(err)
	}
	long := make([]rules.Rule, rules.MaxOperatorRules+1)
	if rules.Validate(long) == nil {
		t.Fatal("too many rules accepted")
	}
	bad := good
	bad.Match.TextMarkers = []string{" "}
	if rules.Validate([]rules.Rule{bad}) == nil {
		t.Fatal("a blank marker accepted")
	}
}

// TestCodeAssistQuotaRules: Code Assist's 429s (ErrorInfo reasons) lock the
// one model on the gemini-cli login, never the login: a used-up daily quota
// until the reset Google names (RetryInfo, else its "reset after" prose),
// Google's missing capacity for a minute, a per-minute limit for its delay.
// The same bodies from another provider match none of these rules.
func TestCodeAssistQuotaRules(t *testing.T) {
	const quota = `{"error":{"code":429,"message":"You have exhausted your capacity on this model. Your quota will reset after 2h36m24s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"QUOTA_EXHAUSTED","domain":"cloudcode-pa.googleapis.com","metadata":{"model":"gemini-2.5-pro"}}%s]}}`
	retry := func(d string) string {
		return `,{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + d + `"}`
	}
	cases := []struct {
		name, provider, body string
		rule                 string
		kind                 verdict.Kind
		lock                 time.Duration
	}{
		{"quota with RetryInfo", "gemini-cli", fmt.Sprintf(quota, retry("9384.5s")), "gemini-cli-quota-exhausted", verdict.KindQuota, 9384500 * time.Millisecond},
		{"quota, reset in prose only", "gemini-cli", fmt.Sprintf(quota, ""), "gemini-cli-quota-exhausted", verdict.KindQuota, 2*time.Hour + 36*time.Minute + 24*time.Second},
		{"capacity", "gemini-cli", `{"error":{"code":429,"message":"No capacity available for model gemini-2.5-pro on the server","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"MODEL_CAPACITY_EXHAUSTED","domain":"cloudcode-pa.googleapis.com"}]}}`,
			"gemini-cli-model-capacity", verdict.KindRateLimit, time.Minute},
		{"per-minute limit", "gemini-cli", `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"cloudcode-pa.googleapis.com"}` + retry("31s") + `]}}`,
			"gemini-cli-rate-limit", verdict.KindRateLimit, 31 * time.Second},
		{"another provider", "gemini", fmt.Sprintf(quota, retry("9384.5s")), "", verdict.KindQuota, 0},
	}
	e := rules.New(nil, registry.Catalog(nil).Restatements(), registry.Catalog(nil).Rules()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := e.Classify(verdict.Outcome{Status: 429, Provider: c.provider, Now: now, Body: []byte(c.body)}, rules.Traits{HonorsScope: c.provider == "gemini-cli"})
			if v.Rule != c.rule || v.Kind != c.kind || v.ModelLock != c.lock {
				t.Fatalf("rule %q kind %s lock %v; want %q %s %v", v.Rule, v.Kind, v.ModelLock, c.rule, c.kind, c.lock)
			}
			if c.rule != "" && (v.CoolConnection || v.Scope != verdict.ScopeModel || !v.Failover) {
				t.Fatalf("the login is blamed: %+v", v)
			}
		})
	}
}

// TestBuiltinTakesModuleRules: the modules' rules join the shipped ones
// before the rules of every provider, which stay last; without modules
// the list is the shipped one.
func TestBuiltinTakesModuleRules(t *testing.T) {
	mod := rules.Rule{ID: "acme-quota", Provider: "acme", Match: rules.Match{Codes: []string{"ACME_QUOTA"}}, Reason: "quota_exhausted", Scope: rules.ScopeConnection}
	base := rules.BuiltinRules()
	got := rules.Builtin(mod)
	if len(got) != len(base)+1 || got[len(got)-1].Provider != rules.AnyProvider || got[len(got)-2].ID != "acme-quota" {
		t.Fatalf("module rule placed at %v", got)
	}
	if len(rules.Builtin()) != len(base) {
		t.Fatal("no module rules changed the shipped list")
	}
	v := rules.New(nil, nil, mod).Classify(verdict.Outcome{Status: 400, Provider: "acme", Now: now, Body: []byte(`{"error":{"code":"ACME_QUOTA"}}`)}, rules.Traits{HonorsScope: true})
	if v.Kind != verdict.KindQuota {
		t.Fatalf("module rule not applied: %+v", v)
	}
	if v := rules.New(nil, nil).Classify(verdict.Outcome{Status: 400, Provider: "acme", Now: now, Body: []byte(`{"error":{"code":"ACME_QUOTA"}}`)}, rules.Traits{HonorsScope: true}); v.Kind == verdict.KindQuota {
		t.Fatal("a 400 is a quota without the module rule")
	}
}

// TestRuleReasonGuideSpelling: the guide names the concurrency fallback
// reason concurrency_limited (§2); a rule may give it in that spelling (the
// one the Rules page lists) or the earlier concurrency_limit, and both make a
// concurrency-limit verdict: the connection cools 1 s without a backoff step.
func TestRuleReasonGuideSpelling(t *testing.T) {
	for _, reason := range []string{rules.ReasonConcurrencyLimited, rules.ReasonConcurrencyLimitOld} {
		t.Run(reason, func(t *testing.T) {
			ops := []rules.Rule{{ID: "busy", Provider: "openai", Match: rules.Match{Statuses: []int{429}, TextMarkers: []string{"workspace busy"}},
				Reason: reason, Scope: rules.ScopeConnection}}
			if err := rules.Validate(ops); err != nil {
				t.Fatalf("reason %q refused: %v", reason, err)
			}
			e := rules.New(func() []rules.Rule { return ops }, nil)
			o := verdict.Outcome{Status: 429, Provider: "openai", Now: now, Body: []byte(`{"error":{"message":"workspace busy, try later"}}`)}
			if v := e.Classify(o, rules.Traits{}); v.Rule != "busy" || v.Kind != verdict.KindConcurrencyLimit || !v.Failover || v.FixedCooldown != time.Second {
				t.Fatalf("reason %q: %+v, want a concurrency-limit verdict with the fixed 1 s cooldown", reason, v)
			}
		})
	}
	found := false
	for _, r := range rules.Reasons {
		found = found || r == "concurrency_limited"
	}
	if !found {
		t.Fatalf("Reasons %v do not list the guide's concurrency_limited", rules.Reasons)
	}
	bad := []rules.Rule{{ID: "x", Provider: "openai", Match: rules.Match{Statuses: []int{429}}, Reason: "concurrency", Scope: rules.ScopeConnection}}
	if rules.Validate(bad) == nil {
		t.Fatal("an unknown reason accepted")
	}
}
