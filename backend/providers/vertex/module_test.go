package vertex_test

import (
	"errors"
	"strings"
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/providers/registry"
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
	if cd.BaseURL != vertex.BaseURL("us-central1") || cd.Parts.Google != (providers.Google{Project: "proj-one", Region: "us-central1"}) {
		t.Fatalf("%+v", cd)
	}
	if m := vertex.Module(); m.MaxKey != vertex.MaxServiceAccountKey || len(m.Formats) != 2 {
		t.Fatalf("%+v", m)
	}
}

// TestVertexFormatPerModel: a vertex connection serves Claude models on the
// Anthropic wire (and continues their streams as Claude does), Gemini models
// on the Gemini wire; other providers' format never depends on the model.
func TestVertexFormatPerModel(t *testing.T) {
	c := registry.Catalog(nil)
	v, _ := c.Lookup("vertex-ai")
	g, _ := c.Lookup("gemini")
	cases := []struct {
		p       providers.Provider
		model   string
		format  providers.Format
		prefill bool
	}{
		{v, "claude-sonnet-4-5@20250929", providers.FormatAnthropic, true},
		{v, "Claude-Opus-4-1", providers.FormatAnthropic, true},
		{v, "gemini-2.5-pro", providers.FormatGemini, false},
		{v, "claudette", providers.FormatGemini, false},
		{g, "claude-sonnet-4-5", providers.FormatGemini, false},
	}
	for _, c := range cases {
		if f := c.p.FormatOf(c.model); f != c.format || c.p.Prefills(c.model) != c.prefill {
			t.Errorf("%s %s: format %s prefill %v", c.p.ID, c.model, f, c.p.Prefills(c.model))
		}
	}
	if vertex.BaseURL("") != "https://us-central1-aiplatform.googleapis.com/v1" || vertex.BaseURL("global") != "https://aiplatform.googleapis.com/v1" ||
		vertex.BaseURL("europe-west4") != "https://europe-west4-aiplatform.googleapis.com/v1" {
		t.Error("Vertex base URLs")
	}
}
