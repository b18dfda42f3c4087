package config

import "testing"

// TestReloadFollowsAnotherWriter: two holders over one store (two instances
// sharing a database); Reload makes the first see the second's patches, calls
// the resilience listeners only when the resilience settings changed, and
// keeps the current settings when the stored ones are unreadable.
func TestReloadFollowsAnotherWriter(t *testing.T) {
	kv := memKV{}
	a, err := NewHolder(kv, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewHolder(kv, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	a.OnResilienceChange(func(Resilience) { calls++ })

	if _, err := b.PatchGeneral([]byte(`{"maxAttempts":7}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if a.General().MaxAttempts != 7 || calls != 0 {
		t.Fatalf("after a general patch: maxAttempts %d, resilience listeners called %d times (want 7, 0)", a.General().MaxAttempts, calls)
	}
	if _, err := b.PatchResilience([]byte(`{"requestQueue":{"maxWaitMs":9000}}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if a.Resilience().RequestQueue.MaxWaitMs != 9000 || calls != 1 {
		t.Fatalf("after a resilience patch: maxWaitMs %d, listeners %d (want 9000, 1)", a.Resilience().RequestQueue.MaxWaitMs, calls)
	}
	kv["settings/general"] = "{not json"
	if err := a.Reload(); err == nil {
		t.Fatal("unreadable settings reloaded")
	}
	if a.General().MaxAttempts != 7 {
		t.Fatalf("a failed reload changed the settings: %+v", a.General())
	}
}
