package rules

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/resilience/verdict"
)

// Traits are what the provider catalogue says about a provider's rules.
type Traits struct {
	// FullText lets rules match text markers against the whole error text;
	// otherwise they see only the structured error (code and type).
	FullText bool
	// HonorsScope makes a rule's declared scope act (model lock, connection
	// cooldown, provider breaker); otherwise the scope is informative only.
	HonorsScope bool
}

// Source says where a rule came from.
const (
	SourceBuiltin  = "builtin"
	SourceOperator = "operator"
)

// Engine runs restatement and provider error rules. The built-in tables are
// fixed at construction; the operator's rules are read through a function on
// every call, so a settings change applies to the next request. Hit counts
// live in memory.
type Engine struct {
	restate  []Restatement
	builtin  []Rule
	operator func() []Rule

	mu   sync.Mutex
	hits map[string]int64
}

// New returns an engine over the provider modules' restatements and rules
// (Builtin) and the operator's rules (operator may be nil).
func New(operator func() []Rule, restate []Restatement, modules ...Rule) *Engine {
	if operator == nil {
		operator = func() []Rule { return nil }
	}
	return &Engine{restate: restate, builtin: Builtin(modules...), operator: operator, hits: map[string]int64{}}
}

// Result is how one error was judged: the verdict and the rules that shaped it.
type Result struct {
	Verdict verdict.Verdict
	// Restatement is the status correction applied, if any.
	Restatement *Restatement
	// Rule is the provider error rule applied, if any, and its source.
	Rule       *Rule
	RuleSource string
	// ScopeHonoured reports whether the rule's scope acted (catalogue flag or operator rule).
	ScopeHonoured bool
}

// Classify runs both stages on one upstream error and counts the hits.
func (e *Engine) Classify(o verdict.Outcome, t Traits) verdict.Verdict {
	return e.judge(o, t, true).Verdict
}

// Preview runs both stages without counting hits: "this sample error would become…".
// ops, when non-nil, stands in for the operator's saved rules (a draft list
// the operator is about to save).
func (e *Engine) Preview(o verdict.Outcome, t Traits, ops []Rule) Result {
	if o.Err != nil || (o.Status >= 200 && o.Status < 300) {
		return Result{Verdict: verdict.Classify(o)}
	}
	if ops == nil {
		ops = e.operator()
	}
	return e.run(o, t, ops, false, false)
}

// ClassifyStreamError judges an error the upstream sent inside a 200 stream
// (data is the event's JSON). Restatements and rules apply as for an HTTP
// error; a status carried in the event (error.status, status, or a numeric
// error.code in 400..599) is used, and with none a restatement's fromStatuses
// are not required. ok is false when no rule or restatement matched: the
// caller keeps its own stream-error verdict.
func (e *Engine) ClassifyStreamError(provider string, data []byte, now time.Time, t Traits) (verdict.Verdict, bool) {
	status := embeddedStatus(data)
	res := e.run(verdict.Outcome{Status: status, Body: data, Provider: provider, Now: now}, t, e.operator(), true, true)
	if res.Restatement == nil && res.Rule == nil {
		return verdict.Verdict{}, false
	}
	return res.Verdict, true
}

// embeddedStatus is the HTTP-like status an in-stream error event carries, or 0.
func embeddedStatus(data []byte) int {
	for _, p := range [...]string{"error.status", "status", "error.code", "code", "status_code"} {
		r := gjson.GetBytes(data, p)
		n := -1
		switch r.Type {
		case gjson.Number:
			n = int(r.Int())
		case gjson.String:
			if len(r.Str) == 3 {
				if v, err := strconv.Atoi(r.Str); err == nil {
					n = v
				}
			}
		}
		if n >= 400 && n <= 599 {
			return n
		}
	}
	return 0
}

func (e *Engine) judge(o verdict.Outcome, t Traits, count bool) Result {
	if o.Err != nil || (o.Status >= 200 && o.Status < 300) {
		return Result{Verdict: verdict.Classify(o)}
	}
	return e.run(o, t, e.operator(), count, false)
}

// run is the two stages. inStream: the status may be 0 (unknown), and the
// base verdict for an unmatched in-stream error is left to the caller.
func (e *Engine) run(o verdict.Outcome, t Traits, ops []Rule, count, inStream bool) Result {
	provider := strings.ToLower(o.Provider)
	full := errorText(o.Body)
	var res Result

	// Stage 1: restatement (built-in only: it corrects a provider's lie).
	status := o.Status
	for i := range e.restate {
		r := &e.restate[i]
		if r.Provider != provider || !(slices.Contains(r.FromStatuses, status) || inStream && status == 0) {
			continue
		}
		if anyMarker(full, r.TextMarkers) && !anyMarker(full, r.ExcludeMarkers) {
			res.Restatement = r
			status = r.ToStatus
			break
		}
	}
	co := o
	co.Status = status
	if inStream && status == 0 {
		co.Status = 502 // an in-stream error with no status: judged as a bad gateway answer
	}
	v := verdict.Classify(co)
	ruleStatus := co.Status
	if inStream && status == 0 {
		ruleStatus = 0
	}
	if res.Restatement != nil {
		v.RestatedFrom = o.Status
		if v.RestatedFrom == 0 {
			v.RestatedFrom = 200 // an error inside a 200 stream
		}
		v.Rule = res.Restatement.ID
		v.ClientRetryAfter = v.RetryAfter
		if v.ClientRetryAfter <= 0 {
			v.ClientRetryAfter = time.Duration(res.Restatement.DefaultRetryAfterMs) * time.Millisecond
		}
	}

	// Stage 2: provider error rules, the operator's first.
	opForProvider := false
	for _, r := range ops {
		if strings.ToLower(r.Provider) == provider {
			opForProvider = true
			break
		}
	}
	text := structuredText(o.Body)
	if t.FullText || opForProvider {
		text = full
	}
	codes := errorCodes(o.Body)
	pick := func(list []Rule, src string) bool {
		for i := range list {
			r := &list[i]
			if r.Provider == AnyProvider && r.matches(ruleStatus, codes, full) ||
				strings.ToLower(r.Provider) == provider && r.matches(ruleStatus, codes, text) {
				res.Rule, res.RuleSource = r, src
				return true
			}
		}
		return false
	}
	if !pick(ops, SourceOperator) {
		pick(e.builtin, SourceBuiltin)
	}
	if res.Rule != nil {
		res.ScopeHonoured = t.HonorsScope || res.RuleSource == SourceOperator
		baseKind := v.Kind
		v = apply(v, res.Rule, res.ScopeHonoured)
		if v.Kind != baseKind {
			v.Message = verdict.Message(v.Kind, v.Status, o.Body, o.Secrets...)
		}
	}
	if res.Restatement != nil && v.Kind == verdict.KindQuota {
		v.Code = verdict.CodeQuotaRestated
	}
	res.Verdict = v
	if count {
		e.mu.Lock()
		if res.Restatement != nil {
			e.hits[SourceBuiltin+":"+res.Restatement.ID]++
		}
		if res.Rule != nil {
			e.hits[res.RuleSource+":"+res.Rule.ID]++
		}
		e.mu.Unlock()
	}
	return res
}

// errorText is the lower-case text markers are matched against: the raw
// body, and when it is JSON with escapes (many encoders write non-ASCII text
// as \uXXXX) its decoded string values too, so "\u989d\u5ea6\u4e0d\u8db3"
// matches "额度不足" as the upstream meant it.
func errorText(body []byte) string {
	raw := strings.ToLower(string(body))
	if !bytes.Contains(body, []byte(`\`)) || !gjson.ValidBytes(body) {
		return raw
	}
	var b strings.Builder
	b.WriteString(raw)
	var walk func(r gjson.Result)
	walk = func(r gjson.Result) {
		switch {
		case r.Type == gjson.String:
			b.WriteByte('\n')
			b.WriteString(strings.ToLower(r.Str))
		case r.IsObject() || r.IsArray():
			r.ForEach(func(k, v gjson.Result) bool {
				if k.Type == gjson.String && strings.Contains(k.Raw, `\`) {
					b.WriteByte('\n')
					b.WriteString(strings.ToLower(k.Str))
				}
				walk(v)
				return true
			})
		}
	}
	walk(gjson.ParseBytes(body))
	return b.String()
}

// matches reports whether the rule applies. status 0 is an in-stream error
// that carried no status: the status criterion is waived for rules that also
// name codes or text, and a rule that names only statuses never matches it.
func (r *Rule) matches(status int, codes []string, text string) bool {
	m := r.Match
	if status == 0 && len(m.Codes) == 0 && len(m.TextMarkers) == 0 {
		return false
	}
	if status != 0 && len(m.Statuses) > 0 && !slices.Contains(m.Statuses, status) {
		return false
	}
	if len(m.Codes) > 0 && !slices.ContainsFunc(m.Codes, func(c string) bool {
		return slices.ContainsFunc(codes, func(got string) bool { return strings.EqualFold(got, c) })
	}) {
		return false
	}
	if len(m.TextMarkers) > 0 && !anyMarker(text, m.TextMarkers) {
		return false
	}
	return !anyMarker(text, m.ExcludeMarkers)
}

// CodeToolCountLimit is the verdict code of a "too many tools" refusal.
const CodeToolCountLimit = "UPSTREAM_TOOL_COUNT_LIMIT"

// kindOf maps a rule reason to a verdict kind.
func kindOf(reason string) verdict.Kind {
	switch reason {
	case "quota_exhausted":
		return verdict.KindQuota
	case "rate_limit_exceeded":
		return verdict.KindRateLimit
	case ReasonConcurrencyLimited, ReasonConcurrencyLimitOld:
		return verdict.KindConcurrencyLimit
	case "auth_error":
		return verdict.KindAuth
	case "model_access_denied":
		return verdict.KindForbidden
	case "server_error":
		return verdict.KindServer
	case "not_found":
		return verdict.KindNotFound
	default:
		return verdict.KindBadRequest
	}
}

// apply turns the rule into the verdict, keeping the status, hints and
// message the classifier read from the answer.
func apply(base verdict.Verdict, r *Rule, honoured bool) verdict.Verdict {
	v := verdict.ForKind(kindOf(r.Reason))
	v.Status, v.Message, v.RetryAfter, v.HintSource = base.Status, base.Message, base.RetryAfter, base.HintSource
	v.RestatedFrom, v.ClientRetryAfter = base.RestatedFrom, base.ClientRetryAfter
	if v.Kind == verdict.KindConcurrencyLimit {
		// As the classifier's: 1 s (or the hint), the backoff level kept.
		v.FixedCooldown = verdict.ConcurrencyCooldown(base.RetryAfter)
	}
	if base.Rule != "" {
		v.Rule = base.Rule + ">" + r.ID
	} else {
		v.Rule = r.ID
	}
	if r.Reason == "tool_count_limit" {
		// This request carries more tools than the target takes: another
		// target may take them; nothing is cooled or locked.
		v.Code, v.Failover = CodeToolCountLimit, true
		return v
	}
	cd := time.Duration(r.CooldownMs) * time.Millisecond
	if !honoured {
		// The scope is a label only: the kind's own scope and flags stand.
		if cd > 0 && v.CoolConnection {
			v.FixedCooldown = cd
		}
		return v
	}
	switch r.Scope {
	case ScopeModel:
		v.Scope, v.CoolConnection, v.Terminal = verdict.ScopeModel, false, ""
		v.ModelLock = cd
		if v.ModelLock <= 0 && base.RetryAfter > 0 && base.RetryAfter <= maxRuleCooldownMs*time.Millisecond {
			v.ModelLock = base.RetryAfter // the upstream said when the model is back (a quota's reset)
		}
		if v.ModelLock <= 0 {
			v.ModelLock = defaultModelLockMs * time.Millisecond
		}
		v.SkipProviderBreaker, v.CountsForBreaker = true, false
	case ScopeConnection:
		// Never terminal from a rule: the connection recovers by itself.
		v.Scope, v.CoolConnection, v.Terminal = verdict.ScopeConnection, true, ""
		v.SkipProviderBreaker, v.CountsForBreaker = true, false
		if cd > 0 {
			v.FixedCooldown = cd
		}
	case ScopeProvider:
		v.Scope, v.CoolConnection, v.Terminal = verdict.ScopeProvider, false, ""
		v.CountsForBreaker, v.SkipProviderBreaker = true, false
	}
	if v.Kind != verdict.KindBadRequest {
		v.Failover = true
	}
	return v
}

// structuredText is what a rule sees of a provider not marked full-text: the
// error's code and type, never its message.
func structuredText(body []byte) string {
	return strings.ToLower(strings.Join(errorCodes(body), " "))
}

// errorCodes are the provider's structured error identifiers.
func errorCodes(body []byte) []string {
	if !gjson.ValidBytes(body) {
		return nil
	}
	var out []string
	// Google's google.rpc.ErrorInfo reason (QUOTA_EXHAUSTED, API_KEY_INVALID, …) is one too.
	for _, p := range [...]string{"error.code", "code", "error.type", "type", "error.status", "base_resp.status_code", "0.error.status",
		`error.details.#(reason!="").reason`} {
		r := gjson.GetBytes(body, p)
		if (r.Type == gjson.String || r.Type == gjson.Number) && strings.TrimSpace(r.String()) != "" {
			out = append(out, strings.TrimSpace(r.String()))
		}
	}
	return out
}

// Listed is one rule as the Rules page shows it.
type Listed struct {
	Kind        string       `json:"kind"` // "restatement" or "rule"
	Source      string       `json:"source"`
	ID          string       `json:"id"`
	Provider    string       `json:"provider"`
	Hits        int64        `json:"hits"`
	Restatement *Restatement `json:"restatement,omitempty"`
	Rule        *Rule        `json:"rule,omitempty"`
}

// List returns every restatement and rule with its hit count, in the order
// they are tried: restatements, then operator rules, then built-in rules.
func (e *Engine) List() []Listed {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Listed
	for i := range e.restate {
		r := e.restate[i]
		out = append(out, Listed{Kind: "restatement", Source: SourceBuiltin, ID: r.ID, Provider: r.Provider,
			Hits: e.hits[SourceBuiltin+":"+r.ID], Restatement: &r})
	}
	for _, r := range e.operator() {
		r := r
		out = append(out, Listed{Kind: "rule", Source: SourceOperator, ID: r.ID, Provider: r.Provider,
			Hits: e.hits[SourceOperator+":"+r.ID], Rule: &r})
	}
	for i := range e.builtin {
		r := e.builtin[i]
		out = append(out, Listed{Kind: "rule", Source: SourceBuiltin, ID: r.ID, Provider: r.Provider,
			Hits: e.hits[SourceBuiltin+":"+r.ID], Rule: &r})
	}
	return out
}
