package lockout

import "strings"

// Scope is how wide a model lockout reaches on one connection.
type Scope string

// Lockout scopes.
const (
	// ScopeExact locks only the provider/connection/model tuple (key
	// "provider:conn:exact:model"). It is the scope of transport and server failures.
	ScopeExact Scope = "exact"
	// ScopeModel locks the model on the connection (key "provider:conn:model"). It is
	// the scope of a 404: the model is missing there.
	ScopeModel Scope = "model"
	// ScopeQuotaFamily locks every model of the model's quota family on the connection
	// (key "provider:conn:family:<family>"). It is the scope of quota and permission
	// signals (429 / 403 / 402).
	ScopeQuotaFamily Scope = "quota_family"
)

// Valid reports whether s is one of ScopeExact, ScopeModel or ScopeQuotaFamily.
func (s Scope) Valid() bool {
	switch s {
	case ScopeExact, ScopeModel, ScopeQuotaFamily:
		return true
	}
	return false
}

// ResolveScope picks the key a failure with this upstream status locks: 429, 403
// and 402 (quota / permission) lock the quota family; 404 locks the model; any other
// status — 5xx, the gateway's own synthesised 502, 0 for a transport failure, 400 —
// locks only the exact tuple, because a bad response from one model is no evidence
// about the account's quota. A non-empty explicit scope always wins; an explicit
// value that is not a known Scope resolves to ScopeExact, the narrowest lock.
func ResolveScope(status int, explicit Scope) Scope {
	if explicit != "" {
		if explicit.Valid() {
			return explicit
		}
		return ScopeExact
	}
	switch status {
	case 429, 403, 402:
		return ScopeQuotaFamily
	case 404:
		return ScopeModel
	}
	return ScopeExact
}

// familyRule maps a lower-cased model to its family; ok is false when the rule
// does not apply and the model is its own family.
type familyRule func(model string) (family string, ok bool)

// familyRules is the immutable provider → quota-family rule table (canonical
// provider ids and their catalogue aliases, lower case).
var familyRules = map[string]familyRule{
	"codex":      gpt5Family,
	"cx":         gpt5Family,
	"openai":     gpt5Family,
	"oai":        gpt5Family,
	"gemini":     geminiFamily,
	"google":     geminiFamily,
	"claude":     claudeFamily,
	"cc":         claudeFamily,
	"anthropic":  claudeFamily,
	"claude-api": claudeFamily,
	"glm":        glmFamily,
	"zai":        glmFamily,
	"zhipu":      glmFamily,
}

// QuotaFamily maps a provider's model to its quota family key, the name a
// ScopeQuotaFamily lock is stored under:
//
//   - codex, openai: every gpt-5* model → "gpt-5" (a 429 on gpt-5.1-codex locks
//     every gpt-5* model of that connection);
//   - gemini: trailing "-preview", "-latest", "-exp" and numeric date/version
//     segments are stripped (gemini-2.5-pro-preview-05-06 → gemini-2.5-pro,
//     gemini-1.5-pro-002 → gemini-1.5-pro), keeping at least two segments;
//   - claude, anthropic: a model with an opus / sonnet / haiku segment →
//     "claude-opus" / "claude-sonnet" / "claude-haiku" (claude-opus-4-1 and
//     claude-3-opus-20240229 alike);
//   - glm: glm-4.5* → "glm-4.5", glm-4.6* → "glm-4.6";
//   - anything else: the model itself.
//
// Providers match case-insensitively, including their catalogue aliases (cx, oai,
// google, cc, claude-api, zai, zhipu). Recognised families are lower case; an
// unrecognised model is returned unchanged.
func QuotaFamily(provider, model string) string {
	rule, ok := familyRules[strings.ToLower(provider)]
	if !ok {
		return model
	}
	if fam, ok := rule(strings.ToLower(model)); ok {
		return fam
	}
	return model
}

// gpt5Family puts every gpt-5* model in "gpt-5".
func gpt5Family(model string) (string, bool) {
	if strings.HasPrefix(model, "gpt-5") {
		return "gpt-5", true
	}
	return "", false
}

// geminiFamily strips preview/latest/exp and numeric suffix segments.
func geminiFamily(model string) (string, bool) {
	if !strings.HasPrefix(model, "gemini-") {
		return "", false
	}
	segs := strings.Split(model, "-")
	n := len(segs)
	for n > 2 && strippableGeminiSegment(segs[n-1]) {
		n--
	}
	if n == len(segs) {
		return "", false
	}
	return strings.Join(segs[:n], "-"), true
}

// strippableGeminiSegment reports whether a trailing model-name segment is a
// release marker rather than part of the base model.
func strippableGeminiSegment(seg string) bool {
	switch seg {
	case "preview", "latest", "exp":
		return true
	}
	return isDigits(seg)
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// claudeFamily groups claude models by tier.
func claudeFamily(model string) (string, bool) {
	if !strings.HasPrefix(model, "claude-") {
		return "", false
	}
	for _, seg := range strings.Split(model, "-")[1:] {
		switch seg {
		case "opus", "sonnet", "haiku":
			return "claude-" + seg, true
		}
	}
	return "", false
}

// glmFamily groups glm-4.5* and glm-4.6* under their base version.
func glmFamily(model string) (string, bool) {
	for _, base := range [...]string{"glm-4.5", "glm-4.6"} {
		if strings.HasPrefix(model, base) {
			return base, true
		}
	}
	return "", false
}
