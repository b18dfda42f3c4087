package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type memKV map[string]string

func (m memKV) GetValue(ns, k string) (string, bool, error) { v, ok := m[ns+"/"+k]; return v, ok, nil }
func (m memKV) SetValue(ns, k, v string) error              { m[ns+"/"+k] = v; return nil }

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestFromEnv(t *testing.T) {
	p, err := FromEnv(env(map[string]string{"OMNIROUTE_PORT": "3000", "OMNIROUTE_DATA_DIR": "/d", "OMNIROUTE_ALLOWED_HOSTS": "a.lan, B.lan"}))
	if err != nil || p.Port != 3000 || p.Host != "127.0.0.1" || p.DataDir != "/d" || len(p.AllowedHosts) != 2 || p.AllowedHosts[1] != "b.lan" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"abc", "-1", "70000"} {
		if _, err := FromEnv(env(map[string]string{"OMNIROUTE_PORT": bad})); err == nil {
			t.Errorf("port %q accepted", bad)
		}
	}
}

func TestPatchGeneral(t *testing.T) {
	h, err := NewHolder(memKV{}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		patch string
		field string // "" = accepted
	}{
		{`{"maxAttempts":3}`, ""},
		{`{"maxAttempts":0}`, "maxAttempts"},
		{`{"maxAttempts":"3"}`, "maxAttempts"},
		{`{"noSuchField":1}`, "?"},
		{`[1,2]`, "?"},
		{`{"maxBodyBytes":1023}`, "maxBodyBytes"},
		{`{"requireApiKey":false}`, ""},
	}
	for _, tt := range tests {
		before := h.General()
		_, err := h.PatchGeneral([]byte(tt.patch))
		var fe *FieldError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s rejected: %v", tt.patch, err)
		case tt.field != "" && !errors.As(err, &fe):
			t.Errorf("%s accepted", tt.patch)
		case tt.field != "" && tt.field != "?" && fe.Field != tt.field:
			t.Errorf("%s: field %q, want %q", tt.patch, fe.Field, tt.field)
		}
		if err != nil && !reflect.DeepEqual(h.General(), before) {
			t.Errorf("%s: a rejected patch changed the settings", tt.patch)
		}
	}
	if g := h.General(); g.MaxAttempts != 3 || g.RequireAPIKey {
		t.Fatalf("%+v", g)
	}
}

func TestResiliencePrecedence(t *testing.T) {
	kv := memKV{}
	vars := map[string]string{"RATE_LIMIT_MAX_WAIT_MS": "5000", "PROVIDER_COOLDOWN_ENABLED": "true", "RATE_LIMIT_AUTO_ENABLE": "false"}
	h, err := NewHolder(kv, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	r := h.Resilience()
	if r.RequestQueue.MaxWaitMs != 5000 || !r.ProviderCooldown.Enabled || r.RequestQueue.AutoEnableAPIKeyProviders {
		t.Fatalf("env defaults not applied: %+v", r.RequestQueue)
	}
	if _, err := h.PatchResilience([]byte(`{"requestQueue":{"maxWaitMs":9000,"autoEnableApiKeyProviders":true}}`)); err != nil {
		t.Fatal(err)
	}
	// A new process with the same env: persisted wins over env, except
	// RATE_LIMIT_AUTO_ENABLE which the guide says wins over the dashboard.
	h2, err := NewHolder(kv, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	r = h2.Resilience()
	if r.RequestQueue.MaxWaitMs != 9000 {
		t.Fatalf("maxWaitMs %d, want persisted 9000", r.RequestQueue.MaxWaitMs)
	}
	if r.RequestQueue.AutoEnableAPIKeyProviders {
		t.Fatal("RATE_LIMIT_AUTO_ENABLE=false must win over the persisted value")
	}
	if r.ModelLockout.BaseCooldownMs != 120000 || r.ModelLockout.MaxCooldownMs != 1800000 || r.ModelLockout.Enabled {
		t.Fatalf("model lockout defaults %+v", r.ModelLockout)
	}
	// Huge values clamp to 24 h.
	r, err = h2.PatchResilience([]byte(`{"requestQueue":{"maxWaitMs":999999999999}}`))
	if err != nil || r.RequestQueue.MaxWaitMs != 24*3600*1000 {
		t.Fatalf("clamp: %d %v", r.RequestQueue.MaxWaitMs, err)
	}
}

func TestResiliencePatchErrorsNameTheField(t *testing.T) {
	h, err := NewHolder(memKV{}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ patch, field, msg string }{
		{`{"requestQueue":{"bogus":1}}`, "requestQueue.bogus", "is not a known setting"},
		{`{"requestQueue":{"maxWaitMs":"x"}}`, "requestQueue.maxWaitMs", "must be a whole number"},
		{`{"requestQueue":{"maxWaitMs":1.5}}`, "requestQueue.maxWaitMs", "must be a whole number"},
		{`{"streamStallCooldown":{"enabled":1}}`, "streamStallCooldown.enabled", "must be true or false"},
		{`{"modelLockout":{"errorCodes":[200]}}`, "modelLockout.errorCodes", "not an HTTP error status"},
		{`{"failover":{"retryMaxHintMs":60001}}`, "failover.retryMaxHintMs", "at most 60000"},
		{`{"failover":{"retryMaxHintMs":-1}}`, "failover.retryMaxHintMs", ""},
		{`{"failover":{"streamContinuation":"yes"}}`, "failover.streamContinuation", "must be true or false"},
	}
	for _, tt := range tests {
		_, err := h.PatchResilience([]byte(tt.patch))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Message, tt.msg) {
			t.Errorf("%s: %v, want %s %q", tt.patch, err, tt.field, tt.msg)
		}
	}
}

// TestFailoverSettings: defaults (5 s in-place hint limit, one retry, streak 3,
// 1 h quota cooldown, continuation on), the accepted boundary, and clamps.
func TestFailoverSettings(t *testing.T) {
	h, err := NewHolder(memKV{}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	f := h.Resilience().Failover
	if f != (Failover{RetryMaxHintMs: 5000, RetriesPerTarget: 1, FailureStreak: 3, QuotaCooldownMs: 3_600_000, StreamContinuation: true}) {
		t.Fatalf("defaults %+v", f)
	}
	r, err := h.PatchResilience([]byte(`{"failover":{"retryMaxHintMs":60000,"failureStreak":1000,"retriesPerTarget":9,"quotaCooldownMs":1,"streamContinuation":false}}`))
	if err != nil {
		t.Fatalf("boundary patch refused: %v", err)
	}
	if f := r.Failover; f.RetryMaxHintMs != 60000 || f.FailureStreak != 100 || f.RetriesPerTarget != 5 || f.QuotaCooldownMs != 1000 || f.StreamContinuation {
		t.Fatalf("after patch %+v, want 60000 / clamped 100, 5, 1000 / off", f)
	}
}

// TestProviderErrorRulesSetting: operator rules are validated field by field,
// replace the whole list, persist, and reload.
func TestProviderErrorRulesSetting(t *testing.T) {
	kv := memKV{}
	h, err := NewHolder(kv, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	good := `{"providerErrorRules":[{"id":"x-quota","provider":"openai","match":{"statuses":[403],"textMarkers":["quota gone"]},"reason":"quota_exhausted","scope":"connection","cooldownMs":60000}]}`
	bad := []struct{ patch, field string }{
		{`{"providerErrorRules":[{"id":"","provider":"openai","match":{"statuses":[403]},"reason":"quota_exhausted","scope":"connection"}]}`, "providerErrorRules[0].id"},
		{`{"providerErrorRules":[{"id":"a","provider":"openai","match":{"statuses":[403]},"reason":"nope","scope":"connection"}]}`, "providerErrorRules[0].reason"},
		{`{"providerErrorRules":[{"id":"a","provider":"openai","match":{"statuses":[403]},"reason":"auth_error","scope":"planet"}]}`, "providerErrorRules[0].scope"},
		{`{"providerErrorRules":[{"id":"a","provider":"openai","match":{},"reason":"auth_error","scope":"model"}]}`, "providerErrorRules[0].match"},
		{`{"providerErrorRules":[{"id":"a","provider":"openai","match":{"statuses":[99]},"reason":"auth_error","scope":"model"}]}`, "providerErrorRules[0].match.statuses"},
		{`{"providerErrorRules":[{"id":"a","provider":"openai","match":{"statuses":[400]},"reason":"auth_error","scope":"model","cooldownMs":-1}]}`, "providerErrorRules[0].cooldownMs"},
		{`{"providerErrorRules":[{"id":"a","provider":"openai","match":{"statuses":[400]},"reason":"auth_error","scope":"model","colour":"red"}]}`, "providerErrorRules[0].colour"},
		{`{"providerErrorRules":[{"id":"a","provider":"p","match":{"statuses":[400]},"reason":"auth_error","scope":"model"},{"id":"A","provider":"p","match":{"statuses":[401]},"reason":"auth_error","scope":"model"}]}`, "providerErrorRules[1].id"},
		{`{"providerErrorRules":{"id":"a"}}`, "providerErrorRules"},
		{`{"featureFlags":{"emergencyFallback":"yes"}}`, "featureFlags.emergencyFallback"},
	}
	for _, b := range bad {
		_, err := h.PatchGeneral([]byte(b.patch))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != b.field {
			t.Errorf("%s: error %v, want a FieldError on %s", b.patch, err, b.field)
		}
	}
	if _, err := h.PatchGeneral([]byte(good)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PatchGeneral([]byte(`{"featureFlags":{"emergencyFallback":true,"emergencyFallbackModel":"ollama/llama3.2"}}`)); err != nil {
		t.Fatal(err)
	}
	h2, err := NewHolder(kv, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	g := h2.General()
	if len(g.ProviderErrorRules) != 1 || g.ProviderErrorRules[0].ID != "x-quota" || g.ProviderErrorRules[0].CooldownMs != 60000 {
		t.Fatalf("rules after reload: %+v", g.ProviderErrorRules)
	}
	if f := g.FeatureFlags; f.EmergencyFallback == nil || !*f.EmergencyFallback || f.EmergencyFallbackModel != "ollama/llama3.2" {
		t.Fatalf("flags after reload: %+v", f)
	}
	if _, err := h2.PatchGeneral([]byte(`{"providerErrorRules":[]}`)); err != nil || len(h2.General().ProviderErrorRules) != 0 {
		t.Fatalf("clearing the list: %v %+v", err, h2.General().ProviderErrorRules)
	}
}

// The request path reads settings as snapshots without a lock or a copy: a
// snapshot taken before a change keeps its values, the next read sees the
// change, and reads race no write (go test -race).
func TestSnapshotsAreReplacedNotChanged(t *testing.T) {
	h, err := NewHolder(memKV{}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	g0, r0 := h.GeneralRef(), h.ResilienceRef()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			_ = h.GeneralRef().MaxAttempts + h.ResilienceRef().Failover.RetriesPerTarget
		}
	}()
	if _, err := h.PatchGeneral([]byte(`{"maxAttempts": 7}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PatchResilience([]byte(`{"failover": {"retriesPerTarget": 3}}`)); err != nil {
		t.Fatal(err)
	}
	<-done
	if g0.MaxAttempts == 7 || r0.Failover.RetriesPerTarget == 3 {
		t.Fatalf("an earlier snapshot changed: maxAttempts %d, retriesPerTarget %d", g0.MaxAttempts, r0.Failover.RetriesPerTarget)
	}
	if g, r := h.GeneralRef(), h.ResilienceRef(); g.MaxAttempts != 7 || r.Failover.RetriesPerTarget != 3 || h.General().MaxAttempts != 7 {
		t.Fatalf("the change is not read: maxAttempts %d, retriesPerTarget %d", g.MaxAttempts, r.Failover.RetriesPerTarget)
	}
}
