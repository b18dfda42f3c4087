package azure_test

import (
	"context"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/azure"
	"omniroute/backend/providers/providerstest"
	"omniroute/backend/providers/registry"
)

func TestAzureResponses(t *testing.T) {
	p, _ := registry.Catalog(nil).Lookup("azure-openai")
	for _, c := range []struct {
		auth, header, value string
	}{{"apikey", "Api-Key", "k1"}, {"oauth", "Authorization", "Bearer k1"}} {
		d := &providerstest.Capture{}
		tg := providers.Target{Provider: p, BaseURL: "https://res.openai.azure.com/", Secret: "k1", AuthType: c.auth, Model: "gpt-5-codex",
			Extra: azure.Conn{Responses: true, Deployments: map[string]string{"gpt-5-codex": "codex-dep"}}}
		if _, err := azure.New(d, "OmniRoute/test").Do(context.Background(), &tg, providers.Call{Body: []byte(`{"model":"gpt-5-codex","input":"hi"}`), Stream: true}); err != nil {
			t.Fatal(err)
		}
		if d.Req.URL.String() != "https://res.openai.azure.com/openai/v1/responses" || d.Req.Header.Get(c.header) != c.value ||
			gjson.GetBytes(d.Body, "model").String() != "codex-dep" || d.Req.Header.Get("Accept") != "text/event-stream" {
			t.Fatalf("%s: %s %v %s", c.auth, d.Req.URL, d.Req.Header, d.Body)
		}
	}
}

// TestAzureChatOnDeployments: chat completions (and a call's own Path, such
// as embeddings) go to the model's deployment with the api-version, the key
// in api-key or an Entra ID token as a bearer; a Responses connection's
// embeddings still use the deployment URL.
func TestAzureChatOnDeployments(t *testing.T) {
	p, _ := registry.Catalog(nil).Lookup("azure")
	deps := map[string]string{"gpt-4o": "prod 4o"}
	for _, c := range []struct {
		name, auth, path, header, value, url string
		conn                                 azure.Conn
	}{
		{"chat", "apikey", "", "Api-Key", "k1", "https://res.openai.azure.com/openai/deployments/prod%204o/chat/completions?api-version=2024-10-21", azure.Conn{Deployments: deps}},
		{"entra", "oauth", "", "Authorization", "Bearer k1", "https://res.openai.azure.com/openai/deployments/prod%204o/chat/completions?api-version=2025-01-01-preview", azure.Conn{APIVersion: "2025-01-01-preview", Deployments: deps}},
		{"embeddings", "apikey", "/embeddings", "Api-Key", "k1", "https://res.openai.azure.com/openai/deployments/prod%204o/embeddings?api-version=2024-10-21", azure.Conn{Deployments: deps, Responses: true}},
		{"unmapped model", "apikey", "", "Api-Key", "k1", "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", azure.Conn{}},
	} {
		d := &providerstest.Capture{}
		tg := providers.Target{Provider: p, BaseURL: "https://res.openai.azure.com", Secret: "k1", AuthType: c.auth, Model: "gpt-4o", Extra: c.conn}
		if _, err := registry.Catalog(nil).Executors(providers.ExecDeps{Client: d, UserAgent: "OmniRoute/test", Getenv: func(string) string { return "" }})[providers.FormatOpenAI][p.Dialect].Do(
			context.Background(), &tg, providers.Call{Body: []byte(`{"model":"gpt-4o","messages":[]}`), Path: c.path}); err != nil {
			t.Fatal(err)
		}
		if d.Req.URL.String() != c.url || d.Req.Header.Get(c.header) != c.value || (c.header == "Api-Key") != (d.Req.Header.Get("Authorization") == "") {
			t.Errorf("%s: %s %v", c.name, d.Req.URL, d.Req.Header)
		}
	}
}
