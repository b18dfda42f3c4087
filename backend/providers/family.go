package providers

import "strings"

// A quota family is the set of a provider's models that share one account
// quota upstream: a 429, 403 or 402 on one of them locks all of them on that
// connection (the model lockout's quota_family scope, docs/FAILOVER.md).
// A row's QuotaFamily declares its provider's families; the helpers below
// build the usual shapes.

// QuotaFamily is the quota family of provider's model: the row's
// QuotaFamily of the lower-cased model (provider matched case-insensitively,
// aliases included), or the model itself, unchanged, when the provider is
// unknown, declares no families or the model is in none. The wiring place
// hands it to the model lockout table (lockout.NewFamilies).
func (c *Catalog) QuotaFamily(provider, model string) string {
	p, ok := c.Lookup(provider)
	if !ok || p.QuotaFamily == nil {
		return model
	}
	if fam := p.QuotaFamily(strings.ToLower(model)); fam != "" {
		return fam
	}
	return model
}

// PrefixFamily puts every model starting with one of prefixes in the family
// named by that prefix (the first that matches): PrefixFamily("gpt-5") puts
// gpt-5.1-codex and gpt-5-mini in "gpt-5".
func PrefixFamily(prefixes ...string) func(model string) string {
	return func(model string) string {
		for _, p := range prefixes {
			if strings.HasPrefix(model, p) {
				return p
			}
		}
		return ""
	}
}

// TierFamily groups the models starting with prefix by the first of their
// later "-" segments that is one of tiers, into prefix+tier:
// TierFamily("acme-", "big") puts acme-big-2 and acme-3-big-0101 in
// "acme-big"; a model with no tier segment is in none.
func TierFamily(prefix string, tiers ...string) func(model string) string {
	return func(model string) string {
		rest, ok := strings.CutPrefix(model, prefix)
		if !ok {
			return ""
		}
		for _, seg := range strings.Split(rest, "-") {
			for _, tier := range tiers {
				if seg == tier {
					return prefix + tier
				}
			}
		}
		return ""
	}
}

// ReleaseFamily groups the models starting with prefix by their base name:
// trailing release segments ("preview", "latest", "exp" and numeric
// date/version segments) are stripped, keeping at least two segments
// (acme-2.5-pro-preview-05-06 and acme-2.5-pro-002 → acme-2.5-pro). A model
// with nothing to strip is in none (its own family).
func ReleaseFamily(prefix string) func(model string) string {
	return func(model string) string {
		if !strings.HasPrefix(model, prefix) {
			return ""
		}
		segs := strings.Split(model, "-")
		n := len(segs)
		for n > 2 && releaseSegment(segs[n-1]) {
			n--
		}
		if n == len(segs) {
			return ""
		}
		return strings.Join(segs[:n], "-")
	}
}

// releaseSegment reports whether a trailing model-name segment is a release
// marker rather than part of the base model.
func releaseSegment(seg string) bool {
	switch seg {
	case "preview", "latest", "exp":
		return true
	}
	if seg == "" {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}
