// Package azure is Azure OpenAI as a provider module: the resource's
// providerSpecificData (api-version, the model → deployment map, chat or
// Responses API), its executor (chat completions on deployments, or the
// Responses API), the deployments list and the deployments a connection
// serves before any discovery.
package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
)

// ID is the catalogue id of the provider this folder serves.
const ID = "azure-openai"

var (
	apiVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$`) })
	// deployment is Azure's deployment name rule: letters, digits, '-',
	// '_' and '.', at most 64 characters.
	deployment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })
)

// maxDeployments bounds a connection's deployments map.
const maxDeployments = 500

// Module is what the gateway knows of Azure OpenAI beyond its catalogue row.
func Module() providers.Module {
	return providers.Module{
		ID: ID, Dialect: Dialect, Formats: []providers.Format{providers.FormatOpenAI, providers.FormatResponses},
		Rows: []providers.Provider{
			// Azure OpenAI: baseUrl is the resource endpoint; the connection's
			// providerSpecificData holds apiVersion and the model → deployment map.
			{ID: ID, Name: "Azure OpenAI", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI, UserDefined: true, Dialect: Dialect, Aliases: []string{"azure"},
				Doc: providers.Doc{Auth: "`api-key` header, or `Authorization: Bearer` (Entra ID token)", Wire: "OpenAI Chat Completions on Azure deployments",
					Discovery: "`GET /openai/deployments`, else the connection's deployments map"},
				Tools: true, Vision: true, Reasoning: true},
		},
		// One executor: chat completions on deployments, or the Responses
		// API for connections set to it (api = "responses").
		NewExecutor: func(d providers.ExecDeps) providers.Executor { return New(d.Client, d.UserAgent) },
		Models: &providers.ModelList{
			Requests: func(ctx context.Context, t providers.Target, userAgent string, _ time.Time) ([]*http.Request, error) {
				req, err := deploymentsRequest(ctx, t, userAgent)
				if err != nil {
					return nil, err
				}
				return []*http.Request{req}, nil
			},
			Parse: discovery.ParseList, Shape: `"data" array`,
		},
		Data: &providers.DataSchema{Fields: []providers.Field{
			{Name: "apiVersion", Type: "string", Doc: "api-version, e.g. " + APIVersion + " (the default) or 2025-01-01-preview",
				Label: "API version", Default: APIVersion, Placeholder: APIVersion},
			{Name: "deployments", Type: "object", Doc: "model name → deployment name",
				Label: "Deployments", Kind: providers.KindMap, MapKey: "model", MapValue: "deployment", Placeholder: "gpt-4o = my-gpt4o-deployment"},
			{Name: "api", Type: "string", Doc: `"chat" (chat completions, the default) or "responses" (the Responses API)`,
				Label: "API", Kind: providers.KindSelect, Options: []string{"chat", "responses"}, Default: "chat"},
		}, Apply: applyData},
		Connect: connect,
		OwnModels: func(t providers.Target) []string {
			deps := connOf(&t).Deployments
			out := make([]string, 0, len(deps))
			for m := range deps {
				out = append(out, m)
			}
			return out
		},
	}
}

// connect reads a connection's apiVersion, deployments and api: its
// deployments route before any refresh, and api "responses" puts the
// connection on the Responses wire.
func connect(in providers.ConnInput) (providers.ConnData, error) {
	var d struct {
		APIVersion  string            `json:"apiVersion"`
		Deployments map[string]string `json:"deployments"`
		API         string            `json:"api"`
	}
	_ = json.Unmarshal([]byte(in.Data), &d)
	az := Conn{APIVersion: d.APIVersion, Deployments: d.Deployments, Responses: d.API == "responses"}
	out := providers.ConnData{Parts: providers.Target{Extra: az}}
	if az.Responses {
		out.Format = providers.FormatResponses
	}
	for m := range d.Deployments {
		out.Models = append(out.Models, m)
	}
	return out, nil
}

func fieldErr(field, format string, args ...any) error {
	return &providers.FieldError{Field: "providerSpecificData" + field, Code: "INVALID_PROVIDER_DATA", Message: fmt.Sprintf(format, args...)}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// applyData checks a connection's providerSpecificData: apiVersion a date
// (optionally -preview), deployments an object of model name → deployment
// name, api "chat" or "responses", and no credential (the key goes in
// apiKey, where it is sealed; providerSpecificData is stored and returned
// as given).
func applyData(in providers.DataInput) (providers.DataOutput, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(in.Raw), &d); err != nil {
		return providers.DataOutput{}, fieldErr("", "providerSpecificData must be an object")
	}
	for k := range d {
		l := strings.ToLower(k)
		if strings.Contains(l, "key") || strings.Contains(l, "secret") || strings.Contains(l, "token") || strings.Contains(l, "password") {
			return providers.DataOutput{}, &providers.FieldError{Field: "providerSpecificData." + clip(k, 40), Code: "SECRET_IN_PROVIDER_DATA",
				Message: fmt.Sprintf("providerSpecificData.%s looks like a credential: send the key as apiKey (or an Entra ID token as accessToken with authType oauth), which is sealed", clip(k, 40))}
		}
	}
	if v, ok := d["apiVersion"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil || !apiVersion().MatchString(s) {
			return providers.DataOutput{}, fieldErr(".apiVersion", "providerSpecificData.apiVersion must be an Azure OpenAI api-version such as 2024-10-21 or 2025-01-01-preview")
		}
	}
	if v, ok := d["api"]; ok && string(v) != "null" {
		var s string
		if json.Unmarshal(v, &s) != nil || (s != "chat" && s != "responses") {
			return providers.DataOutput{}, fieldErr(".api", "providerSpecificData.api must be \"chat\" (chat completions, the default) or \"responses\" (the Responses API)")
		}
	}
	if v, ok := d["deployments"]; ok && string(v) != "null" {
		var m map[string]string
		if json.Unmarshal(v, &m) != nil {
			return providers.DataOutput{}, fieldErr(".deployments", "providerSpecificData.deployments must map model names to deployment names")
		}
		if len(m) > maxDeployments {
			return providers.DataOutput{}, fieldErr(".deployments", "providerSpecificData.deployments holds at most %d entries", maxDeployments)
		}
		for model, dep := range m {
			if n, ok := discovery.Clean(model); !ok || n != model {
				return providers.DataOutput{}, fieldErr(".deployments", "providerSpecificData.deployments: model name %q must be 1-200 characters without spaces", clip(model, 60))
			}
			if !deployment().MatchString(dep) {
				return providers.DataOutput{}, fieldErr(".deployments", "providerSpecificData.deployments[%q]: a deployment name is 1-64 letters, digits, '-', '_' or '.'", clip(model, 60))
			}
		}
	}
	return providers.DataOutput{Data: in.Raw}, nil
}
