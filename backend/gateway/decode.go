package gateway

import (
	"net/http"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/translate"
	"omniroute/backend/translate/responses"
)

// request is one client request being served.
type request struct {
	id       string
	start    time.Time
	body     []byte
	model    string
	stream   bool
	client   Client
	format   translate.Format
	attempts []AttemptRecord
	// steps are what the log shows besides attempts: cooldown waits, and the
	// exclusions of a request no target could take.
	steps []AttemptRecord
	log   storeLog
	// upstreamStatus is the upstream's own status for a client error relayed as is.
	upstreamStatus int
	// bodies caches the translated request per upstream format.
	bodies map[translate.Format][]byte
}

// decode reads and validates the client body for its format, cheaply: only
// the fields the gateway routes on are read; the rest passes through.
func (g *Gateway) decode(r *http.Request, req *request, limit int64) error {
	body, err := httpx.ReadBody(r, limit)
	if err != nil {
		return err
	}
	if len(body) == 0 || !gjson.ValidBytes(body) {
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be a JSON object")
	}
	m := root.Get("model")
	if m.Type != gjson.String || m.Str == "" {
		return errs.New(errs.Invalid, "MODEL_REQUIRED", "field \"model\" must be a non-empty string").WithParam("model")
	}
	switch req.format {
	case translate.Chat, translate.Messages:
		if msgs := root.Get("messages"); !msgs.IsArray() {
			return errs.New(errs.Invalid, "MESSAGES_REQUIRED", "field \"messages\" must be an array").WithParam("messages")
		}
	case translate.Responses:
		in := root.Get("input")
		if in.Type != gjson.String && !in.IsArray() {
			return errs.New(errs.Invalid, "INPUT_REQUIRED", "field \"input\" must be a string or an array of items").WithParam("input")
		}
		if root.Get("previous_response_id").Type == gjson.String {
			return errs.New(errs.Invalid, "PREVIOUS_RESPONSE_UNSUPPORTED",
				"previous_response_id is not supported: the gateway keeps no response state; send the full input").WithParam("previous_response_id")
		}
	}
	if s := root.Get("stream"); s.Exists() && s.Type != gjson.True && s.Type != gjson.False && s.Type != gjson.Null {
		return errs.New(errs.Invalid, "INVALID_FIELD", "field \"stream\" must be a boolean").WithParam("stream")
	}
	req.body, req.model, req.stream = body, m.Str, root.Get("stream").Bool()
	return nil
}

// upstreamBody translates the client body for one upstream format, once per request.
func (req *request) upstreamBody(c codec) ([]byte, error) {
	if b, ok := req.bodies[c.upstream]; ok {
		return b, nil
	}
	b, err := c.request(req.body)
	if err != nil {
		code := "UNTRANSLATABLE_REQUEST"
		if err == responses.ErrPreviousResponse {
			code = "PREVIOUS_RESPONSE_UNSUPPORTED"
		}
		return nil, errs.New(errs.Invalid, code, "the request cannot be sent to a %s upstream: %s", c.upstream, err.Error())
	}
	if req.bodies == nil {
		req.bodies = map[translate.Format][]byte{}
	}
	req.bodies[c.upstream] = b
	return b, nil
}
