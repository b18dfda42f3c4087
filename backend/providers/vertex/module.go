package vertex

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"omniroute/backend/providers"
)

var (
	// gcpProject is a Google Cloud project id: 6–30 lower-case letters,
	// digits and hyphens, starting with a letter.
	gcpProject = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	// gcpRegion is a Vertex AI location ("us-central1", "europe-west4", "global").
	gcpRegion = regexp.MustCompile(`^(global|[a-z]+(-[a-z]+)+[0-9]{1,2})$`)
)

// MaxServiceAccountKey bounds a vertex connection's key (a service account's JSON).
const MaxServiceAccountKey = 64 << 10

// Module is what the gateway knows of Vertex AI beyond its catalogue row:
// one executor for its Gemini and its Claude models, the service account
// key check, and a connection's project, region and regional endpoint.
func Module() providers.Module {
	return providers.Module{
		ID: "vertex", Dialect: providers.DialectVertex, Formats: []providers.Format{providers.FormatGemini, providers.FormatAnthropic},
		NewExecutor: func(d providers.ExecDeps) providers.Executor {
			return New(d.Client, d.UserAgent, NewTokens(d.Client, d.Now, strings.TrimSpace(d.Getenv("OMNIROUTE_VERTEX_TOKEN_URL"))))
		},
		MaxKey: MaxServiceAccountKey,
		Data: &providers.DataSchema{Fields: []providers.Field{
			{Name: "projectId", Type: "string", Doc: "Google Cloud project (default: the service account key's project_id)"},
			{Name: "region", Type: "string", Doc: "Vertex AI location such as us-central1, europe-west4 or global (default " + providers.VertexRegion + ")"},
			{Name: "clientEmail", Type: "string", Doc: "the key's service account (the gateway's own, shown in the dashboard)"},
		}},
		Check:   check,
		Connect: connect,
	}
}

// connect reads a connection's project and region (default
// providers.VertexRegion) and its regional endpoint.
func connect(in providers.ConnInput) (providers.ConnData, error) {
	var d struct {
		ProjectID string `json:"projectId"`
		Region    string `json:"region"`
	}
	_ = json.Unmarshal([]byte(in.Data), &d)
	g := providers.Google{Project: strings.TrimSpace(d.ProjectID), Region: strings.TrimSpace(d.Region)}
	if g.Region == "" {
		g.Region = providers.VertexRegion
	}
	return providers.ConnData{Parts: providers.Target{Google: g}, BaseURL: providers.VertexBaseURL(g.Region)}, nil
}

func fieldErr(field, code, format string, args ...any) error {
	return &providers.FieldError{Field: field, Code: code, Message: fmt.Sprintf(format, args...)}
}

// check checks a vertex connection: its apiKey must be a service account's
// JSON key, and its providerSpecificData gets projectId (default: the key's
// project_id), region (default providers.VertexRegion) and clientEmail (the
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
	if !gcpProject.MatchString(project) {
		return "", fieldErr("providerSpecificData.projectId", "INVALID_PROJECT", "providerSpecificData.projectId must be a Google Cloud project id (6 to 30 lower-case letters, digits and hyphens)")
	}
	region, err := str("region")
	if err != nil {
		return "", err
	}
	if region == "" {
		region = providers.VertexRegion
	}
	if !gcpRegion.MatchString(region) {
		return "", fieldErr("providerSpecificData.region", "INVALID_REGION", "providerSpecificData.region must be a Vertex AI location such as us-central1, europe-west4 or global")
	}
	d["projectId"], d["region"], d["clientEmail"] = project, region, sa.ClientEmail
	b, _ := json.Marshal(d)
	return string(b), nil
}
