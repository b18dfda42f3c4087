package server_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers/registry"
	"omniroute/tests/fakeupstream"
)

// TestOpenAIFamilyConnections: a connection of each OpenAI-compatible
// catalogue vendor (issue 30), created with its base URL pointed at the fake
// and no model list, discovers its models (the upstream's list, or the
// catalogue's for a vendor without one), routes by provider/model and
// answers with the vendor's bearer key at <base>/chat/completions.
func TestOpenAIFamilyConnections(t *testing.T) {
	e := newEnv(t)
	cat := registry.Catalog(nil)
	// The catalogue route carries each entry's wire, features and discovery.
	_, listed := e.mgmt("GET", "/api/providers/catalog", nil)
	byID := map[string]map[string]any{}
	for _, p := range listed["providers"].([]any) {
		byID[p.(map[string]any)["id"].(string)] = p.(map[string]any)
	}
	if pp := byID["perplexity"]; pp["noModelList"] != true || pp["tools"] != false || pp["reasoning"] != true || pp["auth"] != "`Authorization: Bearer`" {
		t.Fatalf("perplexity entry %v", pp)
	}
	if az := byID["azure-openai"]; az["dialect"] != "azure" || az["userDefined"] != true || !slices.Contains(strs(az["aliases"]), "azure") {
		t.Fatalf("azure entry %v", az)
	}
	if len(byID) != len(cat.All()) {
		t.Fatalf("%d catalogue entries, want %d", len(byID), len(cat.All()))
	}
	for _, id := range []string{"mistral", "xai", "together", "fireworks", "cerebras", "moonshot", "dashscope",
		"perplexity", "nebius", "sambanova", "nvidia", "glm"} {
		t.Run(id, func(t *testing.T) {
			p, _ := cat.Lookup(id)
			key := "fam-" + id
			code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": id, "apiKey": key, "baseUrl": e.upURL})
			if code != http.StatusCreated {
				t.Fatalf("create: %d %v", code, m)
			}
			conn := m["connection"].(map[string]any)
			var served []string
			for _, v := range conn["servedModels"].([]any) {
				served = append(served, v.(string))
			}
			want, source := fakeupstream.DefaultModels(), "upstream"
			if p.NoModelList {
				want, source = p.DefaultModels, "catalog"
			}
			if !slices.Equal(served, want) || conn["modelsSource"] != source {
				t.Fatalf("served %v from %v, want %v from %s", served, conn["modelsSource"], want, source)
			}
			resp, body := e.chat(id+"/"+want[0], false, nil)
			if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content(key) {
				t.Fatalf("chat: %d %s", resp.StatusCode, body)
			}
			h, sent := e.up.LastRequest(key)
			if h.Get("Authorization") != "Bearer "+key || e.up.LastPath(key) != "/v1/chat/completions" || gjson.GetBytes(sent, "model").String() != want[0] {
				t.Fatalf("upstream saw %s %q model %s", e.up.LastPath(key), h.Get("Authorization"), gjson.GetBytes(sent, "model"))
			}
		})
	}
}
