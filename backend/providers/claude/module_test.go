package claude_test

import (
	"errors"
	"testing"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/providers/claude"
)

// TestModuleRow: the Claude subscription's row prefills, is served by its
// dialect's executor, stands in for the Anthropic API, and keeps its alias.
func TestModuleRow(t *testing.T) {
	c := providers.NewCatalog().WithModules(claude.Module())
	p, ok := c.Lookup("cc")
	if !ok || p.ID != claude.ID || p.Dialect != claude.Dialect || p.APIOf != "anthropic" || !p.Prefills("claude-sonnet-4-5") ||
		p.Module == nil || !p.Module.RediscoverOnImport || p.OAuth == nil || p.OAuth.ImportSource != claude.Source {
		t.Fatalf("row: %+v", p)
	}
	ex := c.Executors(providers.ExecDeps{Now: time.Now})
	if _, ok := ex[providers.FormatAnthropic][claude.Dialect].(providers.UsageWallReader); !ok {
		t.Fatal("the Claude executor does not show its usage wall")
	}
}

// TestWallOptInsStored: a saved providerSpecificData keeps its other keys
// and stores both wall opt-ins as booleans (false when left out); an opt-in
// that is not a boolean is refused on its field.
func TestWallOptInsStored(t *testing.T) {
	apply := claude.Module().Data.Apply
	for _, c := range []struct{ raw, want string }{
		{`{"accountId":"a","lowPriorityMode":true}`, `{"accountId":"a","autoLimitReset":false,"lowPriorityMode":true}`},
		{`{}`, `{"autoLimitReset":false,"lowPriorityMode":false}`},
		{`{"autoLimitReset":true,"lowPriorityMode":false}`, `{"autoLimitReset":true,"lowPriorityMode":false}`},
	} {
		out, err := apply(providers.DataInput{Raw: c.raw})
		if err != nil || out.Data != c.want || out.APIKeySealed != "" {
			t.Errorf("%s: %q %v, want %s", c.raw, out.Data, err, c.want)
		}
	}
	_, err := apply(providers.DataInput{Raw: `{"autoLimitReset":"yes"}`})
	var fe *providers.FieldError
	if !errors.As(err, &fe) || fe.Field != "providerSpecificData.autoLimitReset" || fe.Code != "INVALID_FIELD" {
		t.Fatalf("a string opt-in: %v", err)
	}
}

// TestUsageWallShown: the wall state is shown for a Claude connection, with
// its opt-ins, and for no other provider's.
func TestUsageWallShown(t *testing.T) {
	c := providers.NewCatalog().WithModules(claude.Module())
	ex := c.Executors(providers.ExecDeps{Now: time.Now})[providers.FormatAnthropic][claude.Dialect].(providers.UsageWallReader)
	p, _ := c.Lookup(claude.ID)
	w, ok := ex.UsageWall(providers.Target{Provider: p, ConnectionID: "c1", Account: providers.Account{LowPriorityMode: true}}, time.Now())
	if !ok || w["lowPriorityMode"] != true || w["autoLimitReset"] != false || w["inLane"] != false {
		t.Fatalf("wall %v %v", w, ok)
	}
	other, _ := c.Lookup("anthropic")
	if _, ok := ex.UsageWall(providers.Target{Provider: other, ConnectionID: "c2"}, time.Now()); ok {
		t.Fatal("a wall shown for the Anthropic API")
	}
}
