package api

import (
	"omniroute/backend/providers"
)

// dataField is one providerSpecificData field as GET /api/providers/catalog
// shows it: a connection form is rendered from these (the keys after doc
// tell the form how; absent ones are their zero value).
type dataField struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	// Secret fields are sealed on save and never returned.
	Secret         bool     `json:"secret"`
	Doc            string   `json:"doc"`
	Label          string   `json:"label"`
	Kind           string   `json:"kind"`
	Options        []string `json:"options,omitempty"`
	Default        string   `json:"default,omitempty"`
	Placeholder    string   `json:"placeholder,omitempty"`
	ReadOnly       bool     `json:"readOnly,omitempty"`
	Summary        string   `json:"summary,omitempty"`
	RequiredUnless string   `json:"requiredUnless,omitempty"`
	// SealedAs is "apiKey" when the field's value becomes the connection's
	// key (an error about apiKey is about this field).
	SealedAs string `json:"sealedAs,omitempty"`
	MapKey   string `json:"mapKey,omitempty"`
	MapValue string `json:"mapValue,omitempty"`
}

// dataFields is p's providerSpecificData schema ([] when its module has none).
func dataFields(p providers.Provider) []dataField {
	out := []dataField{}
	if s := p.DataSchema(); s != nil {
		for _, f := range s.Fields {
			label := f.Label
			if label == "" {
				label = f.Name
			}
			sealedAs := ""
			if f.SealedAs == "apiKey" {
				sealedAs = f.SealedAs
			}
			out = append(out, dataField{Name: f.Name, Type: f.Type, Required: f.Required, Secret: f.Secret, Doc: f.Doc,
				Label: label, Kind: string(f.FormKind()), Options: f.Options, Default: f.Default, Placeholder: f.Placeholder,
				ReadOnly: f.ReadOnly, Summary: f.Summary, RequiredUnless: f.RequiredUnless, SealedAs: sealedAs,
				MapKey: f.MapKey, MapValue: f.MapValue})
		}
	}
	return out
}

// keyField is how a connection form asks for p's apiKey: kind "secret"
// (a password field), "file" (a file's text) or "none" (the dataFields
// carry the credential); required unless the provider is a local server.
type keyField struct {
	Kind     string `json:"kind"`
	Label    string `json:"label"`
	Doc      string `json:"doc"`
	Accept   string `json:"accept,omitempty"`
	Required bool   `json:"required"`
}

func keyFieldOf(p providers.Provider) keyField {
	var k providers.KeyForm
	if p.Module != nil {
		k = p.Module.Key
	}
	out := keyField{Kind: string(k.Kind), Label: k.Label, Doc: k.Doc, Accept: k.Accept}
	if out.Kind == "" {
		out.Kind = string(providers.KindSecret)
	}
	if out.Label == "" {
		out.Label = "API key"
	}
	if out.Doc == "" {
		out.Doc = "Stored by the gateway; it is never shown again."
	}
	out.Required = out.Kind != string(providers.KindNone) && p.Category == providers.CategoryAPIKey
	return out
}
