package server

import (
	"time"

	"omniroute/backend/config"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/resilience/lockout"
)

// settingsPolicy turns the live resilience settings into each layer's tuning,
// read per decision so a PATCH applies to the next request.
type settingsPolicy struct{ h *config.Holder }

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// CooldownSettings returns the connection cooldown tuning of an auth category.
func (p settingsPolicy) CooldownSettings(category string) cooldown.Settings {
	cc := p.h.ResilienceRef().ConnectionCooldown
	prof := cc.APIKey
	if category == "oauth" {
		prof = cc.OAuth
	}
	return cooldown.Settings{BaseCooldown: ms(prof.BaseCooldownMs), UseUpstreamRetryHints: prof.UseUpstreamRetryHints,
		MaxBackoffSteps: prof.MaxBackoffSteps, MaxHintCooldown: ms(prof.MaxHintCooldownMs),
		QuotaCooldown: ms(p.h.ResilienceRef().Failover.QuotaCooldownMs)}.Normalize()
}

// CooldownOptions returns the cooldown switches.
func (p settingsPolicy) CooldownOptions() cooldown.Options {
	r := p.h.ResilienceRef()
	return cooldown.Options{StallCooldown: r.StreamStallCooldown.Enabled, FailureStreak: r.Failover.FailureStreak}
}

// ProviderCooldownEnabled reports the opt-in provider window gate switch.
func (p settingsPolicy) ProviderCooldownEnabled() bool {
	return p.h.ResilienceRef().ProviderCooldown.Enabled
}

func (p settingsPolicy) breakerProfile(category string) breaker.Profile {
	pb := p.h.ResilienceRef().ProviderBreaker
	var b config.BreakerProfile
	switch category {
	case "oauth":
		b = pb.OAuth
	case "local":
		b = pb.Local
	default:
		b = pb.APIKey
	}
	prof := breaker.DefaultProfile(category)
	prof.FailureThreshold, prof.DegradationThreshold, prof.ResetTimeout = b.FailureThreshold, b.DegradationThreshold, ms(b.ResetTimeoutMs)
	prof.MaxBackoffMultiplier = b.MaxBackoffMultiplier
	prof.OpenByKind = breaker.KindHolds{Server: ms(b.OpenByKindMs.ServerMs), Transport: ms(b.OpenByKindMs.TransportMs), Timeout: ms(b.OpenByKindMs.TimeoutMs)}
	prof.ProbeInterval = breaker.DefaultProbeInterval // a recovered provider is used again within it (issue 40)
	return prof.Normalize()
}

func (p settingsPolicy) windowProfile(category string) breaker.WindowProfile {
	pc := p.h.ResilienceRef().ProviderCooldown
	w := pc.APIKey
	switch category {
	case "oauth":
		w = pc.OAuth
	case "local":
		w = pc.Local
	}
	return breaker.WindowProfile{FailureThreshold: w.FailureThreshold, Window: ms(w.FailureWindowMs), Cooldown: ms(w.CooldownMs)}.Normalize()
}

// LockoutSettings returns the model lockout tuning.
func (p settingsPolicy) LockoutSettings() lockout.Settings {
	m := p.h.ResilienceRef().ModelLockout
	return lockout.Settings{Enabled: m.Enabled, ErrorCodes: m.ErrorCodes, BaseCooldown: ms(m.BaseCooldownMs),
		MaxCooldown: ms(m.MaxCooldownMs), MaxBackoffSteps: m.MaxBackoffSteps, UseExponentialBackoff: m.UseExponentialBackoff}
}

// QueueMaxWait is the request queue's wait budget.
func (p settingsPolicy) QueueMaxWait() time.Duration {
	return ms(p.h.ResilienceRef().RequestQueue.MaxWaitMs)
}
