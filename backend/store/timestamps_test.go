package store

import (
	"testing"
)

// TestTimestampsAreMilliseconds: every write stores Unix milliseconds (GORM's
// default for an int64 UpdatedAt would be seconds, read back as January 1970).
func TestTimestampsAreMilliseconds(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		st := open(t)
		c := Connection{ID: "c1", Provider: "openai", Name: "n", Models: "[]", ProviderSpecificData: "{}", RateLimitOverrides: "{}"}
		if err := st.CreateConnection(&c); err != nil {
			t.Fatal(err)
		}
		c.Name = "renamed"
		if err := st.SaveConnection(&c); err != nil {
			t.Fatal(err)
		}
		got, _ := st.Connection("c1")
		const year2020 = 1577836800000
		if got.CreatedAt < year2020 || got.UpdatedAt < year2020 {
			t.Fatalf("created %d updated %d: not milliseconds", got.CreatedAt, got.UpdatedAt)
		}
		if err := st.SaveTokens("c1", "a", "r", 5, year2020+1); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Connection("c1"); got.UpdatedAt != year2020+1 || got.ExpiresAt != 5 || got.AccessTokenEnc != "a" {
			t.Fatalf("tokens row %+v", got)
		}
	})
}
