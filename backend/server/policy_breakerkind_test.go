package server

import (
	"testing"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/resilience/breaker"
)

// mapKV is an in-memory settings store.
type mapKV map[string]string

func (m mapKV) GetValue(ns, key string) (string, bool, error) {
	v, ok := m[ns+"/"+key]
	return v, ok, nil
}
func (m mapKV) SetValue(ns, key, value string) error { m[ns+"/"+key] = value; return nil }

// TestBreakerProfileCarriesOpenByKind: the gateway's breakers take the
// per-failure-kind holds from the settings and keep the 15 s probe interval
// that caps them.
func TestBreakerProfileCarriesOpenByKind(t *testing.T) {
	h, err := config.NewHolder(mapKV{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.PatchResilience([]byte(`{"providerBreaker":{"apikey":{"openByKindMs":{"serverMs":10000,"timeoutMs":40000}}}}`)); err != nil {
		t.Fatal(err)
	}
	p := settingsPolicy{h}.breakerProfile("apikey")
	want := breaker.KindHolds{Server: 10 * time.Second, Timeout: 40 * time.Second}
	if p.OpenByKind != want || p.ProbeInterval != breaker.DefaultProbeInterval {
		t.Fatalf("profile OpenByKind %+v, ProbeInterval %v; want %+v, %v", p.OpenByKind, p.ProbeInterval, want, breaker.DefaultProbeInterval)
	}
	if got := (settingsPolicy{h}).breakerProfile("oauth").OpenByKind; got != (breaker.KindHolds{}) {
		t.Fatalf("oauth OpenByKind = %+v, want unset", got)
	}
}

// TestBreakerProfileCarriesMaxBackoffMultiplier: the setting reaches the
// breakers' profile: a DEGRADED breaker's quiet window is the hold × it.
func TestBreakerProfileCarriesMaxBackoffMultiplier(t *testing.T) {
	h, err := config.NewHolder(mapKV{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if got := (settingsPolicy{h}).breakerProfile("apikey").MaxBackoffMultiplier; got != breaker.DefaultMaxBackoffMultiplier {
		t.Fatalf("default multiplier %d, want %d", got, breaker.DefaultMaxBackoffMultiplier)
	}
	if _, err := h.PatchResilience([]byte(`{"providerBreaker":{"apikey":{"maxBackoffMultiplier":4}}}`)); err != nil {
		t.Fatal(err)
	}
	if got := (settingsPolicy{h}).breakerProfile("apikey").MaxBackoffMultiplier; got != 4 {
		t.Fatalf("multiplier %d after the patch, want 4", got)
	}
}
