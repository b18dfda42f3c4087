package fakeupstream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Ollama's native API, as its API reference describes it:
//
//   - POST /api/chat {model, messages, tools?, stream? (default true),
//     format?, think?, options?}: messages carry "images" as bare base64,
//     assistant "tool_calls" with "arguments" as a JSON object (a string is
//     a 400, as Ollama's Go decoder answers), tool results as role "tool"
//     with "tool_name". A streamed answer is NDJSON: one
//     {model, created_at, message:{role, content, thinking?, tool_calls?},
//     done:false} per piece, then {…, done:true, done_reason,
//     prompt_eval_count, eval_count}; stream:false answers that last object
//     with the whole message.
//   - GET /api/tags {models:[{name, model, modified_at, size, digest, details}]}.
//   - POST /api/embed {model, input} → {model, embeddings:[[…]], prompt_eval_count}.
//   - An unknown model: 404 {"error":"model \"x\" not found, try pulling it first"}.
//
// The answer is Content(label) with label the bearer token if one was sent,
// else "ollama:<model>"; with tools and a user turn last it calls the first
// tool with {"city":"Paris"}; after a tool result it says
// ToolResultText(result). The model OllamaTruncatedModel streams without its
// done line; OllamaErrorModel streams an error line mid-answer.
const (
	OllamaTruncatedModel = "llama-truncated"
	OllamaErrorModel     = "llama-crash"
)

// OllamaModels are the models /api/tags lists (and /api/chat serves).
func OllamaModels() []string {
	return []string{"llama3.2:latest", "qwen3:8b", "nomic-embed-text:latest", OllamaTruncatedModel, OllamaErrorModel}
}

func ollamaError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func ollamaLabel(r *http.Request, model string) string {
	if k, ok := apiKey(r, FormatOpenAI); ok {
		return k
	}
	return "ollama:" + model
}

func knownOllamaModel(m string) bool {
	for _, k := range OllamaModels() {
		if k == m || strings.TrimSuffix(k, ":latest") == m {
			return true
		}
	}
	return false
}

// ollamaTags serves GET /api/tags.
func (u *Upstream) ollamaTags(w http.ResponseWriter, r *http.Request) {
	var models []map[string]any
	for _, m := range OllamaModels() {
		models = append(models, map[string]any{"name": m, "model": m, "modified_at": "2026-11-01T10:00:00Z", "size": 2019393189,
			"digest": "a80c4f17acd5", "details": map[string]any{"format": "gguf", "family": "llama", "parameter_size": "3.2B", "quantization_level": "Q4_K_M"}})
	}
	writeJSON(w, map[string]any{"models": models})
}

// ollamaEmbed serves POST /api/embed.
func (u *Upstream) ollamaEmbed(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil {
		ollamaError(w, http.StatusBadRequest, "invalid request body")
		return
	}
	u.begin(ollamaLabel(r, req.Model), r.URL.Path, r.Header, body, req.Model, false)
	defer u.end()
	if !knownOllamaModel(req.Model) {
		ollamaError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", req.Model))
		return
	}
	var inputs []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		inputs = []string{one}
	} else if json.Unmarshal(req.Input, &inputs) != nil {
		ollamaError(w, http.StatusBadRequest, "invalid input type")
		return
	}
	vecs := make([][]float64, len(inputs))
	for i, in := range inputs {
		vecs[i] = vector(in)
	}
	writeJSON(w, map[string]any{"model": req.Model, "embeddings": vecs, "prompt_eval_count": len(inputs) * 2})
}

// ollamaChatRequest is what the fake reads of /api/chat.
type ollamaChatRequest struct {
	Model    string `json:"model"`
	Stream   *bool  `json:"stream"`
	Think    any    `json:"think"`
	Messages []struct {
		Role      string   `json:"role"`
		Content   string   `json:"content"`
		Images    []string `json:"images"`
		ToolName  string   `json:"tool_name"`
		ToolCalls []struct {
			Function struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// ollamaChat serves POST /api/chat.
func (u *Upstream) ollamaChat(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		ollamaError(w, http.StatusBadRequest, "invalid request body")
		return
	}
	var req ollamaChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		// Ollama's decoder: a string where an object belongs is a 400.
		ollamaError(w, http.StatusBadRequest, err.Error())
		return
	}
	label := ollamaLabel(r, req.Model)
	u.begin(label, r.URL.Path, r.Header, body, req.Model, false)
	defer u.end()
	switch {
	case req.Model == "":
		ollamaError(w, http.StatusBadRequest, "model is required")
		return
	case !knownOllamaModel(req.Model):
		ollamaError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", req.Model))
		return
	case len(req.Messages) == 0:
		ollamaError(w, http.StatusBadRequest, "messages are required")
		return
	}
	for _, m := range req.Messages {
		for _, img := range m.Images {
			if _, err := base64.StdEncoding.DecodeString(img); err != nil {
				ollamaError(w, http.StatusBadRequest, "illegal base64 data in an image")
				return
			}
		}
	}
	last := req.Messages[len(req.Messages)-1]
	text := Content(label)
	var calls []map[string]any
	switch {
	case last.Role == "tool":
		if last.ToolName == "" {
			ollamaError(w, http.StatusBadRequest, "a tool message needs tool_name")
			return
		}
		text = ToolResultText(last.Content)
	case last.Role == "user" && len(req.Tools) > 0:
		text = ""
		calls = []map[string]any{{"function": map[string]any{"name": req.Tools[0].Function.Name, "arguments": map[string]any{"city": "Paris"}}}}
	}
	thinking := ""
	if req.Think != nil && req.Think != false {
		thinking = "Let me think."
	}
	stream := req.Stream == nil || *req.Stream
	now := time.Now().UTC().Format(time.RFC3339Nano)
	final := map[string]any{"model": req.Model, "created_at": now, "done": true, "done_reason": "stop",
		"total_duration": 1200000, "prompt_eval_count": 12, "eval_count": 7}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if thinking != "" {
			msg["thinking"] = thinking
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		final["message"] = msg
		writeJSON(w, final)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	flusher, _ := w.(http.Flusher)
	line := func(v map[string]any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
		if flusher != nil {
			flusher.Flush()
		}
	}
	piece := func(msg map[string]any) {
		msg["role"] = "assistant"
		if _, ok := msg["content"]; !ok {
			msg["content"] = ""
		}
		line(map[string]any{"model": req.Model, "created_at": now, "message": msg, "done": false})
	}
	if thinking != "" {
		piece(map[string]any{"thinking": thinking})
	}
	for i := 0; i < len(text); i += 4 {
		piece(map[string]any{"content": text[i:min(i+4, len(text))]})
		if req.Model == OllamaErrorModel && i == 4 {
			line(map[string]any{"error": "llama runner process has terminated: exit status 2"})
			return
		}
	}
	if calls != nil {
		piece(map[string]any{"tool_calls": calls})
	}
	if req.Model == OllamaTruncatedModel {
		return // the connection ends before the done line
	}
	final["message"] = map[string]any{"role": "assistant", "content": ""}
	line(final)
}
