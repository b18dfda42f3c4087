package server_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestHiddenModelsAndAliases: a model hidden on one connection leaves
// /v1/models and is never sent there (another connection serving it takes
// the request; with none, MODEL_NOT_FOUND), under every name that reaches the
// connection; an alias is listed and routes to its model on its connection;
// bad lists are 400s with stable codes; [] and {} undo both.
func TestHiddenModelsAndAliases(t *testing.T) {
	e := newEnv(t)
	a := e.createConn(map[string]any{"provider": "openai-compatible", "name": "a", "apiKey": "hide-a", "baseUrl": e.upURL,
		"prefix": "pa", "priority": 1, "models": []string{"m-shared", "m-only-a", "m-target"}, "verify": false})
	b := e.createConn(map[string]any{"provider": "openai-compatible", "name": "b", "apiKey": "hide-b", "baseUrl": e.upURL,
		"prefix": "pb", "priority": 2, "models": []string{"m-shared"}, "verify": false})
	aID, bID := a["id"].(string), b["id"].(string)

	code, m := e.mgmt("PATCH", "/api/providers/"+aID, map[string]any{"hiddenModels": []string{"m-shared", "m-only-a"},
		"modelAliases": map[string]string{"fast": "m-target"}})
	if code != http.StatusOK {
		t.Fatalf("patch: %d %v", code, m)
	}
	conn := m["connection"].(map[string]any)
	if got := strs(conn["hiddenModels"]); !slices.Equal(got, []string{"m-shared", "m-only-a"}) {
		t.Fatalf("hiddenModels %v", got)
	}
	if got := strs(conn["servedModels"]); !slices.Equal(got, []string{"m-target"}) {
		t.Fatalf("servedModels %v", got)
	}
	if got := strs(conn["knownModels"]); !slices.Equal(got, []string{"m-shared", "m-only-a", "m-target"}) {
		t.Fatalf("knownModels %v", got)
	}
	if al, _ := conn["modelAliases"].(map[string]any); al["fast"] != "m-target" {
		t.Fatalf("modelAliases %v", conn["modelAliases"])
	}

	ids := e.modelIDs()
	for _, gone := range []string{"m-only-a", "pa/m-only-a", "pa/m-shared", "openai-compatible/m-only-a"} {
		if slices.Contains(ids, gone) {
			t.Errorf("/v1/models still lists hidden %s: %v", gone, ids)
		}
	}
	for _, want := range []string{"m-shared", "pb/m-shared", "fast", "pa/fast", "openai-compatible/fast", "m-target"} {
		if !slices.Contains(ids, want) {
			t.Errorf("/v1/models lacks %s: %v", want, ids)
		}
	}

	// The shared model goes to b (a, of higher priority, hides it).
	if resp, body := e.chat("m-shared", false, nil); resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != bID {
		t.Fatalf("hidden shared model: %d %s", resp.StatusCode, body)
	}
	if e.up.Hits("hide-a") != 0 {
		t.Fatalf("the connection hiding the model was called %d times", e.up.Hits("hide-a"))
	}
	// provider/model reaches every connection of the provider: b, never a.
	if resp, body := e.chat("openai-compatible/m-only-a", false, nil); resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != bID {
		t.Fatalf("provider/hidden model: %d %s", resp.StatusCode, body)
	}
	// Hidden on the only connection it reaches: model-not-found.
	for _, name := range []string{"m-only-a", "pa/m-only-a", "pa/m-shared"} {
		if resp, body := e.chat(name, false, nil); resp.StatusCode != http.StatusNotFound || errorCode(body) != "MODEL_NOT_FOUND" {
			t.Errorf("%s: %d %s", name, resp.StatusCode, body)
		}
	}
	if e.up.Hits("hide-a") != 0 {
		t.Fatalf("the connection hiding the models was called %d times", e.up.Hits("hide-a"))
	}
	// The alias sends its model, on a.
	for _, name := range []string{"fast", "pa/fast"} {
		resp, body := e.chat(name, false, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != aID || e.up.LastModel("hide-a") != "m-target" {
			t.Fatalf("alias %s: %d %s (upstream model %q)", name, resp.StatusCode, body, e.up.LastModel("hide-a"))
		}
	}

	for _, tc := range []struct {
		name string
		body map[string]any
		code string
	}{
		{"hidden not a list", map[string]any{"hiddenModels": "m"}, ""},
		{"hidden name with a space", map[string]any{"hiddenModels": []string{"a b"}}, "INVALID_MODELS"},
		{"alias with a slash", map[string]any{"modelAliases": map[string]string{"x/y": "m-target"}}, "INVALID_MODEL_ALIASES"},
		{"alias names itself", map[string]any{"modelAliases": map[string]string{"m-x": "m-x"}}, "INVALID_MODEL_ALIASES"},
		{"empty model", map[string]any{"modelAliases": map[string]string{"x": ""}}, "INVALID_MODEL_ALIASES"},
		{"alias is a model", map[string]any{"modelAliases": map[string]string{"m-target": "m-shared"}}, "MODEL_ALIAS_CONFLICT"},
		{"alias of a hidden model", map[string]any{"modelAliases": map[string]string{"y": "m-only-a"}}, "MODEL_ALIAS_HIDDEN"},
		{"hiding an alias's model", map[string]any{"hiddenModels": []string{"m-target"}}, "MODEL_ALIAS_HIDDEN"},
	} {
		code, m := e.mgmt("PATCH", "/api/providers/"+aID, tc.body)
		got, _ := m["error"].(map[string]any)
		if code != http.StatusBadRequest || (tc.code != "" && got["code"] != tc.code) {
			t.Errorf("%s: %d %v, want 400 %s", tc.name, code, m, tc.code)
		}
	}
	// An edit that does not name them (the dashboard's Edit dialog: PUT) keeps them.
	if code, m := e.mgmt("PUT", "/api/providers/"+aID, map[string]any{"name": "a renamed"}); code != 200 ||
		!slices.Equal(strs(m["connection"].(map[string]any)["hiddenModels"]), []string{"m-shared", "m-only-a"}) {
		t.Fatalf("PUT without the fields: %d %v", code, m)
	}
	// A refused PATCH changed nothing.
	if resp, _ := e.chat("fast", false, nil); resp.StatusCode != 200 {
		t.Fatalf("alias lost after refused patches: %d", resp.StatusCode)
	}

	if code, m := e.mgmt("PATCH", "/api/providers/"+aID, map[string]any{"hiddenModels": []string{}, "modelAliases": map[string]string{}}); code != 200 {
		t.Fatalf("clear: %d %v", code, m)
	}
	ids = e.modelIDs()
	if !slices.Contains(ids, "m-only-a") || slices.Contains(ids, "fast") {
		t.Fatalf("after clearing: %v", ids)
	}
	if resp, _ := e.chat("m-shared", false, nil); resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != aID {
		t.Fatalf("the unhidden model did not come back to a")
	}
	// Kept across a restart (stored, not only in memory).
	e.mgmt("PATCH", "/api/providers/"+aID, map[string]any{"hiddenModels": []string{"m-only-a"}})
	e.restart()
	if slices.Contains(e.modelIDs(), "m-only-a") {
		t.Fatal("hidden model listed again after a restart")
	}
}
