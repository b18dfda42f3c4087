package api

import (
	"encoding/json"
	"errors"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/store"
)

// sealedSuffix marks a providerSpecificData field that holds a sealed
// secret: stored, never returned (publicProviderData drops it).
const sealedSuffix = providers.SealedFieldSuffix

// applyProviderData runs the provider module's providerSpecificData schema
// on a saved object: its field-precise refusals become 400s, its sealed
// API key replaces the connection's. It returns the object to store.
func (a *API) applyProviderData(schema *providers.DataSchema, row *store.Connection, raw string) (string, error) {
	out, err := schema.Apply(providers.DataInput{Raw: raw, Stored: row.ProviderSpecificData, Seal: a.Box.Seal, Home: a.home})
	var fe *providers.FieldError
	if errors.As(err, &fe) {
		return "", errs.New(errs.Invalid, fe.Code, "%s", fe.Message).WithParam(fe.Field)
	}
	if err != nil {
		return "", err
	}
	if out.APIKeySealed != "" {
		row.APIKeyEnc = out.APIKeySealed
	}
	return out.Data, nil
}

// publicProviderData is providerSpecificData as the API shows it: without
// the sealed fields.
func publicProviderData(raw string) json.RawMessage {
	if !strings.Contains(raw, sealedSuffix) {
		return json.RawMessage(raw)
	}
	var d map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &d) != nil {
		return json.RawMessage(raw)
	}
	for k := range d {
		if strings.HasSuffix(k, sealedSuffix) {
			delete(d, k)
		}
	}
	b, _ := json.Marshal(d)
	return b
}
