package providers

import "testing"

// TestPublicData: a stored providerSpecificData object loses its sealed
// fields (a secret's sealed form is never shown), keeps the others; text
// that is not an object, or has no sealed field, is shown as it is.
func TestPublicData(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{`{"region":"us-east-1","accessKeyId":"AKIA1","sessionTokenSealed":"v1:abc"}`, `{"accessKeyId":"AKIA1","region":"us-east-1"}`},
		{`{"region":"us-east-1"}`, `{"region":"us-east-1"}`},
		{`{"Sealed":"x"}`, `{}`},
		{`not json, Sealed`, `not json, Sealed`},
		{``, ``},
	} {
		if got := string(PublicData(tt.raw)); got != tt.want {
			t.Errorf("PublicData(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
