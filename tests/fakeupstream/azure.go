package fakeupstream

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// Azure OpenAI, as Microsoft's data-plane inference reference describes it:
//
//   - POST /openai/deployments/{deployment}/chat/completions?api-version=…
//     and …/embeddings: the OpenAI bodies, the key in an api-key header (or an
//     Entra ID token as Authorization: Bearer); the body's model is ignored
//     by Azure (the deployment decides), so the fake answers as for the chat
//     and embeddings routes with the body's model.
//   - Without api-version: 404 {"error":{"code":"404","message":"Resource not found"}}.
//   - An unknown deployment: 404 DeploymentNotFound.
//   - No key: 401 {"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. …"}}.
//   - GET /openai/deployments?api-version=… lists the deployments
//     ({data:[{id, model, status, object:"deployment"}], object:"list"}) for
//     the API versions that had that route (up to 2023-05-15); later ones
//     answer 404 Resource not found, as Azure does.
//
// SetAzureDeployments names the deployments (none: every name is accepted).
// Faults apply per key as on the other routes (content filter 400s,
// 429 with Retry-After and x-ratelimit-* headers).

// AzureNotFoundBody is Azure's answer to a path or api-version it does not serve.
const AzureNotFoundBody = `{"error":{"code":"404","message": "Resource not found"}}`

// AzureDeploymentNotFoundBody is Azure's answer for a deployment the resource lacks.
const AzureDeploymentNotFoundBody = `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}`

// AzureAccessDeniedBody is Azure's 401 without a valid key.
const AzureAccessDeniedBody = `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`

// AzureContentFilterBody is Azure's content-filter refusal of a prompt.
const AzureContentFilterBody = `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}`

// azureListVersions are the api-versions whose data plane lists deployments.
var azureListVersions = []string{"2022-12-01", "2023-03-15-preview", "2023-05-15"}

// SetAzureDeployments sets the resource's deployments: name → model (nil: any name).
func (u *Upstream) SetAzureDeployments(d map[string]string) {
	u.mu.Lock()
	u.azureDeployments = maps.Clone(d)
	u.mu.Unlock()
}

// azureKey is the caller's credential: api-key, else a bearer token.
func azureKey(r *http.Request) (string, bool) {
	if k := strings.TrimSpace(r.Header.Get("Api-Key")); k != "" {
		return k, true
	}
	return apiKey(r, FormatOpenAI)
}

// azureCall serves POST /openai/deployments/{deployment}/{op...}.
func (u *Upstream) azureCall(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("api-version") == "" {
		u.writeError(w, http.StatusNotFound, AzureNotFoundBody)
		return
	}
	if _, ok := azureKey(r); !ok {
		u.writeError(w, http.StatusUnauthorized, AzureAccessDeniedBody)
		return
	}
	u.mu.Lock()
	deps := u.azureDeployments
	u.mu.Unlock()
	if _, ok := deps[r.PathValue("deployment")]; deps != nil && !ok {
		u.writeError(w, http.StatusNotFound, AzureDeploymentNotFoundBody)
		return
	}
	switch r.PathValue("op") {
	case "chat/completions":
		u.completion(FormatOpenAI)(w, r)
	case "embeddings":
		u.embeddings(w, r)
	default:
		u.writeError(w, http.StatusNotFound, AzureNotFoundBody)
	}
}

// azureList serves GET /openai/deployments.
func (u *Upstream) azureList(w http.ResponseWriter, r *http.Request) {
	if !slices.Contains(azureListVersions, r.URL.Query().Get("api-version")) {
		u.writeError(w, http.StatusNotFound, AzureNotFoundBody)
		return
	}
	if _, ok := azureKey(r); !ok {
		u.writeError(w, http.StatusUnauthorized, AzureAccessDeniedBody)
		return
	}
	u.mu.Lock()
	deps := maps.Clone(u.azureDeployments)
	u.mu.Unlock()
	type dep struct {
		ID     string `json:"id"`
		Model  string `json:"model"`
		Status string `json:"status"`
		Object string `json:"object"`
	}
	out := struct {
		Data   []dep  `json:"data"`
		Object string `json:"object"`
	}{Data: []dep{}, Object: "list"}
	for _, name := range slices.Sorted(maps.Keys(deps)) {
		out.Data = append(out.Data, dep{ID: name, Model: deps[name], Status: "succeeded", Object: "deployment"})
	}
	b, _ := json.Marshal(out)
	w.Header()["Content-Type"] = u.ctJSON
	_, _ = w.Write(b)
}

// azureResponses serves POST /openai/v1/responses, Azure's v1 Responses API:
// the key in api-key (or an Entra ID bearer), the deployment as the body's
// "model" (an unknown one: 404 DeploymentNotFound), the answer a response
// object, or its SSE events when "stream" is true (the Responses events of
// the Codex fake: text Content(key), a call to tools[0], a reasoning summary
// when reasoning.effort is set). Faults apply per key.
func (u *Upstream) azureResponses(w http.ResponseWriter, r *http.Request) {
	key, ok := azureKey(r)
	if !ok {
		u.writeError(w, http.StatusUnauthorized, AzureAccessDeniedBody)
		return
	}
	body, err := readBody(w, r)
	if err != nil || !gjson.ValidBytes(body) {
		u.writeError(w, http.StatusBadRequest, `{"error":{"code":"invalid_request_error","message":"the body is not JSON"}}`)
		return
	}
	model := gjson.GetBytes(body, "model").String()
	u.mu.Lock()
	deps := u.azureDeployments
	u.mu.Unlock()
	if _, known := deps[model]; deps != nil && !known {
		u.writeError(w, http.StatusNotFound, AzureDeploymentNotFoundBody)
		return
	}
	f, n, _ := u.begin(key, r.URL.Path, r.Header, body, model, true)
	defer u.end()
	if f != nil && f.Mode == ModeStatus {
		u.writeStatusFault(w, FormatOpenAI, f)
		return
	}
	events := codexStream(key, model, body, n, -1)
	if gjson.GetBytes(body, "stream").Bool() {
		w.Header()["Content-Type"] = u.ctSSE
		_, _ = w.Write(events)
		return
	}
	for _, ev := range strings.Split(string(events), "\n\n") {
		for _, line := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && gjson.Get(d, "type").String() == "response.completed" {
				w.Header()["Content-Type"] = u.ctJSON
				_, _ = w.Write([]byte(gjson.Get(d, "response").Raw))
				return
			}
		}
	}
	u.writeError(w, http.StatusInternalServerError, `{"error":{"code":"server_error","message":"no response"}}`)
}
