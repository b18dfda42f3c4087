package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// Models serves GET /v1/models: every enabled connection's models (listed and
// discovered, less the hidden ones) and model aliases as bare names,
// provider/model and prefix/model, plus the combos. A Google client
// (GoogleCaller: the @google/genai SDK's v1 default) gets them in Google's
// list shape, as GET /v1beta/models answers.
func (g *Gateway) Models(w http.ResponseWriter, r *http.Request) {
	if GoogleCaller(r) {
		g.GeminiModels(w, r)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": g.modelList(r)})
}

// GoogleCaller reports whether r comes from a Google client, which sends its
// key as x-goog-api-key or ?key= and names itself in x-goog-api-client;
// OpenAI's clients send none of them.
func GoogleCaller(r *http.Request) bool {
	return r.Header.Get("x-goog-api-key") != "" || r.Header.Get("x-goog-api-client") != "" || r.URL.Query().Has("key")
}

// ModelFor serves GET /v1/models/{model} for client c: OpenAI's model
// object (the openai SDK's models.retrieve), or for a Google client
// (GoogleCaller) Google's Model, as GET /v1beta/models/{model} answers; a
// name not served to the key is 404 MODEL_NOT_FOUND in the caller's error
// shape.
func (g *Gateway) ModelFor(w http.ResponseWriter, r *http.Request, c Client) {
	if GoogleCaller(r) {
		g.GeminiFor(w, r, c)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, GeminiV1Prefix) // decoded: an id with %2F for its slash is found too
	for _, m := range g.modelList(r.WithContext(WithClient(r.Context(), c))) {
		if m.ID == name {
			httpx.WriteJSON(w, http.StatusOK, m)
			return
		}
	}
	httpx.WriteOpenAIError(w, http.StatusNotFound, errs.New(errs.NotFound, "MODEL_NOT_FOUND", "model %q is not served to this key (GET /v1/models lists the models)", truncateMsg(name)).WithParam("model"))
}

// model is one entry of /v1/models.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelList is every name the client of r may route to, sorted.
func (g *Gateway) modelList(r *http.Request) []model {
	seen := map[string]bool{}
	var out []model
	access := ClientFrom(r.Context()).access()
	add := func(id, owner string, created int64) {
		if seen[id] || (len(access.AllowedModels) > 0 && !contains(access.AllowedModels, id)) {
			return
		}
		seen[id] = true
		out = append(out, model{ID: id, Object: "model", Created: created, OwnedBy: owner})
	}
	// Each served model under every name that routes to it: bare, provider/model
	// and, for a user-defined endpoint with a prefix, prefix/model.
	for _, c := range g.engine.Registry().All() {
		if !c.Active || (len(access.AllowedConnections) > 0 && !contains(access.AllowedConnections, c.ID)) {
			continue
		}
		for _, m := range c.Models {
			add(m, c.Provider.ID, c.CreatedAt/1000)
			add(c.Provider.ID+"/"+m, c.Provider.ID, c.CreatedAt/1000)
			if c.Prefix != "" {
				add(c.Prefix+"/"+m, c.Provider.ID, c.CreatedAt/1000)
			}
		}
		// An alias is listed under the same names as a model (it routes to
		// its model on this connection), unless that model is hidden here.
		for alias, m := range c.Aliases {
			if c.Hides(m) {
				continue
			}
			add(alias, c.Provider.ID, c.CreatedAt/1000)
			add(c.Provider.ID+"/"+alias, c.Provider.ID, c.CreatedAt/1000)
			if c.Prefix != "" {
				add(c.Prefix+"/"+alias, c.Provider.ID, c.CreatedAt/1000)
			}
		}
	}
	for _, co := range g.engine.Combos().All() {
		if len(access.AllowedModels) > 0 && !contains(access.AllowedModels, co.Name) && !contains(access.AllowedModels, "combo/"+co.Name) {
			continue
		}
		for _, id := range []string{co.Name, "combo/" + co.Name} {
			if !seen[id] {
				seen[id] = true
				out = append(out, model{ID: id, Object: "model", OwnedBy: "combo"})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if out == nil {
		out = []model{}
	}
	return out
}

// OllamaTags serves GET /ollama/api/tags: the same names as /v1/models in
// Ollama's list shape (size and digest unknown: 0 and "").
func (g *Gateway) OllamaTags(w http.ResponseWriter, r *http.Request) {
	list := g.modelList(r)
	out := make([]map[string]any, 0, len(list))
	for _, m := range list {
		out = append(out, map[string]any{"name": m.ID, "model": m.ID,
			"modified_at": time.Unix(m.Created, 0).UTC().Format(time.RFC3339), "size": 0, "digest": "",
			"details": map[string]any{"format": "", "family": m.OwnedBy, "parameter_size": "", "quantization_level": ""}})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"models": out})
}

// OllamaShow serves POST /ollama/api/show {model} (or Ollama's older
// {name}): what Ollama says of a model, for a name /api/tags lists; the
// gateway knows no Modelfile, template or weights (empty), and names the
// capabilities every served model is routed with. A name not served to the
// key is 404 {"error": "model \"…\" not found"}, as Ollama answers.
func (g *Gateway) OllamaShow(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil || json.Unmarshal(body, &in) != nil {
		httpx.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": "INVALID_JSON: send {\"model\": \"<name>\"}"})
		return
	}
	name := in.Model
	if name == "" {
		name = in.Name
	}
	if name == "" {
		httpx.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": "MODEL_REQUIRED: send {\"model\": \"<name>\"}"})
		return
	}
	for _, m := range g.modelList(r) {
		if m.ID != name {
			continue
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"modelfile": "", "parameters": "", "template": "",
			"details": map[string]any{"parent_model": "", "format": "", "family": m.OwnedBy, "families": []string{m.OwnedBy},
				"parameter_size": "", "quantization_level": ""},
			"model_info":   map[string]any{"general.architecture": m.OwnedBy},
			"capabilities": []string{"completion", "tools"},
			"modified_at":  time.Unix(m.Created, 0).UTC().Format(time.RFC3339)})
		return
	}
	httpx.WriteJSON(w, http.StatusNotFound, map[string]any{"error": "model " + strconv.Quote(truncateMsg(name)) + " not found"})
}

// OllamaPs serves GET /ollama/api/ps: the models Ollama holds in memory.
// The gateway loads none (its upstreams do), so the list is empty.
func (g *Gateway) OllamaPs(w http.ResponseWriter, _ *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"models": []any{}})
}

// OllamaVersion serves GET /ollama/api/version: the version Ollama clients
// check before they talk (a recent Ollama's, so no client refuses it).
func (g *Gateway) OllamaVersion(w http.ResponseWriter, _ *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"version": ollamaVersion})
}

// ollamaVersion is the Ollama release whose API the /ollama surface follows.
const ollamaVersion = "0.12.0"

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
