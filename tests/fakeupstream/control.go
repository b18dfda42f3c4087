package fakeupstream

import (
	"encoding/json"
	"maps"
	"net/http"
)

// FaultRequest is the body of POST /_fake/faults.
type FaultRequest struct {
	// Key is the API key the fault applies to; "*" means every key.
	Key string `json:"key"`
	// Fault is the misbehaviour to install.
	Fault Fault `json:"fault"`
	// Append adds the fault after the key's existing ones (AddFault) instead
	// of replacing them (SetFault).
	Append bool `json:"append,omitempty"`
}

// Stats is the body of GET /_fake/stats.
type Stats struct {
	// Hits counts the /v1 requests received per API key.
	Hits map[string]int `json:"hits"`
	// InFlight is how many /v1 requests are being handled.
	InFlight int `json:"inFlight"`
	// PeakInFlightByModel is the most completion requests seen in flight at
	// once per model.
	PeakInFlightByModel map[string]int `json:"peakInFlightByModel"`
	// Canceled counts completion requests whose client went away before the answer ended.
	Canceled int `json:"canceled"`
}

// LastRequestInfo is the body of GET /_fake/last?key=K: what the last request
// carrying K looked like.
type LastRequestInfo struct {
	// Headers are the request headers as received.
	Headers http.Header `json:"headers"`
	// Body is the request body as received.
	Body string `json:"body"`
	// Path is the request's URL path, e.g. "/v1/chat/completions".
	Path string `json:"path"`
	// Model is the model field of the body ("" if none).
	Model string `json:"model"`
}

// Config is the body of POST /_fake/config; zero fields are left unchanged.
type Config struct {
	// StreamChunks sets the number of content chunks of streamed answers.
	StreamChunks int `json:"streamChunks,omitempty"`
	// Models sets the GET /v1/models list.
	Models []string `json:"models,omitempty"`
	// ModelsPageSize pages the Anthropic-format model list (has_more /
	// after_id) this many models at a time; 0 answers one page.
	ModelsPageSize int `json:"modelsPageSize,omitempty"`
	// ToolCalls scripts tool calls (SetToolCalls): tool name → JSON arguments.
	ToolCalls map[string]string `json:"toolCalls,omitempty"`
	// GeminiModels sets the GET /v1beta/models list (SetGeminiModels).
	GeminiModels []string `json:"geminiModels,omitempty"`
	// AWSCredentials registers access key ids (SetAWSCredentials): key id →
	// its secret and optional session token.
	AWSCredentials map[string]AWSCredential `json:"awsCredentials,omitempty"`
}

// AWSCredential is an access key id's secret and session token ("" : none).
type AWSCredential struct {
	Secret       string `json:"secret"`
	SessionToken string `json:"sessionToken,omitempty"`
}

// control registers the /_fake/ API that out-of-process tests use to script
// the fake the way in-process tests call its methods.
func (u *Upstream) control(mux *http.ServeMux) {
	mux.HandleFunc("POST /_fake/faults", func(w http.ResponseWriter, r *http.Request) {
		var req FaultRequest
		if !decode(w, r, &req) {
			return
		}
		if req.Key == "" {
			controlError(w, http.StatusBadRequest, "key is required (\"*\" for every key)")
			return
		}
		if err := req.Fault.Validate(); err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
		u.installFault(req.Key, req.Fault, req.Append)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_fake/faults", func(w http.ResponseWriter, r *http.Request) {
		writeControlJSON(w, map[string]any{"faults": u.Faults()})
	})
	mux.HandleFunc("DELETE /_fake/faults", func(w http.ResponseWriter, r *http.Request) {
		if key := r.URL.Query().Get("key"); key != "" {
			u.ClearFault(key)
		} else {
			u.ClearFaults()
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_fake/stats", func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		st := Stats{InFlight: u.inflight, PeakInFlightByModel: maps.Clone(u.modelPeak), Canceled: u.canceled}
		u.mu.Unlock()
		st.Hits = u.AllHits()
		writeControlJSON(w, st)
	})
	mux.HandleFunc("GET /_fake/last", func(w http.ResponseWriter, r *http.Request) {
		rec, ok := u.lastRecord(r.URL.Query().Get("key"))
		if !ok {
			controlError(w, http.StatusNotFound, "no request recorded for this key")
			return
		}
		writeControlJSON(w, LastRequestInfo{Headers: rec.header, Body: string(rec.body), Path: rec.path, Model: rec.model})
	})
	mux.HandleFunc("POST /_fake/reset", func(w http.ResponseWriter, r *http.Request) {
		u.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /_fake/config", func(w http.ResponseWriter, r *http.Request) {
		var c Config
		if !decode(w, r, &c) {
			return
		}
		if c.StreamChunks != 0 {
			u.SetStreamChunks(c.StreamChunks)
		}
		if c.Models != nil {
			u.SetModels(c.Models)
		}
		if c.GeminiModels != nil {
			u.SetGeminiModels(c.GeminiModels)
		}
		if c.ModelsPageSize != 0 {
			u.SetModelsPageSize(c.ModelsPageSize)
		}
		if c.ToolCalls != nil {
			u.SetToolCalls(c.ToolCalls)
		}
		for id, cred := range c.AWSCredentials {
			u.SetAWSCredentials(id, cred.Secret, cred.SessionToken)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		controlError(w, http.StatusBadRequest, "bad JSON: "+err.Error())
		return false
	}
	return true
}

func writeControlJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(mustJSON(v))
}

func controlError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mustJSON(map[string]string{"error": msg}))
}
