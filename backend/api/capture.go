package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/store"
)

// captureInput is PATCH /api/capture: absent fields keep their value. until
// is an RFC 3339 time or Unix ms (null: until switched off); forMinutes
// (1..10080) sets until that many minutes from now.
type captureInput struct {
	Enabled          *bool           `json:"enabled"`
	Until            json.RawMessage `json:"until"`
	ForMinutes       *int            `json:"forMinutes"`
	KeyIDs           *[]string       `json:"keyIds"`
	Models           *[]string       `json:"models"`
	RetentionMinutes *int            `json:"retentionMinutes"`
	MaxBodyBytes     *int            `json:"maxBodyBytes"`
	MaxTotalBytes    *int64          `json:"maxTotalBytes"`
}

func (a *API) captureJSON() map[string]any {
	c := a.Capture.Config()
	return map[string]any{"enabled": c.Enabled, "active": a.Capture.Active(), "until": rfc3339(c.UntilMs), "keyIds": c.KeyIDs,
		"models": c.Models, "retentionMinutes": c.RetentionMinutes, "maxBodyBytes": c.MaxBodyBytes, "maxTotalBytes": c.MaxTotalBytes}
}

// getCapture serves GET /api/capture: when bodies are captured and how long they are kept.
func (a *API) getCapture(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, a.captureJSON())
}

// patchCapture serves PATCH /api/capture.
func (a *API) patchCapture(w http.ResponseWriter, r *http.Request) {
	var in captureInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	c := a.Capture.Config()
	if in.Enabled != nil {
		c.Enabled = *in.Enabled
	}
	if len(in.Until) > 0 {
		ms, err := parseUntil(in.Until)
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		c.UntilMs = ms
	}
	if in.ForMinutes != nil {
		if *in.ForMinutes < 1 || *in.ForMinutes > 7*24*60 {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_FIELD", "forMinutes must be between 1 and 10080").WithParam("forMinutes"))
			return
		}
		c.UntilMs = a.Clock.Now().Add(time.Duration(*in.ForMinutes) * time.Minute).UnixMilli()
	}
	if in.KeyIDs != nil {
		keys, err := a.Store.APIKeys()
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		for _, id := range *in.KeyIDs {
			if !slices.ContainsFunc(keys, func(k store.APIKey) bool { return k.ID == id }) {
				httpx.WriteError(w, errs.New(errs.Invalid, "UNKNOWN_KEY", "keyIds names an unknown key %q", truncate(id, 40)).WithParam("keyIds"))
				return
			}
		}
		c.KeyIDs = *in.KeyIDs
	}
	if in.Models != nil {
		c.Models = *in.Models
	}
	if in.RetentionMinutes != nil {
		c.RetentionMinutes = *in.RetentionMinutes
	}
	if in.MaxBodyBytes != nil {
		c.MaxBodyBytes = *in.MaxBodyBytes
	}
	if in.MaxTotalBytes != nil {
		c.MaxTotalBytes = *in.MaxTotalBytes
	}
	if err := a.Capture.Set(c); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, a.captureJSON())
}

// parseUntil reads until: null (no end), Unix ms or an RFC 3339 time.
func parseUntil(raw json.RawMessage) (int64, error) {
	bad := errs.New(errs.Invalid, "INVALID_FIELD", "until must be an RFC 3339 time, Unix milliseconds or null").WithParam("until")
	if string(raw) == "null" {
		return 0, nil
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		if n <= 0 {
			return 0, bad
		}
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, bad
	}
	ms, ok := parseInstant(s)
	if !ok {
		return 0, bad
	}
	return ms, nil
}

// requestBodies serves GET /api/logs/{requestId}/bodies: the request's
// captured bodies, redacted (404 BODIES_NOT_FOUND: none, or expired).
func (a *API) requestBodies(w http.ResponseWriter, r *http.Request) {
	b, err := a.Capture.Get(mux.Vars(r)["requestId"])
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"requestId": b.RequestID, "createdAt": rfc3339(b.CreatedAt),
		"apiKeyId": b.APIKeyID, "model": b.Model, "clientFormat": b.ClientFormat, "upstreamFormat": b.UpstreamFormat, "stream": b.Stream,
		"clientRequest": b.ClientRequest, "upstreamRequest": b.UpstreamRequest, "upstreamResponse": b.UpstreamResponse,
		"clientResponse": b.ClientResponse, "bytes": b.Bytes, "truncatedBytes": b.Truncated})
}
