package routing

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"omniroute/backend/errs"
	"omniroute/backend/routing/strategy"
	"omniroute/backend/store"
)

// comboNamePattern is a combo's name: 1-64 letters, digits, '.', '_', ':' or '-', not starting with a sign.
var comboNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`) })

// Combo input bounds.
const (
	maxComboTargets     = 100
	maxTargetWeight     = 1000
	maxComboDescription = 500
	maxStickyTTLMs      = 24 * 3600 * 1000
	maxRetriesPerTarget = 5
)

// ComboInput is a combo create or update body as decoded (nil: the field
// is absent and keeps its value).
type ComboInput struct {
	Name        *string        `json:"name"`
	Strategy    *string        `json:"strategy"`
	Targets     *[]ComboTarget `json:"targets"`
	Description *string        `json:"description"`
	StickyTTLMs *int64         `json:"stickyTtlMs"`
	MaxRetries  *int           `json:"maxRetriesPerTarget"`
	QuotaShare  *bool          `json:"quotaShare"`
}

// CheckCreate is FIELDS_REQUIRED unless a new combo's input names it and its targets.
func (in ComboInput) CheckCreate() error {
	if in.Name == nil || in.Targets == nil {
		return errs.New(errs.Invalid, "FIELDS_REQUIRED", "name and targets are required")
	}
	return nil
}

// ComboChecks is what validating a combo reads of the gateway's state.
type ComboChecks struct {
	// Existing lists the stored combos; read only when the name is set (an
	// error skips the taken-name check: the store's unique index still holds).
	Existing func() ([]store.Combo, error)
	// Connection reports whether a connection id exists.
	Connection func(id string) bool
	// Routable reports whether some active connection serves a name now.
	Routable func(name string) bool
}

// ComboChecks are the checks of a combo against this registry's connections.
func (r *Registry) ComboChecks(existing func() ([]store.Combo, error)) ComboChecks {
	return ComboChecks{
		Existing:   existing,
		Connection: func(id string) bool { _, ok := r.Get(id); return ok },
		Routable:   func(name string) bool { _, err := r.Resolve(name, Access{}); return err == nil },
	}
}

// cut is s cut at n bytes.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ApplyComboInput validates in and writes it into row (its name, strategy,
// targets as JSON and config as JSON); it returns the warnings to show: a
// target no active connection serves yet, a combo name that shadows a
// served model. Errors carry stable codes and the field as param:
// INVALID_NAME, COMBO_NAME_TAKEN (names are case-insensitive),
// INVALID_STRATEGY, INVALID_TARGETS, INVALID_FIELD. row is left partly
// written on an error.
func ApplyComboInput(row *store.Combo, in ComboInput, ck ComboChecks) ([]string, error) {
	var warnings []string
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		name = strings.TrimPrefix(name, "combo/")
		if !comboNamePattern().MatchString(name) {
			return nil, errs.New(errs.Invalid, "INVALID_NAME", "name must be 1-64 letters, digits, '.', '_', ':' or '-'").WithParam("name")
		}
		if rows, err := ck.Existing(); err == nil {
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
			return nil, errs.New(errs.Invalid, "INVALID_STRATEGY", "unknown strategy %q; see GET /api/combos/strategies", cut(*in.Strategy, 40)).WithParam("strategy")
		}
		row.Strategy = *in.Strategy
	}
	if in.Targets != nil {
		if len(*in.Targets) == 0 || len(*in.Targets) > maxComboTargets {
			return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "a combo needs 1 to %d targets", maxComboTargets).WithParam("targets")
		}
		for i, t := range *in.Targets {
			if strings.TrimSpace(t.Model) == "" {
				return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "targets[%d].model is required (provider/model)", i).WithParam("targets")
			}
			if t.Weight != nil && (*t.Weight < 0 || *t.Weight > maxTargetWeight) {
				return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "targets[%d].weight must be 0 (fallback only) to %d", i, maxTargetWeight).WithParam("targets")
			}
			if t.ConnectionID != "" && !ck.Connection(t.ConnectionID) {
				return nil, errs.New(errs.Invalid, "INVALID_TARGETS", "targets[%d].connectionId names an unknown connection", i).WithParam("targets")
			}
			if !ck.Routable(t.Model) {
				warnings = append(warnings, "target "+t.Model+" has no active connection yet")
			}
		}
		b, _ := json.Marshal(*in.Targets)
		row.Targets = string(b)
	}
	var cfg ComboConfig
	_ = json.Unmarshal([]byte(row.Config), &cfg)
	if in.Description != nil {
		cfg.Description = cut(*in.Description, maxComboDescription)
	}
	if in.StickyTTLMs != nil {
		if *in.StickyTTLMs < 0 || *in.StickyTTLMs > maxStickyTTLMs {
			return nil, errs.New(errs.Invalid, "INVALID_FIELD", "stickyTtlMs must be 0 to %d", maxStickyTTLMs).WithParam("stickyTtlMs")
		}
		cfg.StickyTTLMs = *in.StickyTTLMs
	}
	if in.MaxRetries != nil {
		if *in.MaxRetries < 0 || *in.MaxRetries > maxRetriesPerTarget {
			return nil, errs.New(errs.Invalid, "INVALID_FIELD", "maxRetriesPerTarget must be 0 to %d", maxRetriesPerTarget).WithParam("maxRetriesPerTarget")
		}
		cfg.MaxRetriesPerTarget = in.MaxRetries
	}
	if in.QuotaShare != nil {
		cfg.QuotaShare = *in.QuotaShare
	}
	b, _ := json.Marshal(cfg)
	row.Config = string(b)
	if ck.Routable(row.Name) && !strings.Contains(row.Name, "/") {
		warnings = append(warnings, "combo "+row.Name+" shadows the model of the same name; address the model as provider/model")
	}
	return warnings, nil
}

// FindCombo is the stored combo with this id, or this name (case-insensitive);
// COMBO_NOT_FOUND when none.
func FindCombo(rows []store.Combo, idOrName string) (store.Combo, error) {
	for _, row := range rows {
		if row.ID == idOrName || strings.EqualFold(row.Name, idOrName) {
			return row, nil
		}
	}
	return store.Combo{}, errs.New(errs.NotFound, "COMBO_NOT_FOUND", "combo not found")
}
