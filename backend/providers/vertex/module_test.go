package vertex_test

import (
	"errors"
	"strings"
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/providers/vertex"
)

// TestModuleCheck: the key must be a service account's; the project and
// region default from it, and each refusal names its field.
func TestModuleCheck(t *testing.T) {
	check := vertex.Module().Check
	key := keyFile(t, testKey, false, nil)
	for _, c := range []struct {
		key, data, field, code string
	}{
		{"", "", "apiKey", "API_KEY_REQUIRED"},
		{"not json", "", "apiKey", "INVALID_SERVICE_ACCOUNT"},
		{key, `{"region":"Mars"}`, "providerSpecificData.region", "INVALID_REGION"},
		{key, `{"projectId":"X"}`, "providerSpecificData.projectId", "INVALID_PROJECT"},
		{key, `{"projectId":7}`, "providerSpecificData.projectId", "INVALID_PROVIDER_DATA"},
	} {
		_, err := check(providers.KeyCheck{Key: c.key, Data: c.data})
		var fe *providers.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Code != c.code {
			t.Errorf("%q: %v, want %s on %s", c.data, err, c.code, c.field)
		}
	}
	out, err := check(providers.KeyCheck{Key: key})
	if err != nil || !strings.Contains(out, `"projectId":"proj-one"`) || !strings.Contains(out, `"region":"us-central1"`) || !strings.Contains(out, `"clientEmail":"sa@proj-one.iam.gserviceaccount.com"`) {
		t.Fatalf("%v %s", err, out)
	}
	cd, _ := vertex.Module().Connect(providers.ConnInput{Data: out})
	if cd.BaseURL != providers.VertexBaseURL("us-central1") || cd.Parts.Google != (providers.Google{Project: "proj-one", Region: "us-central1"}) {
		t.Fatalf("%+v", cd)
	}
	if m := vertex.Module(); m.MaxKey != vertex.MaxServiceAccountKey || len(m.Formats) != 2 {
		t.Fatalf("%+v", m)
	}
}
