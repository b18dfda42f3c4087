package api

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/providers/vertex"
	"omniroute/backend/store"
)

var (
	// gcpProject is a Google Cloud project id: 6–30 lower-case letters,
	// digits and hyphens, starting with a letter.
	gcpProject = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	// gcpRegion is a Vertex AI location ("us-central1", "europe-west4", "global").
	gcpRegion = regexp.MustCompile(`^(global|[a-z]+(-[a-z]+)+[0-9]{1,2})$`)
)

// maxServiceAccountKey bounds a vertex connection's key (a service account's JSON).
const maxServiceAccountKey = 64 << 10

// applyVertex checks a vertex connection: its apiKey (plain when given in
// this edit, else the stored one) must be a service account's JSON key, and
// its providerSpecificData gets projectId (default: the key's project_id),
// region (default providers.VertexRegion) and clientEmail (the key's
// account, shown in the dashboard; the gateway's own).
func (a *API) applyVertex(row *store.Connection, plainKey *string) error {
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
	if key == "" {
		return errs.New(errs.Invalid, "API_KEY_REQUIRED", "a vertex connection needs apiKey: the service account's JSON key file").WithParam("apiKey")
	}
	sa, err := vertex.ParseServiceAccount(key)
	if err != nil {
		var ke *vertex.KeyError
		msg := err.Error()
		if errors.As(err, &ke) {
			msg = "apiKey must be a service account's JSON key file: " + ke.Msg
		}
		return errs.New(errs.Invalid, "INVALID_SERVICE_ACCOUNT", "%s", msg).WithParam("apiKey")
	}
	d := map[string]any{}
	_ = json.Unmarshal([]byte(orObject(row.ProviderSpecificData)), &d)
	if d == nil {
		d = map[string]any{}
	}
	str := func(k string) (string, error) {
		v, ok := d[k]
		if !ok || v == nil {
			return "", nil
		}
		s, isStr := v.(string)
		if !isStr {
			return "", errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.%s must be a string", k).WithParam("providerSpecificData." + k)
		}
		return strings.TrimSpace(s), nil
	}
	project, err := str("projectId")
	if err != nil {
		return err
	}
	if project == "" {
		project = sa.ProjectID
	}
	if !gcpProject.MatchString(project) {
		return errs.New(errs.Invalid, "INVALID_PROJECT", "providerSpecificData.projectId must be a Google Cloud project id (6 to 30 lower-case letters, digits and hyphens)").WithParam("providerSpecificData.projectId")
	}
	region, err := str("region")
	if err != nil {
		return err
	}
	if region == "" {
		region = providers.VertexRegion
	}
	if !gcpRegion.MatchString(region) {
		return errs.New(errs.Invalid, "INVALID_REGION", "providerSpecificData.region must be a Vertex AI location such as us-central1, europe-west4 or global").WithParam("providerSpecificData.region")
	}
	d["projectId"], d["region"], d["clientEmail"] = project, region, sa.ClientEmail
	b, _ := json.Marshal(d)
	row.ProviderSpecificData = string(b)
	return nil
}
