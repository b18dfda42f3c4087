package routing

import (
	"testing"

	"omniroute/backend/providers/registry"
	"omniroute/backend/store"
)

// TestAdoptCooldowns: another instance's cooldown columns replace a
// connection's in-memory state when they differ (keeping the in-memory failure
// streak); equal columns and unknown connections change nothing.
func TestAdoptCooldowns(t *testing.T) {
	row := store.Connection{ID: "c1", Provider: "openai", Name: "a", AuthType: "apikey", IsActive: true, Models: "[]",
		DiscoveredModels: "[]", ProviderSpecificData: "{}", RateLimitOverrides: "{}", TestStatus: "active"}
	reg := NewRegistry(registry.Catalog(func(string) string { return "" }))
	if err := reg.Load([]store.Connection{row}, plainBox{}); err != nil {
		t.Fatal(err)
	}
	c, _ := reg.Get("c1")
	c.mu.Lock()
	c.cd.FailStreak = 2
	c.mu.Unlock()

	if got := reg.AdoptCooldowns([]store.Connection{row}); len(got) != 0 {
		t.Fatalf("equal columns adopted: %d", len(got))
	}
	cooled := row
	cooled.RateLimitedUntil, cooled.TestStatus, cooled.ErrorCode, cooled.BackoffLevel = 9_000_000_000_000, "unavailable", "UPSTREAM_AUTH", 1
	ghost := row
	ghost.ID = "gone"
	got := reg.AdoptCooldowns([]store.Connection{cooled, ghost})
	if len(got) != 1 || got[0] != c {
		t.Fatalf("adopted %v, want c1 only", got)
	}
	cd := c.Cooldown()
	if cd.RateLimitedUntil.UnixMilli() != 9_000_000_000_000 || cd.TestStatus != "unavailable" || cd.BackoffLevel != 1 || cd.FailStreak != 2 {
		t.Fatalf("cooldown after adopt %+v", cd)
	}
	banned := row
	banned.TestStatus = "banned"
	reg.AdoptCooldowns([]store.Connection{banned})
	if c.Cooldown().Terminal != "banned" {
		t.Fatalf("terminal state not adopted: %+v", c.Cooldown())
	}
}
