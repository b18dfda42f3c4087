package store

import "testing"

// TestInstanceTokenRepublishedUnderANewName: an instance restarted under
// another name (a new port) publishes the same management token again; the
// old row goes, instead of the unique hash refusing the start.
func TestInstanceTokenRepublishedUnderANewName(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, id := range []string{"instance:host:1000", "instance:host:2000", "instance:host:2000"} {
			tok := ManagementToken{ID: id, Name: "instance " + id, TokenHash: "same-hash", TokenPrefix: "omt_", Role: "admin", CreatedBy: "instance", CreatedAt: 1}
			if err := s.UpsertManagementToken(&tok); err != nil {
				t.Fatalf("publish as %s: %v", id, err)
			}
		}
		rows, err := s.ManagementTokens()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].ID != "instance:host:2000" {
			t.Fatalf("rows %+v, want the one under the new name", rows)
		}
	})
}
