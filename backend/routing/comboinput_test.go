package routing

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"omniroute/backend/errs"
	"omniroute/backend/store"
)

func TestApplyComboInput(t *testing.T) {
	sp := func(s string) *string { return &s }
	ip := func(n int) *int { return &n }
	i64 := func(n int64) *int64 { return &n }
	targets := func(ts ...ComboTarget) *[]ComboTarget { return &ts }
	existing := []store.Combo{{ID: "other", Name: "Fast"}, {ID: "self", Name: "mine"}}
	ck := ComboChecks{
		Existing:   func() ([]store.Combo, error) { return existing, nil },
		Connection: func(id string) bool { return id == "c1" },
		Routable:   func(name string) bool { return name == "gpt-5" || name == "shadow" },
	}
	for _, tc := range []struct {
		name     string
		row      store.Combo
		in       ComboInput
		ck       *ComboChecks // nil: ck
		want     store.Combo  // the row after (ID, Name, Strategy, Targets, Config)
		warnings []string
		code     string
		param    string
		msg      string
	}{
		{name: "a new combo", row: store.Combo{ID: "new", Strategy: "priority", Config: "{}"},
			in:   ComboInput{Name: sp("  combo/team "), Targets: targets(ComboTarget{Model: "gpt-5", ConnectionID: "c1", Weight: ip(0)})},
			want: store.Combo{ID: "new", Name: "team", Strategy: "priority", Targets: `[{"model":"gpt-5","connectionId":"c1","weight":0}]`, Config: "{}"}},
		{name: "warn an unserved target", row: store.Combo{ID: "new", Config: "{}"},
			in:       ComboInput{Name: sp("team"), Targets: targets(ComboTarget{Model: "nope"})},
			want:     store.Combo{ID: "new", Name: "team", Targets: `[{"model":"nope"}]`, Config: "{}"},
			warnings: []string{"target nope has no active connection yet"}},
		{name: "warn a shadowed model", row: store.Combo{ID: "new", Config: "{}"}, in: ComboInput{Name: sp("shadow")},
			want:     store.Combo{ID: "new", Name: "shadow", Config: "{}"},
			warnings: []string{"combo shadow shadows the model of the same name; address the model as provider/model"}},
		{name: "config fields kept and set", row: store.Combo{ID: "self", Name: "mine", Config: `{"description":"old","stickyTtlMs":5}`},
			in: ComboInput{Description: sp(strings.Repeat("d", 600)), MaxRetries: ip(5), QuotaShare: func() *bool { b := true; return &b }()},
			want: store.Combo{ID: "self", Name: "mine",
				Config: `{"description":"` + strings.Repeat("d", 500) + `","stickyTtlMs":5,"maxRetriesPerTarget":5,"quotaShare":true}`}},
		{name: "a damaged config starts over", row: store.Combo{ID: "self", Name: "mine", Config: `{`}, in: ComboInput{StickyTTLMs: i64(86_400_000)},
			want: store.Combo{ID: "self", Name: "mine", Config: `{"stickyTtlMs":86400000}`}},
		{name: "keeping its own name in another case", row: store.Combo{ID: "self", Name: "mine", Config: "{}"}, in: ComboInput{Name: sp("MINE")},
			want: store.Combo{ID: "self", Name: "MINE", Config: "{}"}},
		{name: "the name check skipped when the store fails", row: store.Combo{ID: "new", Config: "{}"}, in: ComboInput{Name: sp("fast")},
			ck:   &ComboChecks{Existing: func() ([]store.Combo, error) { return nil, errors.New("db down") }, Routable: ck.Routable},
			want: store.Combo{ID: "new", Name: "fast", Config: "{}"}},
		{name: "name taken", row: store.Combo{ID: "new"}, in: ComboInput{Name: sp("FAST")}, code: "COMBO_NAME_TAKEN", param: "name", msg: `combo "Fast" exists`},
		{name: "bad name", row: store.Combo{ID: "new"}, in: ComboInput{Name: sp("-x")}, code: "INVALID_NAME", param: "name"},
		{name: "name too long", row: store.Combo{ID: "new"}, in: ComboInput{Name: sp(strings.Repeat("a", 65))}, code: "INVALID_NAME", param: "name"},
		{name: "unknown strategy cut", row: store.Combo{ID: "new"}, in: ComboInput{Strategy: sp(strings.Repeat("s", 50))}, code: "INVALID_STRATEGY",
			param: "strategy", msg: `"` + strings.Repeat("s", 40) + `"`},
		{name: "no targets", row: store.Combo{ID: "new"}, in: ComboInput{Targets: targets()}, code: "INVALID_TARGETS", param: "targets", msg: "1 to 100 targets"},
		{name: "too many targets", row: store.Combo{ID: "new"}, in: ComboInput{Targets: func() *[]ComboTarget { ts := make([]ComboTarget, 101); return &ts }()},
			code: "INVALID_TARGETS", param: "targets"},
		{name: "a target without a model", row: store.Combo{ID: "new"}, in: ComboInput{Targets: targets(ComboTarget{Model: "gpt-5"}, ComboTarget{Model: " "})},
			code: "INVALID_TARGETS", param: "targets", msg: "targets[1].model is required"},
		{name: "weight over the bound", row: store.Combo{ID: "new"}, in: ComboInput{Targets: targets(ComboTarget{Model: "gpt-5", Weight: ip(1001)})},
			code: "INVALID_TARGETS", param: "targets", msg: "targets[0].weight must be 0 (fallback only) to 1000"},
		{name: "negative weight", row: store.Combo{ID: "new"}, in: ComboInput{Targets: targets(ComboTarget{Model: "gpt-5", Weight: ip(-1)})},
			code: "INVALID_TARGETS", param: "targets"},
		{name: "unknown connection", row: store.Combo{ID: "new"}, in: ComboInput{Targets: targets(ComboTarget{Model: "gpt-5", ConnectionID: "gone"})},
			code: "INVALID_TARGETS", param: "targets", msg: "targets[0].connectionId names an unknown connection"},
		{name: "sticky over a day", row: store.Combo{ID: "new"}, in: ComboInput{StickyTTLMs: i64(86_400_001)}, code: "INVALID_FIELD", param: "stickyTtlMs",
			msg: "stickyTtlMs must be 0 to 86400000"},
		{name: "negative sticky", row: store.Combo{ID: "new"}, in: ComboInput{StickyTTLMs: i64(-1)}, code: "INVALID_FIELD", param: "stickyTtlMs"},
		{name: "retries over 5", row: store.Combo{ID: "new"}, in: ComboInput{MaxRetries: ip(6)}, code: "INVALID_FIELD", param: "maxRetriesPerTarget",
			msg: "maxRetriesPerTarget must be 0 to 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ck
			if tc.ck != nil {
				c = *tc.ck
			}
			row := tc.row
			warnings, err := ApplyComboInput(&row, tc.in, c)
			if tc.code != "" {
				e := errs.As(err)
				if err == nil || e.Code != tc.code || e.Param != tc.param || !strings.Contains(e.Message, tc.msg) {
					t.Fatalf("err = %+v, want %s on %s with %q", e, tc.code, tc.param, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(warnings, tc.warnings) {
				t.Errorf("warnings %q, want %q", warnings, tc.warnings)
			}
			if row.Config != tc.want.Config {
				// Compare as JSON when both parse (field order is the struct's).
				var a, b map[string]any
				_ = json.Unmarshal([]byte(row.Config), &a)
				_ = json.Unmarshal([]byte(tc.want.Config), &b)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("config %s, want %s", row.Config, tc.want.Config)
				}
			}
			row.Config = tc.want.Config
			if row != tc.want {
				t.Errorf("row %+v, want %+v", row, tc.want)
			}
		})
	}
}

func TestComboCheckCreateAndFind(t *testing.T) {
	name, ts := "x", []ComboTarget{}
	for _, tc := range []struct {
		in ComboInput
		ok bool
	}{
		{ComboInput{Name: &name, Targets: &ts}, true},
		{ComboInput{Name: &name}, false},
		{ComboInput{Targets: &ts}, false},
	} {
		if err := tc.in.CheckCreate(); (err == nil) != tc.ok || err != nil && errs.As(err).Code != "FIELDS_REQUIRED" {
			t.Errorf("CheckCreate(%+v) = %v", tc.in, err)
		}
	}
	rows := []store.Combo{{ID: "id1", Name: "Fast"}, {ID: "id2", Name: "slow"}}
	for _, tc := range []struct{ q, id string }{{"id2", "id2"}, {"fast", "id1"}, {"SLOW", "id2"}, {"nope", ""}, {"", ""}} {
		row, err := FindCombo(rows, tc.q)
		if tc.id == "" {
			if errs.As(err).Code != "COMBO_NOT_FOUND" {
				t.Errorf("FindCombo(%q) = %+v, %v", tc.q, row, err)
			}
			continue
		}
		if err != nil || row.ID != tc.id {
			t.Errorf("FindCombo(%q) = %+v, %v; want %s", tc.q, row, err, tc.id)
		}
	}
}
