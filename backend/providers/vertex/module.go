package vertex

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"omniroute/backend/providers"
)

// ID is the catalogue id of the provider this folder serves.
const ID = "vertex"

var (
	// gcpProject is a Google Cloud project id: 6–30 lower-case letters,
	// digits and hyphens, starting with a letter.
	gcpProject = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`) })
	// gcpRegion is a Vertex AI location ("us-central1", "europe-west4", "global").
	gcpRegion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(global|[a-z]+(-[a-z]+)+[0-9]{1,2})$`) })
)

// MaxServiceAccountKey bounds a vertex connection's key (a service account's JSON).
const MaxServiceAccountKey = 64 << 10

// Dialect is Vertex AI: a service account's minted access token, Gemini
// models on publishers/google and Claude models on publishers/anthropic
// (the module's FormatOf sends those through the Anthropic wire).
const Dialect providers.Dialect = "vertex"

// Region is the region a Vertex connection uses when it names none.
const Region = "us-central1"

// BaseURL is Vertex AI's endpoint for region: the regional host, or
// aiplatform.googleapis.com for "global".
func BaseURL(region string) string {
	if region == "" {
		region = Region
	}
	if region == "global" {
		return "https://aiplatform.googleapis.com/v1"
	}
	return "https://" + region + "-aiplatform.googleapis.com/v1"
}

// IsAnthropic reports a Vertex model name that is Anthropic's
// (publishers/anthropic): "claude-…", with or without a "@version".
func IsAnthropic(model string) bool {
	return strings.HasPrefix(strings.ToLower(model), "claude-")
}

// Module is what the gateway knows of Vertex AI beyond its catalogue row:
// one executor for its Gemini and its Claude models, the service account
// key check, and a connection's project, region and regional endpoint.
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, Formats: []providers.Format{providers.FormatGemini, providers.FormatAnthropic},
		// Claude models take the Anthropic Messages wire, and continue a
		// trailing assistant turn as Claude does.
		FormatOf: func(model string) providers.Format {
			if IsAnthropic(model) {
				return providers.FormatAnthropic
			}
			return ""
		},
		Prefills: IsAnthropic,
		Rows: []providers.Provider{
			// Vertex AI from a Google Cloud service account (its JSON key is the
			// connection's sealed apiKey; providerSpecificData holds projectId and
			// region): Gemini models on publishers/google generateContent, Claude
			// models on publishers/anthropic rawPredict (the Messages wire).
			{ID: ID, Name: "Google Vertex AI (service account)", Category: providers.CategoryAPIKey, Format: providers.FormatGemini, Dialect: Dialect, Aliases: []string{"vertex-ai", "gcp-vertex"},
				Doc: providers.Doc{Auth: "service-account JWT (RS256) → OAuth `Authorization: Bearer`",
					Wire: "Gemini `generateContent` (publishers/google); `claude-*` models: Anthropic Messages via `rawPredict` (publishers/anthropic)"},
				BaseURL: "https://us-central1-aiplatform.googleapis.com/v1",
				DefaultModels: []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite",
					"claude-sonnet-4-5@20250929", "claude-opus-4-1@20250805", "claude-haiku-4-5@20251001"},
				NoModelList: true, Tools: true, Vision: true, Reasoning: true},
		},
		NewExecutor: func(d providers.ExecDeps) providers.Executor {
			return New(d.Client, d.UserAgent, NewTokens(d.Client, d.Now, strings.TrimSpace(d.Getenv("OMNIROUTE_VERTEX_TOKEN_URL"))))
		},
		MaxKey: MaxServiceAccountKey,
		// The key is the service account's JSON key file, chosen in the form.
		Key: providers.KeyForm{Kind: providers.KindFile, Label: "Service-account key (JSON)", Accept: ".json,application/json",
			Doc: "The key file from IAM → Service accounts → Keys. Stored encrypted; never shown again."},
		Data: &providers.DataSchema{Fields: []providers.Field{
			{Name: "projectId", Type: "string", Doc: "Google Cloud project (default: the service account key's project_id)",
				Label: "Project", Placeholder: "from the key", Summary: "project"},
			{Name: "region", Type: "string", Doc: "Vertex AI location such as us-central1, europe-west4 or global (default " + Region + ")",
				Label: "Region", Default: Region, Placeholder: Region, Summary: "region"},
			{Name: "clientEmail", Type: "string", Doc: "the key's service account (the gateway's own, shown in the dashboard)",
				Label: "Service account", ReadOnly: true, Summary: "service account"},
		}},
		Check:   check,
		Connect: connect,
	}
}

// connect reads a connection's project and region (default
// Region) and its regional endpoint.
func connect(in providers.ConnInput) (providers.ConnData, error) {
	var d struct {
		ProjectID string `json:"projectId"`
		Region    string `json:"region"`
	}
	_ = json.Unmarshal([]byte(in.Data), &d)
	g := providers.Google{Project: strings.TrimSpace(d.ProjectID), Region: strings.TrimSpace(d.Region)}
	if g.Region == "" {
		g.Region = Region
	}
	return providers.ConnData{Parts: providers.Target{Google: g}, BaseURL: BaseURL(g.Region)}, nil
}

func fieldErr(field, code, format string, args ...any) error {
	return &providers.FieldError{Field: field, Code: code, Message: fmt.Sprintf(format, args...)}
}

// check checks a vertex connection: its apiKey must be a service account's
// JSON key, and its providerSpecificData gets projectId (default: the key's
// project_id), region (default Region) and clientEmail (the
// key's account, shown in the dashboard; the gateway's own).
func check(in providers.KeyCheck) (string, error) {
	if in.Key == "" {
		return "", fieldErr("apiKey", "API_KEY_REQUIRED", "a vertex connection needs apiKey: the service account's JSON key file")
	}
	sa, err := ParseServiceAccount(in.Key)
	if err != nil {
		var ke *KeyError
		msg := err.Error()
		if errors.As(err, &ke) {
			msg = "apiKey must be a service account's JSON key file: " + ke.Msg
		}
		return "", fieldErr("apiKey", "INVALID_SERVICE_ACCOUNT", "%s", msg)
	}
	d := map[string]any{}
	raw := in.Data
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	_ = json.Unmarshal([]byte(raw), &d)
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
			return "", fieldErr("providerSpecificData."+k, "INVALID_PROVIDER_DATA", "providerSpecificData.%s must be a string", k)
		}
		return strings.TrimSpace(s), nil
	}
	project, err := str("projectId")
	if err != nil {
		return "", err
	}
	if project == "" {
		project = sa.ProjectID
	}
	if !gcpProject().MatchString(project) {
		return "", fieldErr("providerSpecificData.projectId", "INVALID_PROJECT", "providerSpecificData.projectId must be a Google Cloud project id (6 to 30 lower-case letters, digits and hyphens)")
	}
	region, err := str("region")
	if err != nil {
		return "", err
	}
	if region == "" {
		region = Region
	}
	if !gcpRegion().MatchString(region) {
		return "", fieldErr("providerSpecificData.region", "INVALID_REGION", "providerSpecificData.region must be a Vertex AI location such as us-central1, europe-west4 or global")
	}
	d["projectId"], d["region"], d["clientEmail"] = project, region, sa.ClientEmail
	b, _ := json.Marshal(d)
	return string(b), nil
}
