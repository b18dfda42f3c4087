package azure

import (
	"errors"
	"slices"
	"sort"
	"testing"

	"omniroute/backend/providers"
)

// TestApplyDataFieldErrors: each refusal names its field; a valid object is
// stored as sent.
func TestApplyDataFieldErrors(t *testing.T) {
	for _, c := range []struct{ raw, field, code string }{
		{`"x"`, "providerSpecificData", "INVALID_PROVIDER_DATA"},
		{`{"apiKey":"k"}`, "providerSpecificData.apiKey", "SECRET_IN_PROVIDER_DATA"},
		{`{"apiVersion":"v1"}`, "providerSpecificData.apiVersion", "INVALID_PROVIDER_DATA"},
		{`{"api":"batch"}`, "providerSpecificData.api", "INVALID_PROVIDER_DATA"},
		{`{"deployments":{"gpt 4o":"prod"}}`, "providerSpecificData.deployments", "INVALID_PROVIDER_DATA"},
		{`{"deployments":{"gpt-4o":"no/slash"}}`, "providerSpecificData.deployments", "INVALID_PROVIDER_DATA"},
	} {
		_, err := applyData(providers.DataInput{Raw: c.raw})
		var fe *providers.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Code != c.code {
			t.Errorf("%s: %v, want %s on %s", c.raw, err, c.code, c.field)
		}
	}
	raw := `{"apiVersion":"2025-01-01-preview","deployments":{"gpt-4o":"prod-4o"},"api":"responses"}`
	if out, err := applyData(providers.DataInput{Raw: raw}); err != nil || out.Data != raw || out.APIKeySealed != "" {
		t.Fatalf("%v %+v", err, out)
	}
}

// TestConnectReadsDeployments: the deployments route before any discovery,
// api "responses" puts the connection on the Responses wire.
func TestConnectReadsDeployments(t *testing.T) {
	cd, _ := connect(providers.ConnInput{Data: `{"apiVersion":"2025-01-01-preview","deployments":{"gpt-4o":"prod-4o","o3":"r"},"api":"responses"}`})
	sort.Strings(cd.Models)
	if cd.Format != providers.FormatResponses || !slices.Equal(cd.Models, []string{"gpt-4o", "o3"}) ||
		connOf(&cd.Parts).Version() != "2025-01-01-preview" || connOf(&cd.Parts).Deployment("gpt-4o") != "prod-4o" {
		t.Fatalf("%+v", cd)
	}
	if cd, _ := connect(providers.ConnInput{Data: `{}`}); cd.Format != "" || len(cd.Models) != 0 || connOf(&cd.Parts).Version() != APIVersion {
		t.Fatalf("empty: %+v", cd)
	}
	if got := Module().OwnModels(providers.Target{Extra: Conn{Deployments: map[string]string{"m": "d"}}}); !slices.Equal(got, []string{"m"}) {
		t.Fatalf("own models %v", got)
	}
}
