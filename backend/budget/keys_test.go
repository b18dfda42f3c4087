package budget

import (
	"encoding/json"
	"testing"

	"omniroute/backend/errs"
	"omniroute/backend/store"
)

// TestReadInput: a key's budget and limits fields as the management API
// takes them — absent leaves the stored value, null removes it, a valid
// object replaces it, anything else is INVALID_BUDGET / INVALID_LIMITS
// naming its field, the row left as it was.
func TestReadInput(t *testing.T) {
	const storedB, storedL = `{"usd":5,"period":"day"}`, `{"rpm":10}`
	for _, tt := range []struct {
		name           string
		budget, limits string // "" : absent
		wantB, wantL   string
		code, param    string
	}{
		{"absent leaves both", "", "", storedB, storedL, "", ""},
		{"null removes", "null", "null", "", "", "", ""},
		{"replaced", `{"tokens":1000,"period":"month"}`, `{"tpm":500}`, `{"tokens":1000,"period":"month"}`, `{"tpm":500}`, "", ""},
		{"empty limits stored as none", "", `{}`, storedB, "", "", ""},
		{"budget not an object", `"ten dollars"`, "", storedB, storedL, "INVALID_BUDGET", "budget"},
		{"budget invalid", `{"usd":-1,"period":"day"}`, "", storedB, storedL, "INVALID_BUDGET", "budget"},
		{"limits not an object", "", `[1]`, storedB, storedL, "INVALID_LIMITS", "limits"},
		{"limits invalid", "", `{"rpm":-3}`, storedB, storedL, "INVALID_LIMITS", "limits"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			row := store.APIKey{Budget: storedB, Limits: storedL}
			raw := func(s string) json.RawMessage {
				if s == "" {
					return nil
				}
				return json.RawMessage(s)
			}
			err := ReadInput(&row, raw(tt.budget), raw(tt.limits))
			if tt.code != "" {
				if e := errs.As(err); err == nil || e.Code != tt.code || e.Param != tt.param {
					t.Fatalf("error %v, want %s on %s", err, tt.code, tt.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if row.Budget != tt.wantB || row.Limits != tt.wantL {
				t.Fatalf("budget %q limits %q, want %q %q", row.Budget, row.Limits, tt.wantB, tt.wantL)
			}
		})
	}
}
