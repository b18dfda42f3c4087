package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/verdict"
)

// listRules serves GET /api/rules: every restatement and provider error rule,
// built-in and operator, with its hit count and the catalogue flags that
// decide whether a provider's rules see full text and have their scope honoured.
func (a *API) listRules(w http.ResponseWriter, r *http.Request) {
	type flags struct {
		Provider        string `json:"provider"`
		RuleFullText    bool   `json:"ruleFullText"`
		HonorsRuleScope bool   `json:"honorsRuleScope"`
		EgressBucketed  bool   `json:"egressBucketed"`
	}
	var fl []flags
	for _, p := range a.Catalog.All() {
		if p.RuleFullText || p.HonorsRuleScope || p.EgressBucketed {
			fl = append(fl, flags{p.ID, p.RuleFullText, p.HonorsRuleScope, p.EgressBucketed})
		}
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"items": a.Rules.List(), "providers": fl, "reasons": rules.Reasons})
}

// previewRule serves POST /api/rules/preview: "this sample error would
// become…". Body: {provider, status, body, headers?, rules?}; rules, when
// given, is a draft operator list tried instead of the saved one. Nothing is
// counted or changed.
func (a *API) previewRule(w http.ResponseWriter, r *http.Request) {
	raw, err := httpx.ReadBody(r, managementBodyLimit)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	var in struct {
		Provider string            `json:"provider"`
		Status   int               `json:"status"`
		Body     string            `json:"body"`
		Headers  map[string]string `json:"headers"`
		Rules    []rules.Rule      `json:"rules"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_BODY", "preview body must be {provider, status, body, headers?, rules?}: %s", err.Error()))
		return
	}
	p, ok := a.Catalog.Lookup(in.Provider)
	switch {
	case !ok:
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_PROVIDER", "unknown provider %q", in.Provider).WithParam("provider"))
		return
	case in.Status < 400 || in.Status > 599:
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_STATUS", "status must be an HTTP error status (400-599)").WithParam("status"))
		return
	case len(in.Body) > 64<<10:
		httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_BODY", "body must be at most 64 KiB").WithParam("body"))
		return
	}
	if in.Rules != nil {
		if err := rules.Validate(in.Rules); err != nil {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_RULE", "%s", err.Error()).WithParam("rules"))
			return
		}
	}
	h := http.Header{}
	for k, v := range in.Headers {
		h.Set(k, v)
	}
	res := a.Rules.Preview(verdict.Outcome{Status: in.Status, Header: h, Body: []byte(in.Body), Provider: p.ID, Now: a.Clock.Now()},
		rules.Traits{FullText: p.RuleFullText, HonorsScope: p.HonorsRuleScope}, in.Rules)
	v := res.Verdict
	out := map[string]any{
		"provider": p.ID, "upstreamStatus": in.Status, "status": v.Status, "kind": v.Kind, "code": v.Code,
		"scope": v.Scope, "failover": v.Failover, "leaves": leaves(v), "clientStatus": clientStatus(v),
		"scopeHonoured": res.ScopeHonoured, "message": v.Message,
	}
	if v.ClientRetryAfter > 0 {
		out["clientRetryAfterSeconds"] = httpx.RetryAfterSeconds(v.ClientRetryAfter)
	}
	if v.ModelLock > 0 {
		out["modelLockMs"] = v.ModelLock.Milliseconds()
	}
	if v.FixedCooldown > 0 && v.CoolConnection {
		out["cooldownMs"] = v.FixedCooldown.Milliseconds()
	}
	if res.Restatement != nil {
		out["restatement"] = res.Restatement.ID
	}
	if res.Rule != nil {
		out["rule"], out["ruleSource"] = res.Rule.ID, res.RuleSource
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// leaves names what leaves routing after a verdict.
func leaves(v verdict.Verdict) string {
	switch {
	case v.Terminal != "":
		return "connection (terminal: " + v.Terminal + ")"
	case v.CoolConnection:
		return "connection"
	case v.ModelLock > 0:
		return "model"
	case v.CountsForBreaker && !v.SkipProviderBreaker:
		return "provider breaker evidence"
	}
	return "nothing"
}

// clientStatus is what the client gets when no other target serves.
func clientStatus(v verdict.Verdict) int {
	switch {
	case v.Code == rules.CodeToolCountLimit:
		return http.StatusBadRequest
	case v.ClientRetryAfter > 0, v.Kind == verdict.KindRateLimit, v.Kind == verdict.KindConcurrencyLimit:
		return http.StatusTooManyRequests
	case !v.Failover:
		return v.Status
	case v.Kind == verdict.KindNotFound:
		return http.StatusNotFound
	case v.Kind == verdict.KindTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}
