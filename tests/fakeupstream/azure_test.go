package fakeupstream

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestAzureRoutes: the fake Azure resource answers as Microsoft documents:
// 404 without api-version, 401 without a key, DeploymentNotFound for a
// deployment it lacks, the chat answer with api-key, and the deployment list
// only for the API versions that had it.
func TestAzureRoutes(t *testing.T) {
	f := newFixture(t)
	f.u.SetAzureDeployments(map[string]string{"prod-4o": "gpt-4o"})
	chat := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		name, method, path, key, body string
		status                        int
		want                          string // gjson path that must exist, or a body
	}{
		{"no api-version", "POST", "/openai/deployments/prod-4o/chat/completions", "k", chat, 404, AzureNotFoundBody},
		{"no key", "POST", "/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21", "", chat, 401, AzureAccessDeniedBody},
		{"unknown deployment", "POST", "/openai/deployments/nope/chat/completions?api-version=2024-10-21", "k", chat, 404, AzureDeploymentNotFoundBody},
		{"chat", "POST", "/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21", "k", chat, 200, "choices.0.message.content"},
		{"embeddings", "POST", "/openai/deployments/prod-4o/embeddings?api-version=2024-10-21", "k", `{"model":"gpt-4o","input":"x"}`, 200, "data.0.embedding"},
		{"list, old version", "GET", "/openai/deployments?api-version=2023-05-15", "k", "", 200, "data.0.id"},
		{"list, current version", "GET", "/openai/deployments?api-version=2024-10-21", "k", "", 404, AzureNotFoundBody},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(testCtx(t), c.method, f.base+c.path, strings.NewReader(c.body))
			if c.key != "" {
				req.Header.Set("api-key", c.key)
			}
			resp, err := f.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ok := string(body) == c.want || strings.Contains(c.want, ".") && !strings.HasPrefix(c.want, "{") && gjson.GetBytes(body, c.want).Exists()
			if resp.StatusCode != c.status || !ok {
				t.Fatalf("%d %s, want %d %s", resp.StatusCode, body, c.status, c.want)
			}
		})
	}
}
