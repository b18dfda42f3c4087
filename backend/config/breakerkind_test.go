package config

import (
	"errors"
	"testing"
)

// TestBreakerOpenByKindSettings: the per-failure-kind OPEN holds default to
// 0 (resetTimeoutMs, the guide's default), come from the environment, persist
// from a patch, and clamp like resetTimeoutMs (0 stays "unset").
func TestBreakerOpenByKindSettings(t *testing.T) {
	h, err := NewHolder(memKV{}, env(map[string]string{"OMNIROUTE_CIRCUIT_BREAKER_OAUTH_TIMEOUT_RESET_TIMEOUT_MS": "7000"}))
	if err != nil {
		t.Fatal(err)
	}
	pb := h.Resilience().ProviderBreaker
	if pb.APIKey.OpenByKindMs != (BreakerKindHolds{}) || pb.Local.OpenByKindMs != (BreakerKindHolds{}) {
		t.Fatalf("default openByKindMs = %+v / %+v, want all 0", pb.APIKey.OpenByKindMs, pb.Local.OpenByKindMs)
	}
	if got := pb.OAuth.OpenByKindMs; got != (BreakerKindHolds{TimeoutMs: 7000}) {
		t.Fatalf("env openByKindMs = %+v, want timeoutMs 7000", got)
	}
	tests := []struct {
		patch string
		want  BreakerKindHolds
	}{
		{`{"providerBreaker":{"apikey":{"openByKindMs":{"serverMs":10000,"transportMs":5000}}}}`, BreakerKindHolds{ServerMs: 10000, TransportMs: 5000}},
		{`{"providerBreaker":{"apikey":{"openByKindMs":{"serverMs":999,"timeoutMs":3600001}}}}`, BreakerKindHolds{ServerMs: 1000, TransportMs: 5000, TimeoutMs: 3600000}},
		{`{"providerBreaker":{"apikey":{"openByKindMs":{"serverMs":0}}}}`, BreakerKindHolds{TransportMs: 5000, TimeoutMs: 3600000}},
	}
	for _, tt := range tests {
		r, err := h.PatchResilience([]byte(tt.patch))
		if err != nil {
			t.Fatalf("%s: %v", tt.patch, err)
		}
		if got := r.ProviderBreaker.APIKey.OpenByKindMs; got != tt.want {
			t.Fatalf("%s: openByKindMs = %+v, want %+v", tt.patch, got, tt.want)
		}
	}
	_, err = h.PatchResilience([]byte(`{"providerBreaker":{"apikey":{"openByKindMs":{"transportMs":-1}}}}`))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "providerBreaker.apikey.openByKindMs.transportMs" {
		t.Fatalf("negative transportMs: %v, want a FieldError on providerBreaker.apikey.openByKindMs.transportMs", err)
	}
}

// TestBreakerMaxBackoffMultiplierSetting: the guide's maxBackoffMultiplier
// (§1: the OPEN hold's growth and a DEGRADED breaker's quiet window) is a
// setting per category: 1 by default, from the environment, persisted from
// a patch, clamped to 1–64.
func TestBreakerMaxBackoffMultiplierSetting(t *testing.T) {
	h, err := NewHolder(memKV{}, env(map[string]string{"OMNIROUTE_CIRCUIT_BREAKER_LOCAL_MAX_BACKOFF_MULTIPLIER": "8"}))
	if err != nil {
		t.Fatal(err)
	}
	pb := h.Resilience().ProviderBreaker
	if pb.OAuth.MaxBackoffMultiplier != 1 || pb.APIKey.MaxBackoffMultiplier != 1 || pb.Local.MaxBackoffMultiplier != 8 {
		t.Fatalf("maxBackoffMultiplier oauth %d apikey %d local %d, want 1, 1 and 8 (env)",
			pb.OAuth.MaxBackoffMultiplier, pb.APIKey.MaxBackoffMultiplier, pb.Local.MaxBackoffMultiplier)
	}
	for _, tt := range []struct {
		patch string
		want  int
	}{
		{`{"providerBreaker":{"apikey":{"maxBackoffMultiplier":4}}}`, 4},
		{`{"providerBreaker":{"apikey":{"maxBackoffMultiplier":65}}}`, 64},
		{`{"providerBreaker":{"apikey":{"maxBackoffMultiplier":0}}}`, 1},
	} {
		r, err := h.PatchResilience([]byte(tt.patch))
		if err != nil {
			t.Fatalf("%s: %v", tt.patch, err)
		}
		if got := r.ProviderBreaker.APIKey.MaxBackoffMultiplier; got != tt.want {
			t.Fatalf("%s: maxBackoffMultiplier = %d, want %d", tt.patch, got, tt.want)
		}
	}
}
