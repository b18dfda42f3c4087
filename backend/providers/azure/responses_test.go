package azure_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/openai"
	"omniroute/backend/providers/registry"
)

// capture is a Doer that records the request and answers 200 {}.
type capture struct {
	req  *http.Request
	body []byte
}

func (c *capture) Do(req *http.Request) (*http.Response, error) {
	c.req = req
	c.body, _ = io.ReadAll(req.Body)
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}, nil
}

func TestAzureResponses(t *testing.T) {
	p, _ := registry.Catalog(nil).Lookup("azure-openai")
	for _, c := range []struct {
		auth, header, value string
	}{{"apikey", "Api-Key", "k1"}, {"oauth", "Authorization", "Bearer k1"}} {
		d := &capture{}
		tg := providers.Target{Provider: p, BaseURL: "https://res.openai.azure.com/", Secret: "k1", AuthType: c.auth, Model: "gpt-5-codex",
			Azure: providers.Azure{Responses: true, Deployments: map[string]string{"gpt-5-codex": "codex-dep"}}}
		if _, err := openai.NewAzureResponses(d, "OmniRoute/test").Do(context.Background(), &tg, providers.Call{Body: []byte(`{"model":"gpt-5-codex","input":"hi"}`), Stream: true}); err != nil {
			t.Fatal(err)
		}
		if d.req.URL.String() != "https://res.openai.azure.com/openai/v1/responses" || d.req.Header.Get(c.header) != c.value ||
			gjson.GetBytes(d.body, "model").String() != "codex-dep" || d.req.Header.Get("Accept") != "text/event-stream" {
			t.Fatalf("%s: %s %v %s", c.auth, d.req.URL, d.req.Header, d.body)
		}
	}
}
