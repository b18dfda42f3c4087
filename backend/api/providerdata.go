package api

import (
	"errors"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/store"
)

// applyProviderData runs the provider module's providerSpecificData schema
// on a saved object: its field-precise refusals become 400s, its sealed
// API key replaces the connection's. It returns the object to store.
func (a *API) applyProviderData(schema *providers.DataSchema, row *store.Connection, raw string) (string, error) {
	out, err := schema.Apply(providers.DataInput{Raw: raw, Stored: row.ProviderSpecificData, Seal: a.Box.Seal, Home: a.home})
	if err != nil {
		return "", fieldError(err, schema)
	}
	if out.APIKeySealed != "" {
		row.APIKeyEnc = out.APIKeySealed
	}
	return out.Data, nil
}

// checkCredential runs a provider module's credential check on a saved
// connection: the apiKey (plain when given in this edit, else the stored
// one) against the providerSpecificData, which it may complete. schema
// words its refusals (nil: none).
func (a *API) checkCredential(check func(providers.KeyCheck) (string, error), schema *providers.DataSchema, row *store.Connection, plainKey *string) error {
	key := ""
	if plainKey != nil {
		key = strings.TrimSpace(*plainKey)
	} else if row.APIKeyEnc != "" {
		k, err := a.Box.Open(row.APIKeyEnc)
		if err != nil {
			return err
		}
		key = k
	}
	data, err := check(providers.KeyCheck{Key: key, Data: row.ProviderSpecificData})
	if err != nil {
		return fieldError(err, schema)
	}
	row.ProviderSpecificData = data
	return nil
}

// fieldError is a provider module's refusal as the API's 400 (other errors
// pass): its stable code, the field's path as param, and a message in the
// user's words, naming the field by its form label (DataSchema.UserWords):
// the dashboard shows it under that field.
func fieldError(err error, schema *providers.DataSchema) error {
	var fe *providers.FieldError
	if errors.As(err, &fe) {
		return errs.New(errs.Invalid, fe.Code, "%s", schema.UserWords(fe.Message)).WithParam(fe.Field)
	}
	return err
}

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
