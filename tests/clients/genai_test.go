//go:build clients

package clients

import (
	"encoding/json"
	"slices"
	"testing"

	"omniroute/tests/fakeupstream"
)

// TestGenAISDKDefaultRoutes: the @google/genai SDK on its default API
// version (v1) lists, gets, generates (streamed and not), counts and embeds
// through the gateway with its x-goog-api-key; the openai SDK's
// models.retrieve gets the model object, and a 404 for an unknown model.
func TestGenAISDKDefaultRoutes(t *testing.T) {
	s := newStack(t)
	const model, embed = "deepseek-chat", "text-embedding-3-small"
	s.addConn("openai-compatible", "key-oa", 1, model, embed)
	var got map[string]struct {
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	runScript(t, "genai.mjs", map[string]any{"base": s.base, "key": s.key, "model": model, "embedModel": embed}, &got)
	val := func(name string, into any) {
		t.Helper()
		if got[name].Error != "" || json.Unmarshal(got[name].Value, into) != nil {
			t.Errorf("%s: error %q value %s", name, got[name].Error, got[name].Value)
		}
	}
	var version, name, text, streamed string
	var names []string
	var count int
	var dims []int
	var retrieved, unknown []any
	val("version", &version)
	if version != "v1" {
		t.Errorf("the SDK's default API version is %q; the test is meant for v1", version)
	}
	if val("list", &names); !slices.Contains(names, "models/"+model) {
		t.Errorf("models.list names %v, want models/%s", names, model)
	}
	if val("get", &name); name != "models/"+model {
		t.Errorf("models.get name %q", name)
	}
	want := fakeupstream.Content("key-oa")
	if val("generate", &text); text != want {
		t.Errorf("generateContent text %q, want %q", text, want)
	}
	if val("stream", &streamed); streamed != want {
		t.Errorf("generateContentStream text %q, want %q", streamed, want)
	}
	if val("count", &count); count <= 0 {
		t.Errorf("countTokens %d", count)
	}
	if val("embed", &dims); !slices.Equal(dims, []int{fakeupstream.EmbeddingDims, fakeupstream.EmbeddingDims}) {
		t.Errorf("embedContent dims %v, want two of %d", dims, fakeupstream.EmbeddingDims)
	}
	if val("openai-retrieve", &retrieved); len(retrieved) != 2 || retrieved[0] != model || retrieved[1] != "model" {
		t.Errorf("openai models.retrieve %v", retrieved)
	}
	if val("openai-retrieve-unknown", &unknown); len(unknown) != 2 || unknown[0] != float64(404) || unknown[1] != "MODEL_NOT_FOUND" {
		t.Errorf("openai models.retrieve of an unknown model %v, want 404 MODEL_NOT_FOUND", unknown)
	}
	if paths := s.rec.posts("/v1/models/" + model + ":generateContent"); len(paths) == 0 {
		t.Errorf("the SDK did not call POST /v1/models/%s:generateContent", model)
	}
}
