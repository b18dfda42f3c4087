package store

import (
	"io/fs"
	"testing"

	"omniroute/migrations"
)

// TestMigration0013BindsTokensToTheirCreator: on a database from before
// 0013, a token is bound to the user whose email minted it; a token whose
// creator was already deleted is revoked; tokens of the instance and of
// other tokens are kept unbound. Deleting a user then revokes their tokens.
func TestMigration0013BindsTokensToTheirCreator(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		if err := s.CreateUser(&User{ID: "u1", Email: "ann@example.com", Role: "admin", CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
		for _, tk := range []ManagementToken{
			{ID: "t-ann", Name: "a", TokenHash: "h1", TokenPrefix: "omt_", Role: "admin", CreatedBy: "ann@example.com", CreatedAt: 1},
			{ID: "t-gone", Name: "b", TokenHash: "h2", TokenPrefix: "omt_", Role: "admin", CreatedBy: "gone@example.com", CreatedAt: 1},
			{ID: "t-inst", Name: "c", TokenHash: "h3", TokenPrefix: "omt_", Role: "admin", CreatedBy: "management token", CreatedAt: 1},
			{ID: "t-tok", Name: "d", TokenHash: "h4", TokenPrefix: "omt_", Role: "admin", CreatedBy: "token:bot@x", CreatedAt: 1},
		} {
			if err := s.CreateManagementToken(&tk); err != nil {
				t.Fatal(err)
			}
		}
		// Back to version 12: the columns gone, 0013 not applied.
		for _, q := range []string{"ALTER TABLE management_tokens DROP COLUMN creator_user_id", "ALTER TABLE users DROP COLUMN sso_issuer",
			"DELETE FROM schema_migrations WHERE version = 13"} {
			if err := s.DB().Exec(q).Error; err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var files fs.FS = migrations.Files
		if s.dialect == Postgres {
			files = migrations.Postgres()
		}
		if err := s.migrate(files); err != nil {
			t.Fatal(err)
		}
		toks, err := s.ManagementTokens()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tk := range toks {
			got[tk.ID] = tk.CreatorUserID
		}
		want := map[string]string{"t-ann": "u1", "t-inst": "", "t-tok": ""}
		if len(got) != len(want) || got["t-ann"] != "u1" || got["t-inst"] != "" || got["t-tok"] != "" {
			t.Fatalf("tokens after 0013: %v, want %v", got, want)
		}
		if err := s.DeleteUser("u1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ManagementTokenByHash("h1"); err != ErrNotFound {
			t.Fatalf("the deleted user's token: %v", err)
		}
		if _, err := s.ManagementTokenByHash("h3"); err != nil {
			t.Fatalf("the instance's token: %v", err)
		}
	})
}
