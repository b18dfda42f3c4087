package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// azureDeployments is the fake resource: deployment name → model.
var azureDeployments = map[string]string{"prod-4o": "gpt-4o", "emb-small": "text-embedding-3-small"}

// addAzureConn creates an azure-openai connection to the fake resource.
func (e *env) addAzureConn(name, key string, priority int, data map[string]any) map[string]any {
	e.t.Helper()
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "azure-openai", "name": name,
		"apiKey": key, "baseUrl": strings.TrimSuffix(e.upURL, "/v1"), "priority": priority, "providerSpecificData": data})
	if code != http.StatusCreated {
		e.t.Fatalf("create azure connection: %d %v", code, m)
	}
	return m["connection"].(map[string]any)
}

func servedOf(conn map[string]any) []string {
	var out []string
	for _, v := range conn["servedModels"].([]any) {
		out = append(out, v.(string))
	}
	return out
}

// TestAzureOpenAIConnection: an azure-openai connection sends chat (JSON and
// streamed) and embeddings to {base}/openai/deployments/{deployment}/…?api-version=
// with the key in api-key, maps model names to deployments, falls back to the
// deployments map when the resource does not list its deployments (every
// current api-version) and lists them where it does; an Entra ID token goes
// as a bearer; the key is never returned.
func TestAzureOpenAIConnection(t *testing.T) {
	e := newEnv(t)
	e.up.SetAzureDeployments(azureDeployments)
	data := map[string]any{"apiVersion": "2024-10-21", "deployments": map[string]any{"gpt-4o": "prod-4o", "text-embedding-3-small": "emb-small"}}
	conn := e.addAzureConn("az", "az-key-1", 1, data)
	if got := servedOf(conn); !slices.Equal(got, []string{"gpt-4o", "text-embedding-3-small"}) || conn["modelsSource"] != "catalog" {
		t.Fatalf("served %v from %v", got, conn["modelsSource"])
	}
	_, got := e.mgmt("GET", "/api/providers/"+conn["id"].(string), nil)
	if strings.Contains(string(mustJSON(got)), "az-key-1") {
		t.Fatalf("the key is returned: %v", got)
	}

	resp, body := e.chat("azure-openai/gpt-4o", false, nil)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content("az-key-1") {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	h, _ := e.up.LastRequest("az-key-1")
	if p := e.up.LastPath("az-key-1"); p != "/openai/deployments/prod-4o/chat/completions" || h.Get("Api-Key") != "az-key-1" || h.Get("Authorization") != "" {
		t.Fatalf("upstream saw %s api-key %q authorization %q", p, h.Get("Api-Key"), h.Get("Authorization"))
	}
	resp, body = e.chat("gpt-4o", true, nil)
	if text, done, _ := chatText(t, body); resp.StatusCode != 200 || !done || text != fakeupstream.Content("az-key-1") {
		t.Fatalf("stream: %d %q %s", resp.StatusCode, text, body)
	}
	resp, body = e.client("/v1/embeddings", map[string]any{"model": "text-embedding-3-small", "input": "hello"})
	if resp.StatusCode != 200 || e.up.LastPath("az-key-1") != "/openai/deployments/emb-small/embeddings" {
		t.Fatalf("embeddings: %d %s at %s", resp.StatusCode, body, e.up.LastPath("az-key-1"))
	}

	// An API version that still lists deployments: the resource's names, then the map's.
	listed := e.addAzureConn("az-listed", "az-key-2", 2, map[string]any{"apiVersion": "2023-05-15", "deployments": map[string]any{"gpt-4o": "prod-4o"}})
	if got := servedOf(listed); !slices.Equal(got, []string{"emb-small", "prod-4o", "gpt-4o"}) || listed["modelsSource"] != "upstream" {
		t.Fatalf("listed %v from %v", got, listed["modelsSource"])
	}

	// Entra ID: the token as a bearer, no api-key.
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "azure", "name": "az-entra", "authType": "oauth",
		"accessToken": "entra-token-1", "baseUrl": strings.TrimSuffix(e.upURL, "/v1"), "prefix": "entra", "models": []string{"prod-4o"}})
	if code != http.StatusCreated {
		t.Fatalf("entra connection: %d %v", code, m)
	}
	if resp, body := e.chat("entra/prod-4o", false, nil); resp.StatusCode != 200 {
		t.Fatalf("entra chat: %d %s", resp.StatusCode, body)
	}
	h, _ = e.up.LastRequest("entra-token-1")
	if h.Get("Authorization") != "Bearer entra-token-1" || h.Get("Api-Key") != "" || e.up.LastPath("entra-token-1") != "/openai/deployments/prod-4o/chat/completions" {
		t.Fatalf("entra request: %v at %s", h, e.up.LastPath("entra-token-1"))
	}
}

// TestAzureOpenAIVerdicts: a content-filter refusal reaches the client as
// its 400 without failover and cools nothing (the next request goes to the
// same connection); a 429 with Retry-After fails over and keeps the model
// off that connection until the Retry-After has passed.
func TestAzureOpenAIVerdicts(t *testing.T) {
	e := newEnv(t)
	e.up.SetAzureDeployments(azureDeployments)
	data := map[string]any{"deployments": map[string]any{"gpt-4o": "prod-4o"}}
	e.addAzureConn("az-1", "az-a", 1, data)
	e.addAzureConn("az-2", "az-b", 2, data)

	// Creating checked each key with a one-token completion: count from here.
	a0, b0 := e.up.Hits("az-a"), e.up.Hits("az-b")
	hitsA := func() int { return e.up.Hits("az-a") - a0 }
	hitsB := func() int { return e.up.Hits("az-b") - b0 }
	e.up.SetFault("az-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 400, Body: fakeupstream.AzureContentFilterBody})
	for i := 1; i <= 2; i++ {
		resp, body := e.chat("gpt-4o", false, nil)
		// The upstream's own code is relayed; the gateway's beside it (issue 41, M7).
		if resp.StatusCode != 400 || errorCode(body) != "content_filter" || !strings.Contains(string(body), `"omniroute_code":"CONTENT_POLICY_VIOLATION"`) {
			t.Fatalf("content filter #%d: %d %s", i, resp.StatusCode, body)
		}
		if hitsA() != i || hitsB() != 0 {
			t.Fatalf("content filter #%d: hits a=%d b=%d (retried or cooled)", i, hitsA(), hitsB())
		}
	}

	e.up.SetFault("az-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Body: `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded call rate limit of your current OpenAI S0 pricing tier. Please retry after 7 seconds."}}`,
		Headers: map[string]string{"Retry-After": "7", "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "1200"}})
	if resp, body := e.chat("gpt-4o", false, nil); resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content("az-b") {
		t.Fatalf("429 failover: %d %s", resp.StatusCode, body)
	}
	e.up.ClearFaults()
	if resp, body := e.chat("gpt-4o", false, nil); resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content("az-b") {
		t.Fatalf("within Retry-After: %d %s", resp.StatusCode, body)
	}
	if hitsA() != 3 {
		t.Fatalf("the rate-limited connection was tried %d times, want 3", hitsA())
	}
	e.clk.Advance(8 * time.Second)
	if resp, body := e.chat("gpt-4o", false, nil); resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content("az-a") {
		t.Fatalf("after Retry-After: %d %s", resp.StatusCode, body)
	}
}

// TestAzureOpenAIInput: an azure-openai connection needs its endpoint, and
// its providerSpecificData is checked: api-version shape, deployment names,
// and no credential stored outside the sealed fields.
func TestAzureOpenAIInput(t *testing.T) {
	e := newEnv(t)
	base := strings.TrimSuffix(e.upURL, "/v1")
	for _, c := range []struct {
		name  string
		body  map[string]any
		code  string
		param string
	}{
		{"no endpoint", map[string]any{"provider": "azure-openai", "apiKey": "k"}, "BASE_URL_REQUIRED", "baseUrl"},
		{"bad api-version", map[string]any{"provider": "azure-openai", "apiKey": "k", "baseUrl": base, "providerSpecificData": map[string]any{"apiVersion": "latest"}},
			"INVALID_PROVIDER_DATA", "providerSpecificData.apiVersion"},
		{"deployment with a slash", map[string]any{"provider": "azure-openai", "apiKey": "k", "baseUrl": base, "providerSpecificData": map[string]any{"deployments": map[string]any{"gpt-4o": "a/../b"}}},
			"INVALID_PROVIDER_DATA", "providerSpecificData.deployments"},
		{"deployments not a map of strings", map[string]any{"provider": "azure-openai", "apiKey": "k", "baseUrl": base, "providerSpecificData": map[string]any{"deployments": []string{"x"}}},
			"INVALID_PROVIDER_DATA", "providerSpecificData.deployments"},
		{"key in providerSpecificData", map[string]any{"provider": "azure-openai", "baseUrl": base, "providerSpecificData": map[string]any{"apiKey": "secret"}},
			"SECRET_IN_PROVIDER_DATA", "providerSpecificData.apiKey"},
	} {
		code, m := e.mgmt("POST", "/api/providers", c.body)
		errm, _ := m["error"].(map[string]any)
		if code != 400 || errm["code"] != c.code || errm["param"] != c.param {
			t.Errorf("%s: %d %v", c.name, code, m)
		}
	}
}

// TestAzureOpenAIResponses: an azure-openai connection set to the Responses
// API (providerSpecificData.api "responses") sends every client format to
// {base}/openai/v1/responses with the deployment as the body's model and the
// key in api-key: Responses clients pass through (JSON and SSE), Chat
// clients are translated both ways (tool calls included); a bad "api" is a 400.
func TestAzureOpenAIResponses(t *testing.T) {
	e := newEnv(t)
	e.up.SetAzureDeployments(map[string]string{"codex-dep": "gpt-5-codex"})
	conn := e.addAzureConn("az-resp", "az-resp-key", 1, map[string]any{"api": "responses", "deployments": map[string]any{"gpt-5-codex": "codex-dep"}})
	if ch, _ := conn["providerSpecificData"].(map[string]any); ch["api"] != "responses" {
		t.Fatalf("connection: %v", conn)
	}
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	check := func(what string) {
		t.Helper()
		h, sent := e.up.LastRequest("az-resp-key")
		if p := e.up.LastPath("az-resp-key"); p != "/openai/v1/responses" || h.Get("Api-Key") != "az-resp-key" || gjson.GetBytes(sent, "model").String() != "codex-dep" {
			t.Fatalf("%s: upstream saw %s api-key %q model %q", what, p, h.Get("Api-Key"), gjson.GetBytes(sent, "model").String())
		}
	}
	input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi"}}}}
	resp, body := e.do("POST", "/v1/responses", map[string]any{"model": "gpt-5-codex", "input": input}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "object").String() != "response" || !strings.Contains(string(body), fakeupstream.Content("az-resp-key")) {
		t.Fatalf("responses: %d %s", resp.StatusCode, body)
	}
	check("responses")
	resp, body = e.do("POST", "/v1/responses", map[string]any{"model": "gpt-5-codex", "input": input, "stream": true}, auth)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "response.completed") {
		t.Fatalf("responses stream: %d %s", resp.StatusCode, body)
	}
	check("responses stream")
	resp, body = e.chat("gpt-5-codex", false, nil)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content("az-resp-key") {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	check("chat")
	resp, body = e.chat("gpt-5-codex", true, nil)
	if text, done, _ := chatText(t, body); resp.StatusCode != 200 || !done || text != fakeupstream.Content("az-resp-key") {
		t.Fatalf("chat stream: %d %q %s", resp.StatusCode, text, body)
	}
	resp, body = e.do("POST", "/v1/chat/completions", map[string]any{"model": "gpt-5-codex",
		"tools":    []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "object"}}}},
		"messages": []any{map[string]any{"role": "user", "content": "weather?"}}}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.tool_calls.0.function.name").String() != "get_weather" {
		t.Fatalf("chat tools: %d %s", resp.StatusCode, body)
	}
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "azure-openai", "name": "bad", "apiKey": "k",
		"baseUrl": strings.TrimSuffix(e.upURL, "/v1"), "providerSpecificData": map[string]any{"api": "assistants"}}); code != 400 ||
		m["error"].(map[string]any)["code"] != "INVALID_PROVIDER_DATA" {
		t.Fatalf("bad api: %d %v", code, m)
	}
}
