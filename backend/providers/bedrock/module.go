package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"omniroute/backend/providers"
)

// ID is the catalogue id of the provider this folder serves.
const ID = "bedrock"

// Dialect is Bedrock's Converse API, which the executor speaks in the
// OpenAI wire: requests signed with SigV4 from the connection's AWS
// credentials, streams in the AWS event-stream framing.
const Dialect providers.Dialect = "bedrock"

// Module is what the gateway knows of Bedrock beyond its catalogue row:
// the executor, the providerSpecificData schema, how a stored connection
// becomes signed targets and how its models are listed.
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, Formats: []providers.Format{providers.FormatOpenAI},
		Rules: builtinRules(),
		Rows: []providers.Provider{
			// AWS Bedrock through Converse; the base URL is the region's runtime
			// endpoint (providerSpecificData.region picks it when baseUrl is empty).
			// Anthropic models go through InvokeModel (the Messages body) when
			// a request thinks or prefills, which Converse cannot carry.
			{ID: ID, Name: "AWS Bedrock (Converse)", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI, Dialect: Dialect, Aliases: []string{"aws-bedrock"},
				Doc: providers.Doc{Auth: "AWS SigV4 (access key, secret, optional session token)",
					Wire:      "Bedrock Converse / ConverseStream (event stream); InvokeModel with the Messages body for Anthropic thinking and prefill",
					Discovery: "signed `GET /foundation-models` (on-demand, text) and `GET /inference-profiles`"},
				BaseURL: "https://bedrock-runtime.us-east-1.amazonaws.com", HonorsRuleScope: true, AssistantPrefill: true, PrefillOnlyModels: []string{"anthropic."},
				DefaultModels: []string{"anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-3-5-haiku-20241022-v1:0", "amazon.nova-pro-v1:0", "amazon.nova-lite-v1:0", "meta.llama3-3-70b-instruct-v1:0", "mistral.mistral-large-2407-v1:0"},
				Tools:         true, Vision: true, Reasoning: true, ChatOnly: true, NoEmbeddings: true,
				ReasoningReplay: providers.ReplayAll}, // the executor gives signed thinking back to Converse
		},
		NewExecutor: func(d providers.ExecDeps) providers.Executor { return New(d.Client, d.UserAgent, d.Now) },
		// The secret access key is a Data field (sealed as the apiKey).
		Key: providers.KeyForm{Kind: providers.KindNone},
		Data: &providers.DataSchema{
			Fields: []providers.Field{
				{Name: "region", Type: "string", Required: true, Doc: "AWS region, e.g. us-east-1 (picks the runtime endpoint when baseUrl is empty)",
					Label: "AWS region", Placeholder: "us-east-1", RequiredUnless: "profile", Summary: "region"},
				{Name: "accessKeyId", Type: "string", Required: true, Doc: "AWS access key ID",
					Label: "Access key ID", Placeholder: "AKIA…", RequiredUnless: "profile", Summary: "key"},
				{Name: "secretAccessKey", Type: "string", Required: true, Secret: true, SealedAs: "apiKey", Doc: "AWS secret access key (kept when an edit leaves it out)",
					Label: "Secret access key", RequiredUnless: "profile"},
				{Name: "sessionToken", Type: "string", Secret: true, SealedAs: "sessionToken" + providers.SealedFieldSuffix, Doc: "AWS session token of temporary credentials (\"\" removes it)",
					Label: "Session token"},
				{Name: "profile", Type: "string", Doc: "a profile of ~/.aws/credentials and ~/.aws/config to copy the values from",
					Label: "AWS profile", Placeholder: "default"},
			},
			Required:        true,
			RequiredMessage: "a bedrock connection needs providerSpecificData {region, accessKeyId, secretAccessKey}",
			Apply:           applyData,
		},
		Connect: connect,
		Models: &providers.ModelList{Shape: "modelSummaries", Parse: ParseModels,
			Requests: func(ctx context.Context, t providers.Target, userAgent string, now time.Time) ([]*http.Request, error) {
				var out []*http.Request
				for _, path := range []string{FoundationModelsPath, InferenceProfilesPath} {
					req, err := ListRequest(ctx, t, path, userAgent, now)
					if err != nil {
						return nil, err
					}
					out = append(out, req)
				}
				return out, nil
			}},
	}
}

// connect reads a stored connection's region and credentials: the key id
// from providerSpecificData, the secret key from the connection's API key,
// the session token from the sealed sessionTokenSealed.
func connect(in providers.ConnInput) (providers.ConnData, error) {
	var d struct {
		Region             string `json:"region"`
		AccessKeyID        string `json:"accessKeyId"`
		SessionTokenSealed string `json:"sessionTokenSealed"`
	}
	_ = json.Unmarshal([]byte(in.Data), &d)
	out := providers.ConnData{Parts: providers.Target{AWS: providers.AWS{Region: d.Region, AccessKeyID: d.AccessKeyID, SecretAccessKey: in.Secret}}}
	if d.Region != "" {
		out.BaseURL = Endpoint(d.Region)
	}
	if d.SessionTokenSealed != "" {
		tok, err := in.Open(d.SessionTokenSealed)
		if err != nil {
			return out, err
		}
		out.Parts.AWS.SessionToken = tok
	}
	return out, nil
}

var (
	awsRegion      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2}$`) })
	awsKeyID       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z0-9]{16,128}$`) })
	awsProfileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,64}$`) })
)

const invalidData = "INVALID_PROVIDER_DATA"

func fieldErr(field, code, format string, args ...any) error {
	return &providers.FieldError{Field: "providerSpecificData" + field, Code: code, Message: fmt.Sprintf(format, args...)}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// applyData checks a bedrock connection's providerSpecificData
// ({region, accessKeyId, secretAccessKey, sessionToken?}, or {profile} read
// from the user's AWS files) and moves its secrets out of the stored
// object: the secret access key is sealed into the connection's API key
// column, the session token sealed as sessionTokenSealed (kept when an edit
// leaves it out; "" removes it).
func applyData(in providers.DataInput) (providers.DataOutput, error) {
	var out providers.DataOutput
	var d map[string]any
	if err := json.Unmarshal([]byte(in.Raw), &d); err != nil {
		return out, fieldErr("", invalidData, "providerSpecificData must be an object")
	}
	str := func(k string) (string, bool, error) {
		v, ok := d[k]
		if !ok {
			return "", false, nil
		}
		s, isStr := v.(string)
		if !isStr {
			return "", true, fieldErr("."+k, invalidData, "providerSpecificData.%s must be a string", k)
		}
		return strings.TrimSpace(s), true, nil
	}
	for k := range d {
		if strings.HasSuffix(k, providers.SealedFieldSuffix) {
			return out, fieldErr("."+clip(k, 40), invalidData, "providerSpecificData.%s is the gateway's own", clip(k, 40))
		}
	}
	if v, ok := d["profile"]; ok {
		name, _ := v.(string)
		if err := fillFromProfile(d, name, in.Home); err != nil {
			return out, err
		}
	}
	region, _, err := str("region")
	if err != nil {
		return out, err
	}
	if !awsRegion().MatchString(region) {
		return out, fieldErr(".region", invalidData, "providerSpecificData.region must be an AWS region such as us-east-1")
	}
	keyID, _, err := str("accessKeyId")
	if err != nil {
		return out, err
	}
	if !awsKeyID().MatchString(keyID) {
		return out, fieldErr(".accessKeyId", invalidData, "providerSpecificData.accessKeyId must be 16-128 capital letters and digits (an AWS access key ID, such as AKIA…)")
	}
	d["region"], d["accessKeyId"] = region, keyID
	if secret, ok, err := str("secretAccessKey"); err != nil {
		return out, err
	} else if ok {
		if secret == "" || len(secret) > 256 {
			return out, fieldErr(".secretAccessKey", invalidData, "providerSpecificData.secretAccessKey must be 1-256 characters")
		}
		if out.APIKeySealed, err = in.Seal(secret); err != nil {
			return out, err
		}
		delete(d, "secretAccessKey")
	}
	const sealedToken = "sessionToken" + providers.SealedFieldSuffix
	token, ok, err := str("sessionToken")
	switch {
	case err != nil:
		return out, err
	case ok && token != "":
		if len(token) > 8192 {
			return out, fieldErr(".sessionToken", invalidData, "providerSpecificData.sessionToken is too long")
		}
		sealed, err := in.Seal(token)
		if err != nil {
			return out, err
		}
		d[sealedToken] = sealed
	case !ok:
		// An edit that leaves the token out keeps the stored one.
		var old map[string]any
		if json.Unmarshal([]byte(in.Stored), &old) == nil {
			if v, has := old[sealedToken]; has {
				d[sealedToken] = v
			}
		}
	}
	delete(d, "sessionToken")
	b, _ := json.Marshal(d)
	out.Data = string(b)
	return out, nil
}

// fillFromProfile copies a named profile of the user's AWS files
// (~/.aws/credentials: aws_access_key_id, aws_secret_access_key,
// aws_session_token; ~/.aws/config: region) into d where d does not name
// the value itself. The copy is taken now and sealed like typed-in keys:
// a rotated key needs the connection saved again.
func fillFromProfile(d map[string]any, name string, home func() (string, error)) error {
	if !awsProfileName().MatchString(name) {
		return fieldErr(".profile", invalidData, "providerSpecificData.profile must be a profile name such as default")
	}
	dir, err := home()
	if err != nil {
		return err
	}
	creds := readINI(filepath.Join(dir, ".aws", "credentials"))[name]
	conf := readINI(filepath.Join(dir, ".aws", "config"))
	cfg := conf["profile "+name]
	if name == "default" && cfg == nil {
		cfg = conf["default"]
	}
	if creds == nil && cfg == nil {
		return fieldErr(".profile", "AWS_PROFILE_NOT_FOUND", "no profile %q in ~/.aws/credentials or ~/.aws/config", name)
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
