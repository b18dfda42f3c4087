package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/httpx"
	"omniroute/backend/routing"
	"omniroute/backend/routing/strategy"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

var comboNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`) })

type comboInput struct {
	Name        *string                `json:"name"`
	Strategy    *string                `json:"strategy"`
	Targets     *[]routing.ComboTarget `json:"targets"`
	Description *string                `json:"description"`
	StickyTTLMs *int64                 `json:"stickyTtlMs"`
	MaxRetries  *int                   `json:"maxRetriesPerTarget"`
	QuotaShare  *bool                  `json:"quotaShare"`
}

func (a *API) comboRoutes(m *mux.Router) {
	m.HandleFunc("/combos", a.management(a.listCombos)).Methods(http.MethodGet)
	m.HandleFunc("/combos", a.management(a.createCombo)).Methods(http.MethodPost)
	m.HandleFunc("/combos/strategies", a.management(a.listStrategies)).Methods(http.MethodGet)
	m.HandleFunc("/combos/{id}", a.management(a.getCombo)).Methods(http.MethodGet)
	m.HandleFunc("/combos/{id}", a.management(a.updateCombo)).Methods(http.MethodPut, http.MethodPatch)
	m.HandleFunc("/combos/{id}", a.management(a.deleteCombo)).Methods(http.MethodDelete)
	m.HandleFunc("/routing/explain", a.management(a.explain)).Methods(http.MethodGet)
}

func (a *API) listStrategies(w http.ResponseWriter, r *http.Request) {
	desc := map[string]string{}
	for _, n := range strategy.Names() {
		desc[string(n)] = strategy.Describe(n)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"strategies": strategy.Names(), "descriptions": desc})
}

func comboJSON(row store.Combo) map[string]any {
	var targets []routing.ComboTarget
	var cfg routing.ComboConfig
	_ = json.Unmarshal([]byte(row.Targets), &targets)
	_ = json.Unmarshal([]byte(row.Config), &cfg)
	if targets == nil {
		targets = []routing.ComboTarget{}
	}
	return map[string]any{"id": row.ID, "name": row.Name, "strategy": row.Strategy, "targets": targets,
		"description": cfg.Description, "stickyTtlMs": cfg.StickyTTLMs, "maxRetriesPerTarget": cfg.MaxRetriesPerTarget,
		"quotaShare": cfg.QuotaShare, "createdAt": rfc3339(row.CreatedAt), "updatedAt": rfc3339(row.UpdatedAt)}
}

func (a *API) listCombos(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.Combos()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		out = append(out, comboJSON(row))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"combos": out})
}

func (a *API) findCombo(id string) (store.Combo, error) {
	rows, err := a.Store.Combos()
	if err != nil {
		return store.Combo{}, err
	}
	for _, row := range rows {
		if row.ID == id || strings.EqualFold(row.Name, id) {
			return row, nil
		}
	}
	return store.Combo{}, errs.New(errs.NotFound, "COMBO_NOT_FOUND", "combo not found")
}

func (a *API) getCombo(w http.ResponseWriter, r *http.Request) {
	row, err := a.findCombo(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"combo": comboJSON(row)})
}

// applyCombo validates in and writes it into row; it returns warnings to show.
func (a *API) applyCombo(row *store.Combo, in comboInput) ([]string, error) {
	var warnings []string
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		name = strings.TrimPrefix(name, "combo/")
		if !comboNamePattern().MatchString(name) {
			return nil, errs.New(errs.Invalid, "INVALID_NAME", "name must be 1-64 letters, digits, '.', '_', ':' or '-'").WithParam("name")
		}
		if rows, err := a.Store.Combos(); err == nil {
			for _, other := range rows {
				if other.ID != row.ID && strings.EqualFold(other.Name, name) {
					return nil, errs.New(errs.Conflict, "COMBO_NAME_TAKEN", "combo %q exists (names are case-insensitive)", other.Name).WithParam("name")
				}
			}
		}
		row.Name = name
	}
	if in.Strategy != nil {
		if !strategy.Valid(strategy.Name(*in.Strategy)) {
			return nil, errs.New(errs.Invalid, "INVALID_STRATEGY", "unknown strategy %q; see GET /api/combos/strategies", truncate(*in.Strategy, 40)).WithParam("strategy")
		}
		row.Strategy = *in.Strategy
	}
	if in.Targets != nil {
		if len(*in.Targets) == 0 || len(*in.Targets) > 100 {
			return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "a combo needs 1 to 100 targets").WithParam("targets")
		}
		for i, t := range *in.Targets {
			if strings.TrimSpace(t.Model) == "" {
				return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "targets[%d].model is required (provider/model)", i).WithParam("targets")
			}
			if t.Weight != nil && (*t.Weight < 0 || *t.Weight > 1000) {
				return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "targets[%d].weight must be 0 (fallback only) to 1000", i).WithParam("targets")
			}
			if t.ConnectionID != "" {
				if _, ok := a.Engine.Registry().Get(t.ConnectionID); !ok {
					return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "targets[%d].connectionId names an unknown connection", i).WithParam("targets")
				}
			}
			if _, err := a.Engine.Registry().Resolve(t.Model, routing.Access{}); err != nil {
				warnings = append(warnings, "target "+t.Model+" has no active connection yet")
			}
		}
		b, _ := json.Marshal(*in.Targets)
		row.Targets = string(b)
	}
	var cfg routing.ComboConfig
	_ = json.Unmarshal([]byte(row.Config), &cfg)
	if in.Description != nil {
		cfg.Description = truncate(*in.Description, 500)
	}
	if in.StickyTTLMs != nil {
		if *in.StickyTTLMs < 0 || *in.StickyTTLMs > 24*3600*1000 {
			return nil, errs.New(errs.Invalid, "INVALID_FIELD", "stickyTtlMs must be 0 to 86400000").WithParam("stickyTtlMs")
		}
		cfg.StickyTTLMs = *in.StickyTTLMs
	}
	if in.MaxRetries != nil {
		if *in.MaxRetries < 0 || *in.MaxRetries > 5 {
			return nil, errs.New(errs.Invalid, "INVALID_FIELD", "maxRetriesPerTarget must be 0 to 5").WithParam("maxRetriesPerTarget")
		}
		cfg.MaxRetriesPerTarget = in.MaxRetries
	}
	if in.QuotaShare != nil {
		cfg.QuotaShare = *in.QuotaShare
	}
	b, _ := json.Marshal(cfg)
	row.Config = string(b)
	if _, err := a.Engine.Registry().Resolve(row.Name, routing.Access{}); err == nil && !strings.Contains(row.Name, "/") {
		warnings = append(warnings, "combo "+row.Name+" shadows the model of the same name; address the model as provider/model")
	}
	return warnings, nil
}

func (a *API) createCombo(w http.ResponseWriter, r *http.Request) {
	var in comboInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Name == nil || in.Targets == nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "FIELDS_REQUIRED", "name and targets are required"))
		return
	}
	now := a.Clock.Now().UnixMilli()
	row := store.Combo{ID: secrets.RandomID(), Strategy: string(strategy.Priority), Config: "{}", CreatedAt: now, UpdatedAt: now}
	warnings, err := a.applyCombo(&row, in)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Store.CreateCombo(&row); err != nil {
		httpx.WriteError(w, comboConflict(err))
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"combo": comboJSON(row), "warnings": nonNil(warnings)})
}

func comboConflict(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return errs.New(errs.Conflict, "COMBO_NAME_TAKEN", "a combo with this name exists").WithParam("name")
	}
	return err
}

func (a *API) updateCombo(w http.ResponseWriter, r *http.Request) {
	row, err := a.findCombo(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	var in comboInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	warnings, err := a.applyCombo(&row, in)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	row.UpdatedAt = a.Clock.Now().UnixMilli()
	if err := a.Store.SaveCombo(&row); err != nil {
		httpx.WriteError(w, comboConflict(err))
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"combo": comboJSON(row), "warnings": nonNil(warnings)})
}

func (a *API) deleteCombo(w http.ResponseWriter, r *http.Request) {
	row, err := a.findCombo(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Store.DeleteCombo(row.ID); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// mappingReason says in words why a request was routed to another name.
func mappingReason(m *routing.Mapping) string {
	switch m.Source {
	case routing.MapSetting:
		return fmt.Sprintf("no connection serves %q: the agent model map sends the %s family to %q", m.Requested, m.Family, m.Target)
	case routing.MapDefault:
		return fmt.Sprintf("no connection serves %q: the agent model map sends the %s family to the automatic default %q (the first healthy combo, else the first served model)", m.Requested, m.Family, m.Target)
	}
	return fmt.Sprintf("no connection serves %q: routed as %q, without its context suffix", m.Requested, m.Target)
}

// explain answers "what would happen to a request for this model right now":
// the ordered candidates and every excluded target with its reason and time.
func (a *API) explain(w http.ResponseWriter, r *http.Request) {
	model := r.URL.Query().Get("model")
	if model == "" {
		httpx.WriteError(w, errInvalidQuery("model", "model is required"))
		return
	}
	plan, err := a.Engine.Plan(routing.PlanInput{Model: model, SessionKey: r.URL.Query().Get("session"), DryRun: true})
	out := map[string]any{"model": model, "generatedAt": a.Clock.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	if err != nil {
		e := errs.As(err)
		out["error"] = map[string]any{"code": e.Code, "message": e.Message}
		out["candidates"] = []any{}
		httpx.WriteJSON(w, http.StatusOK, out)
		return
	}
	if m := plan.Mapped; m != nil {
		out["agentModelMap"] = map[string]any{"requested": m.Requested, "target": m.Target, "family": m.Family,
			"source": m.Source, "reason": mappingReason(m)}
	}
	if plan.Combo != nil {
		out["combo"] = map[string]any{"id": plan.Combo.ID, "name": plan.Combo.Name, "strategy": plan.Combo.Strategy}
	}
	items := []map[string]any{}
	conns := healthByID(a.HealthReport())
	order := 0
	for _, c := range plan.Candidates {
		if ch, ok := conns[c.Conn.ID]; ok && !ch.Serving {
			// The health model's word wins: a connection it does not call
			// serving (unreachable, key_rejected …) is never "eligible", even
			// though routing would still try it after the others.
			items = append(items, healthExcluded(c, ch, a.Clock.Now()))
			continue
		}
		order++
		why := "first in order: would be tried first"
		if order > 1 {
			why = "fallback if the ones above fail"
		}
		items = append(items, map[string]any{"order": order, "status": "eligible", "connectionId": c.Conn.ID,
			"connectionName": c.Conn.Name, "provider": c.Conn.BreakerKey, "model": c.Model, "reason": why, "remainingMs": 0})
	}
	for _, x := range plan.Excluded {
		name := ""
		if c, ok := a.Engine.Registry().Get(x.ConnectionID); ok {
			name = c.Name
		}
		items = append(items, map[string]any{"order": nil, "status": "excluded", "connectionId": x.ConnectionID, "connectionName": name,
			"provider": x.Provider, "model": x.Model, "reason": x.Reason, "detail": x.Detail, "transient": x.Transient,
			"remainingMs": x.Remaining.Milliseconds()})
	}
	out["candidates"] = items
	httpx.WriteJSON(w, http.StatusOK, out)
}

// healthByID indexes the health model's connections by id.
func healthByID(rep health.Report) map[string]health.ConnHealth {
	out := make(map[string]health.ConnHealth, len(rep.Connections))
	for _, ch := range rep.Connections {
		out[ch.ID] = ch
	}
	return out
}

// healthExcluded is the explain entry of a candidate whose connection the
// health model does not call serving: excluded with reason "health_state",
// detail the state and healthReason the model's sentence, the same shape the
// dashboard gives it.
func healthExcluded(c routing.Candidate, ch health.ConnHealth, now time.Time) map[string]any {
	var remaining time.Duration
	if !ch.Until.IsZero() && ch.Until.After(now) {
		remaining = ch.Until.Sub(now)
	}
	return map[string]any{"order": nil, "status": "excluded", "connectionId": c.Conn.ID, "connectionName": c.Conn.Name,
		"provider": c.Conn.BreakerKey, "model": c.Model, "reason": "health_state", "detail": string(ch.State),
		"healthReason": ch.Reason, "transient": !ch.Until.IsZero(), "remainingMs": remaining.Milliseconds()}
}
