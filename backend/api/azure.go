package api

import (
	"encoding/json"
	"regexp"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/providers/discovery"
)

var (
	azureAPIVersion = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$`)
	// azureDeployment is Azure's deployment name rule: letters, digits, '-',
	// '_' and '.', at most 64 characters.
	azureDeployment = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// maxAzureDeployments bounds an Azure connection's deployments map.
const maxAzureDeployments = 500

// validateAzureData checks an azure-openai connection's providerSpecificData:
// apiVersion a date (optionally -preview), deployments an object of model
// name → deployment name, api "chat" or "responses", and no credential (the key goes in apiKey, where
// it is sealed; providerSpecificData is stored and returned as given).
func validateAzureData(raw string) error {
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData must be an object").WithParam("providerSpecificData")
	}
	for k := range d {
		l := strings.ToLower(k)
		if strings.Contains(l, "key") || strings.Contains(l, "secret") || strings.Contains(l, "token") || strings.Contains(l, "password") {
			return errs.New(errs.Invalid, "SECRET_IN_PROVIDER_DATA", "providerSpecificData.%s looks like a credential: send the key as apiKey (or an Entra ID token as accessToken with authType oauth), which is sealed", truncate(k, 40)).WithParam("providerSpecificData." + truncate(k, 40))
		}
	}
	if v, ok := d["apiVersion"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil || !azureAPIVersion.MatchString(s) {
			return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.apiVersion must be an Azure OpenAI api-version such as 2024-10-21 or 2025-01-01-preview").WithParam("providerSpecificData.apiVersion")
		}
	}
	if v, ok := d["api"]; ok && string(v) != "null" {
		var s string
		if json.Unmarshal(v, &s) != nil || (s != "chat" && s != "responses") {
			return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.api must be \"chat\" (chat completions, the default) or \"responses\" (the Responses API)").WithParam("providerSpecificData.api")
		}
	}
	if v, ok := d["deployments"]; ok && string(v) != "null" {
		var m map[string]string
		if json.Unmarshal(v, &m) != nil {
			return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.deployments must map model names to deployment names").WithParam("providerSpecificData.deployments")
		}
		if len(m) > maxAzureDeployments {
			return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.deployments holds at most %d entries", maxAzureDeployments).WithParam("providerSpecificData.deployments")
		}
		for model, dep := range m {
			if n, ok := discovery.Clean(model); !ok || n != model {
				return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.deployments: model name %q must be 1-200 characters without spaces", truncate(model, 60)).WithParam("providerSpecificData.deployments")
			}
			if !azureDeployment.MatchString(dep) {
				return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.deployments[%q]: a deployment name is 1-64 letters, digits, '-', '_' or '.'", truncate(model, 60)).WithParam("providerSpecificData.deployments")
			}
		}
	}
	return nil
}
