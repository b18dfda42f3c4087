package api

import (
	"encoding/json"
	"os"
	"path/filepath"
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
// ({region, accessKeyId, secretAccessKey, sessionToken?}, or {profile} read
// from the user's AWS files) and moves its
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
	if v, ok := d["profile"]; ok {
		name, _ := v.(string)
		if err := a.fillFromProfile(d, name); err != nil {
			return "", err
		}
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

var awsProfileName = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,64}$`)

// fillFromProfile copies a named profile of the user's AWS files
// (~/.aws/credentials: aws_access_key_id, aws_secret_access_key,
// aws_session_token; ~/.aws/config: region) into d where d does not name
// the value itself. The copy is taken now and sealed like typed-in keys:
// a rotated key needs the connection saved again.
func (a *API) fillFromProfile(d map[string]any, name string) error {
	param := "providerSpecificData.profile"
	if !awsProfileName.MatchString(name) {
		return errs.New(errs.Invalid, "INVALID_PROVIDER_DATA", "providerSpecificData.profile must be a profile name such as default").WithParam(param)
	}
	home, err := a.home()
	if err != nil {
		return err
	}
	creds := readINI(filepath.Join(home, ".aws", "credentials"))[name]
	conf := readINI(filepath.Join(home, ".aws", "config"))
	cfg := conf["profile "+name]
	if name == "default" && cfg == nil {
		cfg = conf["default"]
	}
	if creds == nil && cfg == nil {
		return errs.New(errs.Invalid, "AWS_PROFILE_NOT_FOUND", "no profile %q in ~/.aws/credentials or ~/.aws/config", name).WithParam(param)
	}
	pick := func(key string, from ...map[string]string) string {
		for _, m := range from {
			if v := m[key]; v != "" {
				return v
			}
		}
		return ""
	}
	for field, key := range map[string]string{"accessKeyId": "aws_access_key_id", "secretAccessKey": "aws_secret_access_key",
		"sessionToken": "aws_session_token", "region": "region"} {
		if _, given := d[field]; given {
			continue
		}
		if v := pick(key, creds, cfg); v != "" {
			d[field] = v
		}
	}
	return nil
}

// readINI reads an AWS-style INI file into section → key → value (nil
// when it cannot be read); comments (# ;) and blank lines are skipped.
func readINI(path string) map[string]map[string]string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 1<<20 {
		return nil
	}
	out := map[string]map[string]string{}
	var cur map[string]string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && strings.HasSuffix(line, "]"):
			name := strings.Join(strings.Fields(line[1:len(line)-1]), " ")
			cur = map[string]string{}
			out[name] = cur
		case cur != nil:
			if k, v, ok := strings.Cut(line, "="); ok {
				cur[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
			}
		}
	}
	return out
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
