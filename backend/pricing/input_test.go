package pricing

import (
	"encoding/json"
	"reflect"
	"testing"

	"omniroute/backend/errs"
)

// TestReadOverride: a connection's pricing and flatRate fields as the
// management API takes them — nil leaves a field, null clears it, {} removes
// the prices, a bad field is INVALID_PRICING / INVALID_FLAT_RATE naming it
// and leaves the override as it was.
func TestReadOverride(t *testing.T) {
	yes := true
	stored := Override{FlatRate: &yes, Pricing: map[string]Price{"m": {InputPerMTok: 1, OutputPerMTok: 2}}}
	raw := func(s string) json.RawMessage {
		if s == "" {
			return nil
		}
		return json.RawMessage(s)
	}
	for _, tt := range []struct {
		name          string
		pricing, flat string
		want          Override
		empty         bool
		code, param   string
	}{
		{"nothing given", "", "", stored, false, "", ""},
		{"prices replaced", `{"x":{"inputPerMTok":3,"outputPerMTok":4}}`, "", Override{FlatRate: &yes, Pricing: map[string]Price{"x": {InputPerMTok: 3, OutputPerMTok: 4}}}, false, "", ""},
		{"both cleared", `{}`, `null`, Override{Pricing: map[string]Price{}}, true, "", ""},
		{"prices null", `null`, `null`, Override{}, true, "", ""},
		{"prices not a map", `[1]`, "", stored, false, "INVALID_PRICING", "pricing"},
		{"empty model name", `{"":{"inputPerMTok":1,"outputPerMTok":1}}`, "", stored, false, "INVALID_PRICING", "pricing"},
		{"negative price", `{"x":{"inputPerMTok":-1,"outputPerMTok":1}}`, "", stored, false, "INVALID_PRICING", "pricing"},
		{"price past the bound", `{"x":{"inputPerMTok":1,"outputPerMTok":20000}}`, "", stored, false, "INVALID_PRICING", "pricing"},
		{"flatRate not a boolean", "", `"yes"`, stored, false, "INVALID_FLAT_RATE", "flatRate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadOverride(stored, raw(tt.pricing), raw(tt.flat))
			if tt.code != "" {
				if e := errs.As(err); err == nil || e.Code != tt.code || e.Param != tt.param {
					t.Fatalf("error %v, want %s on %s", err, tt.code, tt.param)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) || got.Empty() != tt.empty {
				t.Fatalf("got %+v (empty %v), want %+v (empty %v)", got, got.Empty(), tt.want, tt.empty)
			}
		})
	}
}
