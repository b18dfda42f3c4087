package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/connprobe"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/providers/connfields"
	credredact "omniroute/backend/redact"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// connectionInput is the body of POST/PUT/PATCH /api/providers
// (connfields.Input: the fields, checked and applied there).
type connectionInput = connfields.Input

func (a *API) listCatalog(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Aliases     []string `json:"aliases"`
		Category    string   `json:"category"`
		Format      string   `json:"format"`
		Dialect     string   `json:"dialect"`
		BaseURL     string   `json:"baseUrl"`
		UserDefined bool     `json:"userDefined"`
		// Auth says how the credential is sent (docs/PROVIDERS.md).
		Auth string `json:"auth"`
		// DefaultModels stand in when a connection's upstream cannot list its models.
		DefaultModels []string `json:"defaultModels"`
		NoModelList   bool     `json:"noModelList"`
		// Features of the wire (docs/PROVIDERS.md).
		Tools            bool `json:"tools"`
		Vision           bool `json:"vision"`
		Reasoning        bool `json:"reasoning"`
		AssistantPrefill bool `json:"assistantPrefill"`
		// Provider error rule and egress-bucket flags (docs/RULES.md).
		RuleFullText    bool `json:"ruleFullText"`
		HonorsRuleScope bool `json:"honorsRuleScope"`
		EgressBucketed  bool `json:"egressBucketed"`
		// DataFields are the provider module's providerSpecificData schema ([] : free form).
		DataFields []dataField `json:"dataFields"`
		// KeyField is how a connection form asks for the apiKey.
		KeyField keyField `json:"keyField"`
	}
	var out []entry
	for _, p := range a.Catalog.All() {
		out = append(out, entry{ID: p.ID, Name: p.Name, Aliases: append([]string{}, p.Aliases...), Category: string(p.Category),
			Format: string(p.Format), Dialect: string(p.Dialect), BaseURL: p.BaseURL, UserDefined: p.UserDefined, Auth: p.Auth(),
			DefaultModels: append([]string{}, p.DefaultModels...), NoModelList: p.NoModelList,
			Tools: p.Tools, Vision: p.Vision, Reasoning: p.Reasoning, AssistantPrefill: p.AssistantPrefill,
			RuleFullText: p.RuleFullText, HonorsRuleScope: p.HonorsRuleScope, EgressBucketed: p.EgressBucketed, DataFields: dataFields(p), KeyField: keyFieldOf(p)})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"providers": out})
}

func (a *API) listConnections(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.Connections()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		out = append(out, a.connectionJSON(row))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"connections": out})
}

func (a *API) getConnection(w http.ResponseWriter, r *http.Request) {
	row, err := a.Store.Connection(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"connection": a.connectionJSON(row)})
}

func notFound(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errs.New(errs.NotFound, strings.ToUpper(what)+"_NOT_FOUND", "%s not found", what)
	}
	return err
}

func (a *API) createConnection(w http.ResponseWriter, r *http.Request) {
	var in connectionInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	p, err := a.fields().Provider(in)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	row := connfields.NewRow(p, secrets.RandomID(), a.nextPriority(p.ID), a.Clock.Now())
	if err := a.fields().Apply(&row, in, p, true); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Store.CreateConnection(&row); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := map[string]any{}
	switch plan := connprobe.OnCreate(in.Verify, in.DiscoverModels, in.Models != nil && len(*in.Models) > 0); {
	case plan.Check:
		a.checkOnSave(r.Context(), row.ID, plan.Keep, out)
		if updated, err := a.Store.Connection(row.ID); err == nil {
			row = updated
		}
	case plan.Discover:
		if updated, _, err := a.refreshModels(r.Context(), row.ID); err == nil {
			row = updated
		}
	}
	out["connection"] = a.connectionJSON(row)
	httpx.WriteJSON(w, http.StatusCreated, out)
}

// checkOnSave runs the credential check of a create or an edit
// (connprobe.Prober.RunOnSave) and puts its outcome ("check", and
// "warning" when it failed) into the answer out.
func (a *API) checkOnSave(ctx context.Context, id string, keep bool, out map[string]any) {
	if ch, ok := a.prober().RunOnSave(ctx, id, keep); ok {
		out["check"] = ch
		if ch.Warning != "" {
			out["warning"] = ch.Warning
		}
	}
}

func (a *API) nextPriority(provider string) int {
	rows, _ := a.Store.Connections()
	n := 1
	for _, r := range rows {
		if r.Provider == provider && r.Priority >= n {
			n = r.Priority + 1
		}
	}
	return n
}

func (a *API) updateConnection(w http.ResponseWriter, r *http.Request) {
	row, err := a.Store.Connection(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	var in connectionInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := connfields.SameProvider(in, row); err != nil {
		httpx.WriteError(w, err)
		return
	}
	p, _ := a.Catalog.Lookup(row.Provider)
	if r.Method == http.MethodPatch && in.RateLimitOverrides != nil {
		// PATCH merges the overrides object key by key (null removes a key); PUT replaces it.
		merged, err := connfields.MergeOverrides(row.RateLimitOverrides, *in.RateLimitOverrides)
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		in.RateLimitOverrides = &merged
	}
	before := row
	if err := a.fields().Apply(&row, in, p, false); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.applyPricingInput(row.ID, in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	row.UpdatedAt = a.Clock.Now().UnixMilli()
	if err := a.Store.SaveConnection(&row); err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := map[string]any{}
	if plan := connprobe.OnEdit(in.Verify, before, row); plan.Check {
		a.checkOnSave(r.Context(), row.ID, plan.Keep, out)
		if updated, err := a.Store.Connection(row.ID); err == nil {
			row = updated
		}
	}
	out["connection"] = a.connectionJSON(row)
	httpx.WriteJSON(w, http.StatusOK, out)
}

func (a *API) deleteConnection(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if err := a.Store.DeleteConnection(id); err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	if a.Prefills != nil {
		a.Prefills.Forget(id)
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// fields checks and applies a connection's fields (connfields) on the
// API's catalogue, store and secret box.
func (a *API) fields() connfields.Env {
	return connfields.Env{Catalog: a.Catalog, Connections: a.Store.Connections, Seal: a.Box.Seal, Open: a.Box.Open, Home: a.home}
}

// connectionJSON renders a connection without any secret; live cooldown state
// comes from memory.
func (a *API) connectionJSON(row store.Connection) map[string]any {
	st := routing.CooldownFromRow(row)
	live, ok := a.Engine.Registry().Get(row.ID)
	if ok {
		st = live.Cooldown()
	}
	f := routing.CooldownFields(st)
	if ok {
		f.TestStatus = connprobe.TestStatus(f.TestStatus, live.Reach())
	}
	apiKey, _ := a.Box.Open(row.APIKeyEnc)
	models, discovered := jsonList(row.Models), jsonList(row.DiscoveredModels)
	served := routing.ServedModels(row)
	if served == nil {
		served = []string{}
	}
	out := map[string]any{
		"id": row.ID, "provider": row.Provider, "name": row.Name, "authType": row.AuthType,
		"baseUrl": credredact.URL(row.BaseURL), "prefix": row.Prefix, "priority": row.Priority, "isActive": row.IsActive,
		"maxConcurrent": row.MaxConcurrent, "rateLimitProtection": row.RateLimitProtection, "models": models,
		"rateLimitOverrides": json.RawMessage(row.RateLimitOverrides), "providerSpecificData": providers.PublicData(row.ProviderSpecificData),
		"testStatus": f.TestStatus, "rateLimitedUntil": rfc3339(f.RateLimitedUntil), "backoffLevel": f.BackoffLevel,
		"lastError": f.LastError, "lastErrorType": f.LastErrorType, "lastErrorAt": rfc3339(f.LastErrorAt), "errorCode": f.ErrorCode,
		"apiKeyMasked": secrets.Mask(apiKey), "hasAccessToken": row.AccessTokenEnc != "", "hasRefreshToken": row.RefreshTokenEnc != "",
		"createdAt": rfc3339(row.CreatedAt), "updatedAt": rfc3339(row.UpdatedAt),
		"discoveredModels": discovered, "servedModels": served, "modelsSource": row.ModelsSource,
		"knownModels": routing.KnownModels(row), "hiddenModels": jsonList(row.HiddenModels), "modelAliases": aliasesJSON(row),
		"modelsRefreshedAt": rfc3339(row.ModelsRefreshedAt), "modelsError": row.ModelsError, "modelPrefill": a.modelPrefill(row, served),
		"live": a.liveLimits(row.ID, a.Settings.Resilience().RequestQueue.AutoEnableAPIKeyProviders),
	}
	if ok && live.LoadError != "" { // switched off at load: its credential does not open
		out["loadError"] = live.LoadError
	}
	if a.Pricing != nil { // the connection's prices (COST.md)
		o, _ := a.Pricing.Override(row.ID)
		p := o.Pricing
		if p == nil {
			p = map[string]pricing.Price{}
		}
		out["pricing"], out["flatRate"] = p, a.Pricing.FlatRate(row.ID, row.Provider)
	}
	if row.AuthType == "oauth" {
		access, _ := a.Box.Open(row.AccessTokenEnc)
		out["accessTokenMasked"] = secrets.Mask(access)
		out["expiresAt"] = rfc3339(row.ExpiresAt)
		if ok {
			for k, v := range a.subscriptionJSON(live, a.Clock.Now()) {
				out[k] = v
			}
		}
	}
	return out
}

// aliasesJSON is the connection's aliases, {} when it has none.
func aliasesJSON(row store.Connection) map[string]string {
	if m := routing.ModelAliases(row); m != nil {
		return m
	}
	return map[string]string{}
}

func jsonList(s string) []string {
	var out []string
	_ = json.Unmarshal([]byte(s), &out)
	if out == nil {
		out = []string{}
	}
	return out
}

func rfc3339(ms int64) any {
	if ms <= 0 {
		return nil
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// testConnection checks a connection's credentials step by step: reach, auth,
// the model list (GET /models, stored as model discovery) and one minimal
// completion on its first served model, each with the upstream's status and
// message. A 401/403 makes the connection key_rejected.
func (a *API) testConnection(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if _, ok := a.Engine.Registry().Get(id); !ok {
		httpx.WriteError(w, errs.New(errs.NotFound, "CONNECTION_NOT_FOUND", "connection not found"))
		return
	}
	start := time.Now()
	ch, res, err := a.checkConnection(r.Context(), id)
	latency := time.Since(start).Milliseconds()
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	row, err := a.Store.Connection(id)
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	out := map[string]any{"ok": ch.OK, "latencyMs": latency, "models": routing.ServedModels(row), "modelsSource": row.ModelsSource,
		"steps": ch.Steps, "rejected": ch.Rejected}
	// The prefill probe runs on this explicit Test only (not on create or
	// edit): one request per model the check completed on.
	if p, ran := a.prober().Prefill(r.Context(), id, ch); ran {
		out["prefill"] = p
	}
	if ch.Warning != "" {
		out["warning"] = ch.Warning
	}
	// status / error / errorCode: the first failed step's (the model list's
	// own, when only discovery failed).
	if s, failed := ch.Failed(); failed {
		out["error"] = s.Step + ": " + s.Message
		if s.Status != 0 {
			out["status"] = s.Status
		}
	}
	if res.Err != nil {
		out["errorCode"] = res.Err.Code
	}
	if _, failed := out["error"]; !failed {
		out["status"] = http.StatusOK
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// refreshModelsRoute serves POST /api/providers/{id}/models/refresh: ask the
// upstream again and store what it answers (or the catalogue default).
func (a *API) refreshModelsRoute(w http.ResponseWriter, r *http.Request) {
	row, res, err := a.refreshModels(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	out := map[string]any{"ok": res.Err == nil, "connection": a.connectionJSON(row)}
	if res.Err != nil {
		out["error"] = map[string]any{"code": res.Err.Code, "message": res.Err.Message, "status": res.Err.Status}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}
