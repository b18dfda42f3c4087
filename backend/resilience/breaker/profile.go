package breaker

import (
	"strconv"
	"strings"
	"time"
)

// Provider categories that select a default Profile / WindowProfile.
const (
	CategoryOAuth  = "oauth"
	CategoryAPIKey = "apikey"
	CategoryLocal  = "local"
)

// Normalize bounds for Profile, so a typo in settings can never disable or wedge a breaker.
const (
	minResetTimeout      = time.Second
	maxResetTimeout      = time.Hour
	minBackoffMultiplier = 1
	maxBackoffMultiplier = 64
)

// Profile is the tuning of one provider breaker: when it degrades, when it opens,
// and how long it stays open.
type Profile struct {
	// FailureThreshold is the counted failure that opens the breaker.
	FailureThreshold int
	// DegradationThreshold is the counted failure that moves CLOSED to DEGRADED;
	// always below FailureThreshold after Normalize (≤0 means "derive from FailureThreshold").
	DegradationThreshold int
	// ResetTimeout is the first OPEN hold before a HALF_OPEN probe is allowed.
	ResetTimeout time.Duration
	// MaxBackoffMultiplier caps the OPEN hold growth over repeated open cycles:
	// hold = ResetTimeout × min(2^(cycles−1), MaxBackoffMultiplier).
	MaxBackoffMultiplier int
	// SuccessesToClose is how many consecutive successes return DEGRADED to CLOSED.
	SuccessesToClose int
	// ProbeInterval caps every OPEN hold: an open breaker lets its HALF_OPEN
	// probe through at most this long after opening (or after the last failed
	// probe), whatever ResetTimeout, OpenByKind and the backoff say, so a
	// provider that recovers is used again within it. 0 leaves the holds uncapped.
	ProbeInterval time.Duration
	// OpenByKind is the first OPEN hold per kind of the failure that opened
	// (or re-opened) the breaker, in place of ResetTimeout (the guide's
	// cooldownByKind, §1). A zero entry — the default for every kind — uses
	// ResetTimeout.
	OpenByKind KindHolds
}

// FailureKind is the class of a counted provider failure: what the breaker
// holds OPEN for (guide §1, cooldownByKind). The names match the classifier's
// verdict kinds that count toward the breaker.
type FailureKind string

// Counted failure kinds. The zero FailureKind ("") is a failure of unknown
// kind (Permit.Failure, RecordFailure): it holds for ResetTimeout.
const (
	FailureServer    FailureKind = "server"    // 408/500/502/503/504/529
	FailureTransport FailureKind = "transport" // reset, refused, DNS, TLS: nothing usable received
	FailureTimeout   FailureKind = "timeout"   // no first byte within the deadline
)

// KindHolds is an OPEN hold per failure kind; zero means "ResetTimeout".
type KindHolds struct {
	Server    time.Duration
	Transport time.Duration
	Timeout   time.Duration
}

// of returns the hold set for kind k (0 when unset or k is unknown).
func (h KindHolds) of(k FailureKind) time.Duration {
	switch k {
	case FailureServer:
		return h.Server
	case FailureTransport:
		return h.Transport
	case FailureTimeout:
		return h.Timeout
	}
	return 0
}

// normalize keeps 0 (unset) and clamps every set hold to [1s, 1h], as ResetTimeout.
func (h KindHolds) normalize() KindHolds {
	for _, d := range []*time.Duration{&h.Server, &h.Transport, &h.Timeout} {
		if *d > 0 {
			*d = clampDur(*d, minResetTimeout, maxResetTimeout)
		} else {
			*d = 0
		}
	}
	return h
}

// DefaultProbeInterval is the ProbeInterval the gateway's breakers run with
// (server policy): the bound on how long a recovered provider stays unused
// (docs/FAILOVER.md "Prompt recovery"). The guide's 30 s / 60 s reset
// timeouts stay what the settings show and what a DEGRADED breaker's quiet
// window is made of; a probe is one request.
const DefaultProbeInterval = 15 * time.Second

// DefaultMaxBackoffMultiplier is 1: a failed HALF_OPEN probe re-opens for one
// ResetTimeout again, not a doubled one, so a provider that recovers is used
// again within one reset timeout (a doubling hold left a recovered provider
// unused for several). A probe is one request per ResetTimeout, cheap enough.
const DefaultMaxBackoffMultiplier = 1

// DefaultProfile returns the built-in profile for a provider category
// ("oauth", "apikey", "local"); any other category gets the "apikey" profile.
func DefaultProfile(category string) Profile {
	switch category {
	case CategoryOAuth:
		return Profile{FailureThreshold: 8, DegradationThreshold: 5, ResetTimeout: 60 * time.Second, MaxBackoffMultiplier: DefaultMaxBackoffMultiplier, SuccessesToClose: 3}
	case CategoryLocal:
		// Degradation is derived (ceil(60% of 2) = 2, kept below the open threshold → 1).
		return Profile{FailureThreshold: 2, DegradationThreshold: 0, ResetTimeout: 15 * time.Second, MaxBackoffMultiplier: DefaultMaxBackoffMultiplier, SuccessesToClose: 3}.Normalize()
	default:
		return Profile{FailureThreshold: 12, DegradationThreshold: 7, ResetTimeout: 30 * time.Second, MaxBackoffMultiplier: DefaultMaxBackoffMultiplier, SuccessesToClose: 3}
	}
}

// Normalize clamps silly values: thresholds ≥ 1, DegradationThreshold below
// FailureThreshold (derived as ceil(60%) when ≤ 0), ResetTimeout in [1s, 1h],
// MaxBackoffMultiplier in [1, 64], SuccessesToClose ≥ 1.
// With FailureThreshold 1 the DEGRADED band is empty: the first failure opens.
func (p Profile) Normalize() Profile {
	if p.FailureThreshold < 1 {
		p.FailureThreshold = 1
	}
	if p.DegradationThreshold <= 0 {
		p.DegradationThreshold = (p.FailureThreshold*60 + 99) / 100
	}
	if p.DegradationThreshold >= p.FailureThreshold {
		p.DegradationThreshold = p.FailureThreshold - 1
	}
	if p.DegradationThreshold < 1 {
		p.DegradationThreshold = 1
	}
	p.ResetTimeout = clampDur(p.ResetTimeout, minResetTimeout, maxResetTimeout)
	if p.MaxBackoffMultiplier < minBackoffMultiplier {
		p.MaxBackoffMultiplier = minBackoffMultiplier
	}
	if p.MaxBackoffMultiplier > maxBackoffMultiplier {
		p.MaxBackoffMultiplier = maxBackoffMultiplier
	}
	if p.SuccessesToClose < 1 {
		p.SuccessesToClose = 1
	}
	if p.ProbeInterval > 0 {
		p.ProbeInterval = clampDur(p.ProbeInterval, minResetTimeout, maxResetTimeout)
	} else {
		p.ProbeInterval = 0
	}
	p.OpenByKind = p.OpenByKind.normalize()
	return p
}

// baseHold is the first OPEN hold after a failure of kind k: its OpenByKind
// entry when set, else ResetTimeout.
func (p Profile) baseHold(k FailureKind) time.Duration {
	if h := p.OpenByKind.of(k); h > 0 {
		return h
	}
	return p.ResetTimeout
}

// openHold is how long the breaker stays OPEN in its cycles-th consecutive open
// cycle after a failure of kind k: baseHold(k) × min(2^(cycles−1),
// MaxBackoffMultiplier), at most ProbeInterval when set.
func (p Profile) openHold(cycles int, k FailureKind) time.Duration {
	h := p.fullHold(cycles, k)
	if p.ProbeInterval > 0 && h > p.ProbeInterval {
		return p.ProbeInterval
	}
	return h
}

// fullHold is openHold without the ProbeInterval cap.
func (p Profile) fullHold(cycles int, k FailureKind) time.Duration {
	if cycles < 1 {
		cycles = 1
	}
	mult := p.MaxBackoffMultiplier
	if cycles-1 < 7 { // 2^7 = 128 > 64, the largest allowed multiplier
		if m := 1 << (cycles - 1); m < mult {
			mult = m
		}
	}
	return p.baseHold(k) * time.Duration(mult)
}

// quietWindow is how long a DEGRADED breaker must go without a counted failure
// before it decays to CLOSED: the longest OPEN hold for the last failure's
// kind k (baseHold(k) × MaxBackoffMultiplier), at least one such hold (guide §1).
func (p Profile) quietWindow(k FailureKind) time.Duration {
	base := p.baseHold(k)
	w := base * time.Duration(p.MaxBackoffMultiplier)
	if w < base {
		w = base
	}
	return w
}

// envCategory pairs a profile category with its environment-variable infix.
type envCategory struct{ category, env string }

// envCategories lists the categories configurable from the environment
// (a function, not a package variable, so there is no shared mutable state).
func envCategories() []envCategory {
	return []envCategory{
		{CategoryOAuth, "OAUTH"},
		{CategoryAPIKey, "API_KEY"},
		{CategoryLocal, "LOCAL"},
	}
}

// ProfilesFromEnv returns the default profiles for "oauth", "apikey" and "local",
// overridden by OMNIROUTE_CIRCUIT_BREAKER_{OAUTH,API_KEY,LOCAL}_{FAILURE_THRESHOLD,
// DEGRADATION_THRESHOLD,RESET_TIMEOUT_MS,MAX_BACKOFF_MULTIPLIER} and, per failure kind,
// …_{SERVER,TRANSPORT,TIMEOUT}_RESET_TIMEOUT_MS; non-positive or unparsable
// values are ignored.
func ProfilesFromEnv(getenv func(string) string) map[string]Profile {
	cats := envCategories()
	out := make(map[string]Profile, len(cats))
	for _, c := range cats {
		p := DefaultProfile(c.category)
		prefix := "OMNIROUTE_CIRCUIT_BREAKER_" + c.env + "_"
		failSet := false
		degradeSet := false
		if v, ok := envPositive(getenv, prefix+"FAILURE_THRESHOLD"); ok {
			p.FailureThreshold = clampInt(v)
			failSet = true
		}
		if v, ok := envPositive(getenv, prefix+"DEGRADATION_THRESHOLD"); ok {
			p.DegradationThreshold = clampInt(v)
			degradeSet = true
		}
		if c.category == CategoryLocal && failSet && !degradeSet {
			p.DegradationThreshold = 0 // local degradation is derived: re-derive it
		}
		if v, ok := envPositive(getenv, prefix+"RESET_TIMEOUT_MS"); ok {
			p.ResetTimeout = msToDuration(v)
		}
		if v, ok := envPositive(getenv, prefix+"MAX_BACKOFF_MULTIPLIER"); ok {
			p.MaxBackoffMultiplier = clampInt(v)
		}
		for _, k := range []struct {
			env  string
			hold *time.Duration
		}{{"SERVER", &p.OpenByKind.Server}, {"TRANSPORT", &p.OpenByKind.Transport}, {"TIMEOUT", &p.OpenByKind.Timeout}} {
			if v, ok := envPositive(getenv, prefix+k.env+"_RESET_TIMEOUT_MS"); ok {
				*k.hold = msToDuration(v)
			}
		}
		out[c.category] = p.Normalize()
	}
	return out
}

// envPositive reads name through getenv and returns it when it is a positive integer.
func envPositive(getenv func(string) string, name string) (int64, bool) {
	if getenv == nil {
		return 0, false
	}
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return 0, false
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}

// clampInt narrows a positive int64 to int without overflow.
func clampInt(v int64) int {
	const maxInt = int64(^uint(0) >> 1)
	if v > maxInt {
		return int(maxInt)
	}
	return int(v)
}

// msToDuration converts milliseconds to a Duration, saturating instead of overflowing.
func msToDuration(ms int64) time.Duration {
	const maxMs = int64(1<<63-1) / int64(time.Millisecond)
	if ms > maxMs {
		ms = maxMs
	}
	return time.Duration(ms) * time.Millisecond
}

// clampDur bounds d to [lo, hi].
func clampDur(d, lo, hi time.Duration) time.Duration {
	if d < lo {
		return lo
	}
	if d > hi {
		return hi
	}
	return d
}
