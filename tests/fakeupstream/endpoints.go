package fakeupstream

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
)

// EmbeddingDims is the length of the fake's embedding vectors.
const EmbeddingDims = 8

// embeddings serves POST /v1/embeddings as OpenAI does: one vector per input
// (a string, or an array of strings or token arrays), deterministic per text,
// with usage. Status faults of the key apply.
func (u *Upstream) embeddings(w http.ResponseWriter, r *http.Request) {
	key, authed := apiKey(r, FormatOpenAI)
	body, err := readBody(w, r)
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	f, _, _ := u.begin(key, r.URL.Path, r.Header, body, req.Model, authed)
	defer u.end()
	switch {
	case !authed:
		u.writeError(w, http.StatusUnauthorized, missingKeyBody(FormatOpenAI))
		return
	case f != nil && f.Mode == ModeStatus:
		u.writeStatusFault(w, FormatOpenAI, f)
		return
	case err != nil || req.Model == "":
		u.writeError(w, http.StatusBadRequest, ErrorBody(FormatOpenAI, http.StatusBadRequest))
		return
	}
	var inputs []any
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		inputs = []any{one}
	} else if json.Unmarshal(req.Input, &inputs) != nil || len(inputs) == 0 {
		u.writeError(w, http.StatusBadRequest, ErrorBody(FormatOpenAI, http.StatusBadRequest))
		return
	}
	data := make([]map[string]any, len(inputs))
	tokens := 0
	for i, in := range inputs {
		text := fmt.Sprint(in)
		tokens += len(strings.Fields(text)) + 1
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vector(text)}
	}
	writeJSON(w, map[string]any{"object": "list", "model": req.Model, "data": data,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// vector is a deterministic unit-free vector for text.
func vector(text string) []float64 {
	v := make([]float64, EmbeddingDims)
	for i := range v {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d:%s", i, text)
		v[i] = float64(h.Sum32()%2000)/1000 - 1
	}
	return v
}

// textCompletion serves POST /v1/completions (legacy completions): the
// answer is Content(key) — or, with a "suffix" (fill-in-the-middle),
// "<middle of PREFIX…SUFFIX>" so a test sees both ends arrived — streamed as
// text_completion chunks when asked. Status faults of the key apply.
func (u *Upstream) textCompletion(w http.ResponseWriter, r *http.Request) {
	key, authed := apiKey(r, FormatOpenAI)
	body, err := readBody(w, r)
	var req struct {
		Model  string `json:"model"`
		Prompt any    `json:"prompt"`
		Suffix string `json:"suffix"`
		Stream bool   `json:"stream"`
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	f, _, _ := u.begin(key, r.URL.Path, r.Header, body, req.Model, authed)
	defer u.end()
	switch {
	case !authed:
		u.writeError(w, http.StatusUnauthorized, missingKeyBody(FormatOpenAI))
		return
	case f != nil && f.Mode == ModeStatus:
		u.writeStatusFault(w, FormatOpenAI, f)
		return
	case err != nil || req.Model == "" || req.Prompt == nil:
		u.writeError(w, http.StatusBadRequest, ErrorBody(FormatOpenAI, http.StatusBadRequest))
		return
	}
	text := Content(key)
	if req.Suffix != "" {
		text = fmt.Sprintf("<middle of %v…%s>", req.Prompt, req.Suffix)
	}
	usage := map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"text": text, "index": 0, "logprobs": nil, "finish_reason": "stop"}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	runes := []rune(text)
	half := len(runes) / 2
	for i, piece := range []string{string(runes[:half]), string(runes[half:])} {
		chunk := map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"text": piece, "index": 0, "logprobs": nil, "finish_reason": nil}}}
		if i == 1 {
			chunk["choices"] = []any{map[string]any{"text": piece, "index": 0, "logprobs": nil, "finish_reason": "stop"}}
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
