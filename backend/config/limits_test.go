package config

import "testing"

// TestHostileInputLimitsBoundaries checks each new limit exactly at and past
// its bounds.
func TestHostileInputLimitsBoundaries(t *testing.T) {
	cases := []struct {
		name  string
		set   func(*General)
		field string // "" = valid
	}{
		{"defaults", func(*General) {}, ""},
		{"body read 1000", func(g *General) { g.BodyReadTimeoutMs = 1000 }, ""},
		{"body read 999", func(g *General) { g.BodyReadTimeoutMs = 999 }, "bodyReadTimeoutMs"},
		{"body read 600000", func(g *General) { g.BodyReadTimeoutMs = 600_000 }, ""},
		{"body read 600001", func(g *General) { g.BodyReadTimeoutMs = 600_001 }, "bodyReadTimeoutMs"},
		{"client write 1000", func(g *General) { g.ClientWriteTimeoutMs = 1000 }, ""},
		{"client write 999", func(g *General) { g.ClientWriteTimeoutMs = 999 }, "clientWriteTimeoutMs"},
		{"client write 600001", func(g *General) { g.ClientWriteTimeoutMs = 600_001 }, "clientWriteTimeoutMs"},
		{"budget 1 MiB", func(g *General) { g.BodyBudgetBytes = 1 << 20 }, ""},
		{"budget 1 MiB - 1", func(g *General) { g.BodyBudgetBytes = 1<<20 - 1 }, "bodyBudgetBytes"},
		{"budget 16 GiB", func(g *General) { g.BodyBudgetBytes = 16 << 30 }, ""},
		{"budget 16 GiB + 1", func(g *General) { g.BodyBudgetBytes = 16<<30 + 1 }, "bodyBudgetBytes"},
	}
	for _, c := range cases {
		g := DefaultGeneral()
		c.set(&g)
		err := g.Validate()
		fe, _ := err.(*FieldError)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (fe == nil || fe.Field != c.field):
			t.Errorf("%s: err %v, want a %s error", c.name, err, c.field)
		}
	}
	d := DefaultGeneral()
	if d.BodyReadTimeoutMs != 30_000 || d.ClientWriteTimeoutMs != 30_000 || d.BodyBudgetBytes != 256<<20 {
		t.Fatalf("defaults changed: %+v", d)
	}
}
