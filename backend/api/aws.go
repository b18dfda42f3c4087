package api

import (
	"encoding/json"
	"regexp"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/store"
)

var (
	awsRegion = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2}$`)
	awsKeyID  = regexp.MustCompile(`^[A-Z0-9]{16,128}$`)
)

// sealedSuffix marks a providerSpecificData field that holds a sealed
// secret: stored, never returned (publicProviderData drops it).
const sealedSuffix = "Sealed"

// applyBedrockData checks a bedrock connection's providerSpecificData
// ({region, accessKeyId, secretAccessKey, sessionToken?}) and moves its
// secrets out of the stored object: the secret access key is sealed into
// the connection's API key column, the session token sealed as
// sessionTokenSealed (kept when an edit leaves it out; "" removes it). It
// returns the object to store.
func (a *API) applyBedrockData(row *store.Connection, raw string) (string, error) {
	var d map[string]any
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return "", errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData must be an object").WithParam("providerSpecificData")
	}
	str := func(k string) (string, bool, error) {
		v, ok := d[k]
		if !ok {
			return "", false, nil
		}
		s, isStr := v.(string)
		if !isStr {
			return "", true, errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.%s must be a string", k).WithParam("providerSpecificData." + k)
		}
		return strings.TrimSpace(s), true, nil
	}
	for k := range d {
		if strings.HasSuffix(k, sealedSuffix) {
			return "", errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.%s is the gateway's own", truncate(k, 40)).WithParam("providerSpecificData." + truncate(k, 40))
		}
	}
	if _, ok := d["profile"]; ok {
		return "", errs.New(errs.Invalid, "UNSUPPORTED_PROVIDER_DATA", "providerSpecificData.profile (AWS config file profiles) is not supported yet: give accessKeyId and secretAccessKey").WithParam("providerSpecificData.profile")
	}
	region, _, err := str("region")
	if err != nil {
		return "", err
	}
	if !awsRegion.MatchString(region) {
		return "", errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.region must be an AWS region such as us-east-1").WithParam("providerSpecificData.region")
	}
	keyID, _, err := str("accessKeyId")
	if err != nil {
		return "", err
	}
	if !awsKeyID.MatchString(keyID) {
		return "", errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.accessKeyId must be an AWS access key id (16-128 capital letters and digits)").WithParam("providerSpecificData.accessKeyId")
	}
	d["region"], d["accessKeyId"] = region, keyID
	if secret, ok, err := str("secretAccessKey"); err != nil {
		return "", err
	} else if ok {
		if secret == "" || len(secret) > 256 {
			return "", errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.secretAccessKey must be 1-256 characters").WithParam("providerSpecificData.secretAccessKey")
		}
		sealed, err := a.Box.Seal(secret)
		if err != nil {
			return "", err
		}
		row.APIKeyEnc = sealed
		delete(d, "secretAccessKey")
	}
	token, ok, err := str("sessionToken")
	switch {
	case err != nil:
		return "", err
	case ok && token != "":
		if len(token) > 8192 {
			return "", errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.sessionToken is too long").WithParam("providerSpecificData.sessionToken")
		}
		sealed, err := a.Box.Seal(token)
		if err != nil {
			return "", err
		}
		d["sessionToken"+sealedSuffix] = sealed
	case !ok:
		// An edit that leaves the token out keeps the stored one.
		var old map[string]any
		if json.Unmarshal([]byte(row.ProviderSpecificData), &old) == nil {
			if v, has := old["sessionToken"+sealedSuffix]; has {
				d["sessionToken"+sealedSuffix] = v
			}
		}
	}
	delete(d, "sessionToken")
	b, _ := json.Marshal(d)
	return string(b), nil
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
