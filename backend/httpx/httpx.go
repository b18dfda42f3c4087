// Package httpx is the HTTP edge shared by the management API and the inference
// routes: it maps error classes to status codes and writes the one error envelope.
package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/jsonv"
)

// Status maps an error class to its HTTP status.
func Status(c errs.Class) int {
	switch c {
	case errs.Invalid:
		return http.StatusBadRequest
	case errs.TooLarge:
		return http.StatusRequestEntityTooLarge
	case errs.Unsupported:
		return http.StatusUnsupportedMediaType
	case errs.Auth:
		return http.StatusUnauthorized
	case errs.Permission:
		return http.StatusForbidden
	case errs.NotFound:
		return http.StatusNotFound
	case errs.Conflict:
		return http.StatusConflict
	case errs.RateLimited:
		return http.StatusTooManyRequests
	case errs.Unavailable:
		return http.StatusServiceUnavailable
	case errs.Upstream:
		return http.StatusBadGateway
	case errs.Timeout:
		return http.StatusGatewayTimeout
	case errs.ClientTimeout:
		return http.StatusRequestTimeout
	case errs.InsufficientStorage:
		return http.StatusInsufficientStorage
	default:
		return http.StatusInternalServerError
	}
}

func errorType(e *errs.Error) string {
	if e.Type != "" {
		return e.Type
	}
	switch e.Class {
	case errs.Invalid, errs.TooLarge, errs.Unsupported, errs.Conflict, errs.ClientTimeout:
		return "invalid_request_error"
	case errs.Auth:
		return "authentication_error"
	case errs.Permission:
		return "permission_error"
	case errs.NotFound:
		return "not_found_error"
	case errs.RateLimited:
		return "rate_limit_error"
	case errs.Upstream, errs.Unavailable, errs.Timeout:
		return "upstream_error"
	default:
		return "server_error"
	}
}

// RetryAfterSeconds rounds a duration up to whole seconds, at least 1.
func RetryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// WriteError writes err in the envelope {"error":{message,type,code,param,...}}.
func WriteError(w http.ResponseWriter, err error) {
	e := errs.As(err)
	WriteErrorStatus(w, Status(e.Class), e)
}

// ErrorBody is the inner object of the envelope: message, type, code, param and details.
func ErrorBody(e *errs.Error) map[string]any {
	body := map[string]any{"message": e.Message, "type": errorType(e), "code": e.Code}
	if e.Param != "" {
		body["param"] = e.Param
	}
	for k, v := range e.Details {
		body[k] = v
	}
	return body
}

// OpenAIErrorBody is the inner object of the envelope of an OpenAI-format
// client (/v1/chat/completions, /v1/responses, …): ErrorBody with the keys
// OpenAI's reference requires — "param" always (null when no field is at
// fault) — and, for an upstream's error relayed, the upstream's own "code"
// (the gateway's in "omniroute_code").
func OpenAIErrorBody(e *errs.Error) map[string]any {
	body := ErrorBody(e)
	if _, ok := body["param"]; !ok {
		body["param"] = nil
	}
	if e.UpstreamCode != "" {
		body["code"], body["omniroute_code"] = e.UpstreamCode, e.Code
	}
	return body
}

// WriteOpenAIError writes e in an OpenAI-format client's envelope
// (OpenAIErrorBody) with status.
func WriteOpenAIError(w http.ResponseWriter, status int, e *errs.Error) {
	writeErrorBody(w, status, e, OpenAIErrorBody(e))
}

// WriteErrorStatus writes e with an explicit status (e.g. an upstream's own status).
func WriteErrorStatus(w http.ResponseWriter, status int, e *errs.Error) {
	writeErrorBody(w, status, e, ErrorBody(e))
}

func writeErrorBody(w http.ResponseWriter, status int, e *errs.Error, body map[string]any) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds(e.RetryAfter)))
	}
	root := map[string]any{"error": body}
	for k, v := range e.Top {
		root[k] = v
	}
	WriteJSON(w, status, root)
}

// WriteJSON writes v as JSON with status. v is encoded before anything is
// written: a value that cannot be encoded (a +Inf or NaN number) is answered
// 500 in the error envelope (ENCODING_FAILED), never status with an empty
// or cut body.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if err := enc.Encode(v); err != nil {
		h.Del("Retry-After")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, encodingFailed)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// encodingFailed is the envelope of an answer that could not be encoded
// (a literal: the error itself must never fail to encode).
const encodingFailed = `{"error":{"message":"the answer could not be encoded as JSON","type":"server_error","code":"ENCODING_FAILED"}}` + "\n"

// ReadBody reads at most limit bytes of the request body; a larger body is a 413.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, errs.New(errs.TooLarge, "REQUEST_TOO_LARGE", "request body is %d bytes; the limit is %d", r.ContentLength, limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errs.New(errs.TooLarge, "REQUEST_TOO_LARGE", "request body exceeds the limit of %d bytes", limit)
		}
		return nil, errs.New(errs.Invalid, "REQUEST_BODY_UNREADABLE", "could not read the request body")
	}
	return b, nil
}

// DecodeJSON strictly decodes a JSON object body into v (unknown fields rejected).
func DecodeJSON(body []byte, v any) error {
	if len(body) == 0 {
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be a JSON object")
	}
	if err := CheckJSON(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return errs.New(errs.Invalid, "INVALID_FIELD", "field %q must be of type %s", ute.Field, ute.Type.String()).WithParam(ute.Field)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return errs.New(errs.Invalid, "INVALID_JSON", "malformed JSON at byte %d", se.Offset)
		}
		return errs.New(errs.Invalid, "INVALID_JSON", "invalid request body: %s", sanitize(err.Error()))
	}
	if dec.More() {
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must hold exactly one JSON object")
	}
	return nil
}

func sanitize(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// CheckJSON is the bounded validation (backend/jsonv) of a JSON body as a
// client error: 400 JSON_TOO_DEEP past the nesting limit, else INVALID_JSON.
func CheckJSON(body []byte) error {
	err := jsonv.Check(body)
	if err == nil {
		return nil
	}
	if jsonv.Is(err, jsonv.TooDeep) {
		return errs.New(errs.Invalid, "JSON_TOO_DEEP", "request body nests deeper than %d levels", jsonv.MaxDepth)
	}
	return errs.New(errs.Invalid, "INVALID_JSON", "request body must be valid JSON: %s", err.Error())
}
