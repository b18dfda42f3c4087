package e2e

import (
	"net/http"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestGoogleV1ModelRoutes: Google's v1 routes (the @google/genai SDK's
// default) beside OpenAI's on one path: GET /v1/models answers Google's list
// to a caller with x-goog-api-key (or ?key=) and OpenAI's to a Bearer one;
// GET /v1/models/{model} answers Google's Model or OpenAI's model object (404
// MODEL_NOT_FOUND in each shape for an unknown name); :embedContent and
// :batchEmbedContents are served under /v1 and /v1beta by an
// OpenAI-compatible and by a Gemini connection.
func TestGoogleV1ModelRoutes(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	g := startGateway(t, t.TempDir(), 0)
	t.Cleanup(g.stop)
	g.mustMgmt(http.StatusCreated, "POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "oa",
		"apiKey": "key-oa", "baseUrl": upURL + "/v1", "models": []string{"gpt-4o-mini", "text-embedding-3-small"}})
	g.mustMgmt(http.StatusCreated, "POST", "/api/providers", map[string]any{"verify": false, "provider": "gemini", "name": "gem",
		"apiKey": "gk-emb", "baseUrl": upURL + "/v1beta", "models": []string{"gemini-embedding-001"}})
	goog := map[string]string{"x-goog-api-key": g.key}
	bearer := map[string]string{"Authorization": "Bearer " + g.key}

	resp, body := g.do("GET", "/v1/models", nil, goog)
	if resp.StatusCode != 200 || !gjson.GetBytes(body, `models.#(name=="models/gpt-4o-mini")`).Exists() || gjson.GetBytes(body, "data").Exists() {
		t.Errorf("GET /v1/models with x-goog-api-key: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("GET", "/v1/models?key="+g.key, nil, nil)
	if resp.StatusCode != 200 || !gjson.GetBytes(body, `models.#(name=="models/gpt-4o-mini")`).Exists() {
		t.Errorf("GET /v1/models?key=: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("GET", "/v1/models", nil, bearer)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "object").String() != "list" || !gjson.GetBytes(body, `data.#(id=="gpt-4o-mini")`).Exists() {
		t.Errorf("GET /v1/models with Bearer: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("GET", "/v1/models", nil, map[string]string{"x-goog-api-key": "wrong"})
	if resp.StatusCode != 401 || gjson.GetBytes(body, "error.status").String() != "UNAUTHENTICATED" {
		t.Errorf("GET /v1/models with a wrong x-goog-api-key: %d %s, want 401 in Google's shape", resp.StatusCode, body)
	}

	resp, body = g.do("GET", "/v1/models/gpt-4o-mini", nil, goog)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "name").String() != "models/gpt-4o-mini" {
		t.Errorf("GET /v1/models/{model} for Google: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("GET", "/v1/models/no-such", nil, goog)
	if resp.StatusCode != 404 || gjson.GetBytes(body, "error.status").String() != "NOT_FOUND" {
		t.Errorf("GET /v1/models/no-such for Google: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/v1/models/gpt-4o-mini", "/v1/models/openai-compatible%2Fgpt-4o-mini"} {
		resp, body = g.do("GET", path, nil, bearer)
		id := gjson.GetBytes(body, "id").String()
		if resp.StatusCode != 200 || gjson.GetBytes(body, "object").String() != "model" || (id != "gpt-4o-mini" && id != "openai-compatible/gpt-4o-mini") {
			t.Errorf("GET %s (openai retrieve): %d %s", path, resp.StatusCode, body)
		}
	}
	resp, body = g.do("GET", "/v1/models/no-such", nil, bearer)
	checkError(t, "openai retrieve of an unknown model", resp, body, 404, "MODEL_NOT_FOUND")

	for _, tc := range []struct{ prefix, model string }{
		{"/v1/models/", "text-embedding-3-small"}, {"/v1beta/models/", "text-embedding-3-small"}, {"/v1/models/", "gemini-embedding-001"},
	} {
		resp, body = g.do("POST", tc.prefix+tc.model+":embedContent", map[string]any{
			"content": map[string]any{"parts": []any{map[string]any{"text": "hello"}}}}, goog)
		if resp.StatusCode != 200 || len(gjson.GetBytes(body, "embedding.values").Array()) != fakeupstream.EmbeddingDims {
			t.Errorf("%s%s:embedContent: %d %s", tc.prefix, tc.model, resp.StatusCode, body)
		}
		resp, body = g.do("POST", tc.prefix+tc.model+":batchEmbedContents", map[string]any{"requests": []any{
			map[string]any{"model": "models/" + tc.model, "content": map[string]any{"parts": []any{map[string]any{"text": "a"}}}},
			map[string]any{"model": "models/" + tc.model, "content": map[string]any{"parts": []any{map[string]any{"text": "b"}}}}}}, goog)
		if resp.StatusCode != 200 || len(gjson.GetBytes(body, "embeddings").Array()) != 2 ||
			len(gjson.GetBytes(body, "embeddings.1.values").Array()) != fakeupstream.EmbeddingDims {
			t.Errorf("%s%s:batchEmbedContents: %d %s", tc.prefix, tc.model, resp.StatusCode, body)
		}
	}
	resp, body = g.do("POST", "/v1/models/text-embedding-3-small:embedContent", map[string]any{"contents": "x"}, goog)
	if resp.StatusCode != 400 || gjson.GetBytes(body, "error.status").String() != "INVALID_ARGUMENT" {
		t.Errorf(":embedContent without content: %d %s, want 400 in Google's shape", resp.StatusCode, body)
	}
}
