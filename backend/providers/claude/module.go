package claude

import (
	"encoding/json"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/providers/anthropicapi"
	"omniroute/backend/resilience/wall"
)

// ID is the catalogue id of the Claude subscription; Source is the
// `omniroute import` source reading Claude Code's login (named after the CLI).
const (
	ID     = "claude"
	Source = "claude-code"
)

// Dialect is the Claude subscription: Anthropic Messages with an OAuth
// token, behind the usage wall this package's Executor follows.
const Dialect providers.Dialect = "claude"

// Module is what the gateway knows of the Claude subscription: its row,
// the wall-aware executor (its wall state shown through UsageWall), and the
// two wall opt-ins of a connection's providerSpecificData.
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, Formats: []providers.Format{providers.FormatAnthropic},
		Rows:        []providers.Provider{row()},
		NewExecutor: newExecutor,
		Data: &providers.DataSchema{Fields: []providers.Field{
			{Name: "lowPriorityMode", Type: "boolean", Label: "Low-priority lane",
				Doc: "usage wall: at the 5-hour wall, keep going in the slow lane on this account instead of cooling it"},
			{Name: "autoLimitReset", Type: "boolean", Label: "Auto limit reset",
				Doc: "usage wall: at the wall, claim the weekly session reset first when it is offered"},
		}, Apply: applyData},
		// Imported logins list the account's own models at once (Anthropic
		// renames and retires models faster than a release ships).
		RediscoverOnImport: true,
		Import:             credentialImport(),
	}
}

// applyData stores both wall opt-ins as booleans (false when left out),
// keeping every other key of the object (the imported account's ids); an
// opt-in that is not a boolean is refused.
func applyData(in providers.DataInput) (providers.DataOutput, error) {
	var d map[string]any
	if err := json.Unmarshal([]byte(in.Raw), &d); err != nil || d == nil {
		return providers.DataOutput{}, &providers.FieldError{Field: "providerSpecificData", Code: "INVALID_FIELD", Message: "providerSpecificData must be a JSON object"}
	}
	for _, k := range []string{"lowPriorityMode", "autoLimitReset"} {
		switch v := d[k].(type) {
		case nil:
			d[k] = false
		case bool:
		default:
			return providers.DataOutput{}, &providers.FieldError{Field: "providerSpecificData." + k, Code: "INVALID_FIELD",
				Message: "providerSpecificData." + k + " must be true or false, not " + jsonKind(v)}
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return providers.DataOutput{}, err
	}
	return providers.DataOutput{Data: string(b)}, nil
}

// jsonKind names a decoded JSON value's type.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case []any:
		return "an array"
	}
	return "an object"
}

// newExecutor wraps the Anthropic executor with the usage wall, one wall
// table for the process.
func newExecutor(d providers.ExecDeps) providers.Executor {
	e := New(anthropic.New(d.Client, d.UserAgent), wall.NewTable(), nowFunc(d.Now), NewResetClient(d.Client, d.UserAgent))
	e.Observe, e.OnChange = d.Observe, d.OnChange
	return e
}

// nowFunc is a clock.Clock over a now function.
type nowFunc func() time.Time

func (f nowFunc) Now() time.Time { return f() }

// row is the catalogue row: a Claude.ai login imported from Claude Code,
// priced as the Anthropic API it stands in for.
func row() providers.Provider {
	return providers.Provider{ID: ID, VendorHome: true, Name: "Claude (subscription OAuth)", Category: providers.CategoryOAuth, Format: providers.FormatAnthropic, Dialect: Dialect,
		BaseURL: "https://api.anthropic.com/v1", Aliases: []string{"cc"}, APIOf: anthropicapi.ID, AssistantPrefill: true,
		DefaultModels: []string{"claude-opus-4-5", "claude-opus-4-1", "claude-sonnet-4-5", "claude-sonnet-4", "claude-haiku-4-5", "claude-3-5-haiku-latest"},
		Tools:         true, Vision: true, Reasoning: true,
		// One quota per tier: a 429 on claude-opus-4-1 locks every opus model
		// of the connection (claude-3-opus-20240229 too), not its sonnets.
		QuotaFamily: providers.TierFamily("claude-", "opus", "sonnet", "haiku"),
		OAuth: &providers.OAuth{TokenURL: "https://console.anthropic.com/v1/oauth/token", ClientID: "9d1c250a-e61b-44d9-88ed-5944d1962f5e", ImportSource: Source,
			Models: []string{"claude-opus-4-5", "claude-opus-4-5-20251101", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929",
				"claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-1", "claude-opus-4-1-20250805"}}}
}

// UsageWall is the wall state of t's connection as the dashboard shows it
// (providers.UsageWallReader); ok is false for a target the wall does not apply to.
func (e *Executor) UsageWall(t providers.Target, now time.Time) (map[string]any, bool) {
	if t.Provider.ID != ID {
		return nil, false
	}
	s := e.table.Get(t.ConnectionID)
	ts := func(t time.Time) any {
		if t.IsZero() || !t.After(now) {
			return nil
		}
		return t.UTC().Format(time.RFC3339)
	}
	return map[string]any{
		"lowPriorityMode": t.Account.LowPriorityMode, "autoLimitReset": t.Account.AutoLimitReset,
		"inLane": s.InLane(now), "laneUntil": ts(s.LaneUntil), "lastLaneEnd": s.LastEnd,
		"coolOffUntil": ts(s.CoolOffUntil), "budgetExhaustedUntil": ts(s.BudgetUntil),
		"resetResult": s.ResetResult, "resetNextAt": ts(s.ResetNextAt), "resetBackoffUntil": ts(s.ResetBackoffUntil),
	}, true
}
