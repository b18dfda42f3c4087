package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/capture"
	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/jsonv"
	"omniroute/backend/jsonwalk"
	"omniroute/backend/routing"
	"omniroute/backend/translate"
	tanthropic "omniroute/backend/translate/anthropic"
	"omniroute/backend/translate/completions"
	tgemini "omniroute/backend/translate/gemini"
	"omniroute/backend/translate/ollama"
	"omniroute/backend/translate/responses"
)

// request is one client request being served.
type request struct {
	id     string
	start  time.Time
	body   []byte
	model  string
	stream bool
	// hideUsage: a Chat or Completions client streams without asking for
	// usage. The gateway asks the upstream for it all the same (the key is
	// charged from it) and keeps it out of the client's stream.
	hideUsage bool
	client    Client
	format    translate.Format
	attempts  []AttemptRecord
	// firstAttempts backs attempts for the common request of one or two
	// attempts (no allocation per request for them).
	firstAttempts [2]AttemptRecord
	// steps are what the log shows besides attempts: cooldown waits, and the
	// exclusions of a request no target could take.
	steps []AttemptRecord
	log   storeLog
	// hold is what the request holds of its key's budget (Spend.Admit).
	hold Hold
	// relayed is the bytes of answer text the client was sent (a stream's
	// content and tool-call deltas; a JSON answer's text when it reported
	// no usage): what the key is charged for when no usage arrived.
	relayed int
	// upstreamStatus is the upstream's own status for a client error relayed as is.
	upstreamStatus int
	// bodies caches the translated request per upstream format.
	bodies map[translate.Format][]byte
	// plan is the current round's plan (a broken stream's continuation picks
	// its target from it), once planned is set. Held by value: a pointer to
	// the loop's plan would move it to the heap on every request.
	plan    routing.Plan
	planned bool
	// held is the body's share of the byte budget, given back by releaseBody.
	held httpx.Held
	// earlierAttempts counts the attempts of an earlier round (the emergency
	// fallback's round has its own attempt budget; its answer counts them all).
	earlierAttempts int
	// adm is the current candidate's gate and queue admission.
	adm *admission
	// tools is the number of tools in the request (-1: not counted yet).
	tools int
	// gemini is a Gemini-native call's URL part (model, stream, framing).
	gemini geminiCall
	// cap is the request's body capture (nil: not captured).
	cap *capture.Request

	// The first admission, attempt, ticket and candidate list live in the
	// request, saving an allocation each for the common request (one target,
	// one attempt).
	// Each slot serves once and is never reused (a stopped timer's callback
	// may still hold it), so a later admission or attempt gets its own.
	firstAdm     admission
	admUsed      bool
	firstAttempt attemptCtx
	attemptUsed  bool
	firstTicket  routing.Ticket
	ticketUsed   bool
	firstCands   [4]routing.Candidate
	round        round             // the attempt loop's current round (run)
	planIn       routing.PlanInput // what run plans from
	candsUsed    bool
}

// firstSlot returns slot the first time (marking it used), then nil.
func (req *request) firstSlot(used *bool, slot *admission) *admission {
	if *used {
		return nil
	}
	*used = true
	return slot
}

func (req *request) releaseBody() { req.held.Release() }

// decode reads and validates the client body for its format, cheaply: only
// the fields the gateway routes on are read; the rest passes through.
func (g *Gateway) decode(w http.ResponseWriter, r *http.Request, req *request, set *config.General) error {
	body, err := g.readBody(w, r, req, set)
	if err != nil {
		return err
	}
	req.body = body
	if err := checkJSON(body); err != nil {
		return err
	}
	if req.format == translate.Gemini {
		return g.decodeGemini(req)
	}
	if req.format == translate.GeminiEmbedIn {
		return g.decodeGeminiEmbed(req)
	}
	// One walk over the top level reads every field routed on, skipping the
	// rest without parsing it (jsonwalk: long strings by IndexByte), where a
	// Get per field would scan a large body once per field it lacks. checkJSON
	// has refused a key given twice. Views: req.body is never modified.
	var f [6]string
	jsonwalk.Fields(view(body), routedFields[:], f[:])
	m, msgs, in, prev, stream, prompt := f[0], f[1], f[2], f[3], f[4], f[5]
	model := jsonwalk.Str(m)
	if model == "" {
		return errs.New(errs.Invalid, "MODEL_REQUIRED", "field \"model\" must be a non-empty string").WithParam("model")
	}
	if len(model) > maxModelLen {
		return errs.New(errs.Invalid, "INVALID_FIELD", "field \"model\" is %d bytes; a model name is at most %d", len(model), maxModelLen).WithParam("model")
	}
	switch req.format {
	case translate.Chat, translate.Messages:
		if !jsonwalk.IsArray(msgs) {
			return errs.New(errs.Invalid, "MESSAGES_REQUIRED", "field \"messages\" must be an array").WithParam("messages")
		}
		if err := checkMessages(req.format, msgs); err != nil {
			return err
		}
	case translate.Embeddings:
		if !jsonwalk.IsString(in) && !jsonwalk.IsArray(in) {
			return errs.New(errs.Invalid, "INPUT_REQUIRED", "field \"input\" must be a string or an array (of strings or token arrays)").WithParam("input")
		}
		if stream == "true" {
			return errs.New(errs.Invalid, "INVALID_FIELD", "embeddings are not streamed; remove \"stream\"").WithParam("stream")
		}
	case translate.OllamaChat:
		if !jsonwalk.IsArray(msgs) {
			return errs.New(errs.Invalid, "MESSAGES_REQUIRED", "field \"messages\" must be an array").WithParam("messages")
		}
		if err := checkMessages(translate.Chat, msgs); err != nil {
			return err
		}
	case translate.OllamaGenerate:
		if !jsonwalk.IsString(prompt) {
			return errs.New(errs.Invalid, "PROMPT_REQUIRED", "field \"prompt\" must be a string").WithParam("prompt")
		}
	case translate.OllamaEmbed:
		if !jsonwalk.IsString(in) && !jsonwalk.IsArray(in) {
			return errs.New(errs.Invalid, "INPUT_REQUIRED", "field \"input\" must be a string or an array of strings").WithParam("input")
		}
	case translate.Completions:
		if !jsonwalk.IsString(prompt) && !jsonwalk.IsArray(prompt) {
			return errs.New(errs.Invalid, "PROMPT_REQUIRED", "field \"prompt\" must be a string or an array").WithParam("prompt")
		}
	case translate.Responses:
		if !jsonwalk.IsString(in) && !jsonwalk.IsArray(in) {
			return errs.New(errs.Invalid, "INPUT_REQUIRED", "field \"input\" must be a string or an array of items").WithParam("input")
		}
		if jsonwalk.IsString(prev) {
			return errs.New(errs.Invalid, "PREVIOUS_RESPONSE_UNSUPPORTED",
				"previous_response_id is not supported: the gateway keeps no response state; send the full input").WithParam("previous_response_id")
		}
	}
	if stream != "" && stream != "true" && stream != "false" && stream != "null" {
		return errs.New(errs.Invalid, "INVALID_FIELD", "field \"stream\" must be a boolean").WithParam("stream")
	}
	// The model name is copied out of the body (interned: one copy per name):
	// the request log keeps it after the request, and must not keep the whole
	// body alive with it.
	req.model, req.stream = g.models.intern(model), stream == "true"
	if req.format == translate.OllamaChat || req.format == translate.OllamaGenerate {
		req.stream = stream != "false" // Ollama streams unless told not to
	}
	if req.stream && (req.format == translate.Chat || req.format == translate.Completions) {
		req.hideUsage = !gjson.Get(view(req.body), "stream_options.include_usage").Bool()
	}
	if req.hideUsage {
		// Asked once, in the body every attempt and continuation starts
		// from (a translation asks for usage anyway).
		b, err := askUsage(req.body)
		if err != nil {
			return errs.New(errs.Invalid, "INVALID_FIELD", "field \"stream_options\": %v", err).WithParam("stream_options")
		}
		req.body = b
	}
	return nil
}

// decodeGemini checks a Gemini-native body: "contents" an array of objects;
// the model and stream flag are the URL's (geminiTarget checked the name), so
// a "model" in the body is never routed on, and is removed: an upstream
// reading it would serve a model the key's allowedModels never checked. Parts without data ({"text":""},
// which Google refuses) are dropped from the history.
func (g *Gateway) decodeGemini(req *request) error {
	var f [1]string
	jsonwalk.Fields(view(req.body), []string{"contents"}, f[:])
	if !jsonwalk.IsArray(f[0]) || !allObjects(f[0]) {
		return errs.New(errs.Invalid, "INVALID_ARGUMENT", "field \"contents\" must be an array of Content objects").WithParam("contents")
	}
	req.body = tgemini.DropEmptyTextParts(withoutModel(req.body))
	if gjson.GetBytes(req.body, "contents.#").Int() == 0 {
		return errs.New(errs.Invalid, "INVALID_ARGUMENT", "field \"contents\" holds no content with data").WithParam("contents")
	}
	req.model, req.stream = g.models.intern(req.gemini.model), req.gemini.stream
	return nil
}

// decodeGeminiEmbed checks a Gemini client's embedContent body (a
// "content" object) or batchEmbedContents body (a "requests" array); the
// model is the URL's.
func (g *Gateway) decodeGeminiEmbed(req *request) error {
	field, ok := "content", gjson.GetBytes(req.body, "content").IsObject()
	if !req.gemini.one {
		reqs := gjson.GetBytes(req.body, "requests")
		field, ok = "requests", reqs.IsArray() && len(reqs.Array()) > 0
	}
	if !ok {
		what := "a Content object"
		if field == "requests" {
			what = "a non-empty array of EmbedContentRequest objects"
		}
		return errs.New(errs.Invalid, "INVALID_ARGUMENT", "field %q must be %s", field, what).WithParam(field)
	}
	req.model, req.stream = g.models.intern(req.gemini.model), false
	return nil
}

// withoutModel is body (a JSON object) without its top-level "model"
// member, in any spelling a JSON reader matches: escaped ("mod\u0065l") or
// in another case (Go's encoding/json matches names ignoring case).
func withoutModel(body []byte) []byte {
	s := view(body)
	isModel := func(key string) bool { return strings.EqualFold(jsonwalk.Key(key), "model") }
	found := false
	jsonwalk.Members(s, func(key, _ string) int {
		if isModel(key) {
			found = true
			return -1
		}
		return 0
	})
	if !found {
		return body
	}
	out := make([]byte, 0, len(body))
	out = append(out, '{')
	jsonwalk.Members(s, func(key, tail string) int {
		v := jsonwalk.Value(tail)
		if !isModel(key) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, '"')
			out = append(out, key...)
			out = append(out, '"', ':')
			out = append(out, v...)
		}
		return len(v)
	})
	return append(out, '}')
}

// routedFields are the top-level fields decode reads, in the order of its walk.
var routedFields = [6]string{"model", "messages", "input", "previous_response_id", "stream", "prompt"}

// maxModelLen bounds the "model" field: no provider names a model this long,
// and the name is echoed into logs and error messages.
const maxModelLen = 256

// checkJSON runs the one bounded validation on a client body: one JSON object,
// nesting within jsonv.MaxDepth, valid UTF-8, no top-level key twice (a second
// "model" would let the gateway check one model and the upstream read another).
func checkJSON(body []byte) error {
	err := jsonv.CheckRequest(body)
	if err == nil {
		return nil
	}
	e, _ := err.(*jsonv.Error)
	switch {
	case len(body) == 0:
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be valid JSON")
	case e == nil:
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be valid JSON")
	case e.Kind == jsonv.Duplicate:
		return errs.New(errs.Invalid, "DUPLICATE_FIELD", "%s; send each field once", e.Error()).WithParam(e.Key)
	case e.Kind == jsonv.NotObject:
		return errs.New(errs.Invalid, "INVALID_JSON", "request body must be a JSON object")
	case e.Kind == jsonv.TooDeep:
		return errs.New(errs.Invalid, "JSON_TOO_DEEP", "request body nests deeper than %d levels (at byte %d)", jsonv.MaxDepth, e.Offset)
	}
	return errs.New(errs.Invalid, "INVALID_JSON", "request body must be valid JSON: %s", e.Error())
}

// checkMessages checks the shape every translator requires of "messages", so
// a body forwarded as is (client and upstream speak the same format) has
// passed the same checks as one that is translated: each message an object
// with a string role, content a string or an array of objects (Chat also
// accepts null or no content, for tool-call turns).
func checkMessages(format translate.Format, msgs string) error {
	var err error
	i := 0
	jsonwalk.Elements(msgs, func(m string) int {
		n := i
		i++
		p := func() string { return "messages[" + itoa(n) + "]" } // built only for an error
		if !jsonwalk.IsObject(m) {
			err = errs.New(errs.Invalid, "INVALID_FIELD", "%s must be an object", p()).WithParam(p())
			return -1
		}
		// The first "role" and "content" count, as a JSON reader's Get finds them.
		var f [2]string
		size := jsonwalk.Fields(m, []string{"role", "content"}, f[:])
		role, content := f[0], f[1]
		if jsonwalk.Str(role) == "" {
			err = errs.New(errs.Invalid, "INVALID_FIELD", "%s.role must be a non-empty string", p()).WithParam(p() + ".role")
			return -1
		}
		ok := jsonwalk.IsString(content) || jsonwalk.IsArray(content) && allObjects(content)
		if format == translate.Chat {
			ok = ok || content == "" || content == "null"
		}
		if !ok {
			err = errs.New(errs.Invalid, "INVALID_FIELD", "%s.content must be a string or an array of content parts", p()).WithParam(p() + ".content")
			return -1
		}
		return size
	})
	return err
}

// allObjects reports whether every element of the raw array arr is an object.
func allObjects(arr string) bool {
	ok := true
	jsonwalk.Elements(arr, func(v string) int {
		ok = jsonwalk.IsObject(v)
		if !ok {
			return -1
		}
		return 0
	})
	return ok
}

// upstreamBody translates the client body for one upstream format, once per request.
func (req *request) upstreamBody(c codec) ([]byte, error) {
	b, ok := req.bodies[c.upstream]
	if ok {
		return b, nil
	}
	b, err := c.request(req.body)
	if err != nil {
		code := "UNTRANSLATABLE_REQUEST"
		switch err {
		case responses.ErrPreviousResponse:
			code = "PREVIOUS_RESPONSE_UNSUPPORTED"
		case completions.ErrFillInTheMiddle, ollama.ErrSuffix:
			code = "FIM_UNSUPPORTED"
		}
		e := errs.New(errs.Invalid, code, "%s", untranslatable(c, err))
		var ie *tanthropic.InputError
		if errors.As(err, &ie) && ie.Kind != "" {
			// error.details.error_code, where Anthropic puts it.
			e.Details = map[string]any{"details": map[string]any{"error_code": ie.Kind}}
		}
		return nil, e
	}
	if c.passthrough() || c.upstream == translate.GeminiEmbed {
		// The client's own body: nothing to keep (no map per same-format
		// request); a Gemini batch names its target's model, not shared.
		return b, nil
	}
	if req.bodies == nil {
		req.bodies = map[translate.Format][]byte{}
	}
	req.bodies[c.upstream] = b
	return b, nil
}

// formatNames are the wire formats as users know them.
var formatNames = map[translate.Format]string{
	translate.Chat:           "OpenAI Chat",
	translate.Messages:       "Anthropic Messages",
	translate.Responses:      "OpenAI Responses",
	translate.Completions:    "OpenAI Completions",
	translate.Embeddings:     "OpenAI Embeddings",
	translate.OllamaChat:     "Ollama chat",
	translate.OllamaGenerate: "Ollama generate",
	translate.OllamaEmbed:    "Ollama embed",
	translate.Gemini:         "Gemini",
	translate.GeminiEmbed:    "Gemini embeddings",
	translate.GeminiEmbedIn:  "Gemini embeddings",
}

// untranslatable says why a request cannot reach an upstream of another wire
// format and what the client can change: the offending part of the request,
// or a model served by a connection that speaks the client's own format
// (where the body passes through untouched).
func untranslatable(c codec, err error) string {
	if err == responses.ErrPreviousResponse || err == completions.ErrFillInTheMiddle || err == ollama.ErrSuffix {
		return err.Error()
	}
	msg := fmt.Sprintf("%s (the model is served by an %s-format connection, which has no equivalent for this part of the request: change or remove it",
		err.Error(), formatNames[c.upstream])
	if c.client == translate.Responses {
		return msg + ")" // no upstream speaks Responses: there is no other model to suggest
	}
	return msg + ", or use a model served by an " + formatNames[c.client] + "-format connection)"
}

// askUsage sets stream_options.include_usage in a Chat or Completions body
// (passed through to an OpenAI-compatible upstream), so a stream whose client
// did not ask for usage still reports it (the key is charged from it; the
// relay keeps it out of the client's stream: hiddenUsage). The client's own
// stream_options are kept; one that is not an object is replaced. A body
// without stream_options (the common case) gets the member appended, as
// sjson would append it, in one allocation (sjson's path walk made eight).
//
//go:noinline
func askUsage(body []byte) ([]byte, error) {
	o := gjson.Get(view(body), "stream_options")
	if !o.Exists() {
		if b, ok := appendMember(body, `"stream_options":{"include_usage":true}`); ok {
			return b, nil
		}
	}
	if o.Exists() && !o.IsObject() {
		return sjson.SetRawBytes(body, "stream_options", []byte(`{"include_usage":true}`))
	}
	return sjson.SetBytes(body, "stream_options.include_usage", true)
}

// appendMember returns a copy of the JSON object body with member added last
// (after a comma unless the object is empty); ok is false when body does not
// end with an object's closing brace.
func appendMember(body []byte, member string) (out []byte, ok bool) {
	end := len(body) - 1
	for end >= 0 && jsonSpace(body[end]) {
		end--
	}
	if end < 1 || body[end] != '}' {
		return nil, false
	}
	prev := end - 1
	for prev >= 0 && jsonSpace(body[prev]) {
		prev--
	}
	out = make([]byte, 0, len(body)+len(member)+1)
	out = append(out, body[:end]...)
	if prev >= 0 && body[prev] != '{' {
		out = append(out, ',')
	}
	out = append(out, member...)
	return append(out, body[end:]...), true
}
