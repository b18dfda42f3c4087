package store

import (
	"errors"
	"strings"
	"testing"
)

// TestResealAll: every sealed value (the three credential columns, the
// …Sealed fields of provider_specific_data, client keys) is rewritten, empty
// ones and other fields are left alone, and an error rolls all back.
func TestResealAll(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		if err := s.CreateConnection(&Connection{ID: "c1", Provider: "p", Name: "a", IsActive: true, APIKeyEnc: "v1:k",
			AccessTokenEnc: "", RefreshTokenEnc: "v1:r", ProviderSpecificData: `{"region":"eu","sessionTokenSealed":"v1:s"}`}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAPIKey(&APIKey{ID: "k1", Name: "k", KeyHash: "h", KeyEnc: "v1:c", Scopes: "[]"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ResealAll(func(v string) (string, error) {
			if v == "v1:c" {
				return "", errors.New("cannot open")
			}
			return v + "!", nil
		}); err == nil {
			t.Fatal("a failing reseal succeeded")
		}
		if c, _ := s.Connection("c1"); c.APIKeyEnc != "v1:k" {
			t.Fatalf("a failed rotation changed %q", c.APIKeyEnc)
		}
		n, err := s.ResealAll(func(v string) (string, error) { return "n" + v, nil })
		if err != nil || n != 4 {
			t.Fatalf("resealed %d, %v; want 4", n, err)
		}
		c, _ := s.Connection("c1")
		if c.APIKeyEnc != "nv1:k" || c.AccessTokenEnc != "" || c.RefreshTokenEnc != "nv1:r" ||
			!strings.Contains(c.ProviderSpecificData, `"sessionTokenSealed":"nv1:s"`) || !strings.Contains(c.ProviderSpecificData, `"region":"eu"`) {
			t.Fatalf("after: %+v", c)
		}
		keys, _ := s.APIKeys()
		if len(keys) != 1 || keys[0].KeyEnc != "nv1:c" {
			t.Fatalf("client key after: %+v", keys)
		}
	})
}
