package api

import (
	"mime"
	"net/http"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// managementBodyLimit bounds management request bodies.
const managementBodyLimit = 1 << 20

// decode reads a JSON management body strictly into v.
func (a *API) decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return errs.New(errs.Unsupported, "CONTENT_TYPE_REQUIRED", "send Content-Type: application/json")
		}
	}
	body, err := httpx.ReadBody(r, managementBodyLimit)
	if err != nil {
		return err
	}
	return httpx.DecodeJSON(body, v)
}
