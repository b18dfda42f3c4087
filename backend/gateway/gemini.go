package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/translate"
	tgemini "omniroute/backend/translate/gemini"
)

// GeminiPrefix is the path under which the Gemini-native API is served
// (Google's generativelanguage v1beta: the Gemini CLI's and the @google/genai
// SDK's default version).
const GeminiPrefix = "/v1beta/models"

// GeminiV1Prefix is the same API under Google's v1 (the @google/genai SDK's
// default): POST /v1/models/{model}:{method}, and GET /v1/models and
// /v1/models/{model} for a Google client (see GoogleCaller; OpenAI's shapes
// for others).
const GeminiV1Prefix = "/v1/models/"

// geminiCall is what a Gemini-native route reads from its URL instead of the
// body: the model, whether the answer streams and in which framing.
// For an embeddings request to a Gemini upstream, model is the target's
// model instead (the batch names it in the body).
type geminiCall struct {
	model   string
	stream  bool
	framing tgemini.Framing
	// one is an :embedContent call (one content, one embedding); a
	// :batchEmbedContents call has it false.
	one bool
}

// GeminiFor serves the Gemini-native API for client c:
// POST /v1beta/models/{model}:generateContent, :streamGenerateContent (SSE
// with ?alt=sse, one JSON array without it) and :countTokens, and
// GET /v1beta/models/{model}. The model comes from the URL; a "model" in the
// body is never routed on.
func (g *Gateway) GeminiFor(w http.ResponseWriter, r *http.Request, c Client) {
	model, method, err := geminiTarget(r)
	if err == nil && method == "" && r.Method != http.MethodGet {
		err = errs.New(errs.NotFound, "ROUTE_NOT_FOUND", "POST %s needs a method: models/{model}:generateContent, :streamGenerateContent or :countTokens", GeminiPrefix+"/{model}")
	}
	if err != nil {
		g.armWrite(w)
		writeError(w, translate.Gemini, 0, err)
		return
	}
	switch method {
	case "":
		g.geminiModel(w, r, c, model)
	case "generateContent":
		g.serveGemini(w, r, c, geminiCall{model: model})
	case "streamGenerateContent":
		call := geminiCall{model: model, stream: true, framing: tgemini.FramingJSONArray}
		switch alt := r.URL.Query().Get("alt"); alt {
		case "sse":
			call.framing = tgemini.FramingSSE
		case "", "json":
		default:
			g.armWrite(w)
			writeError(w, translate.Gemini, 0, errs.New(errs.Invalid, "INVALID_ARGUMENT",
				"alt=%q is not served: use alt=sse or no alt (a JSON array)", truncateMsg(alt)).WithParam("alt"))
			return
		}
		g.serveGemini(w, r, c, call)
	case "countTokens":
		g.geminiCountTokens(w, r)
	case "embedContent", "batchEmbedContents":
		g.serveAs(w, r, translate.GeminiEmbedIn, c, geminiCall{model: model, one: method == "embedContent"})
	default:
		g.armWrite(w)
		writeError(w, translate.Gemini, 0, errs.New(errs.NotFound, "ROUTE_NOT_FOUND",
			"method %q is not served; use generateContent, streamGenerateContent, countTokens, embedContent or batchEmbedContents", truncateMsg(method)))
	}
}

// geminiTarget reads the model and method of a /v1beta/models/{model}:{method}
// path (method "" for a bare model). The name is read from the decoded path
// and refused with a 400 when it is empty, longer than maxModelLen, holds
// control characters, spaces, '%', '\', an empty or dot segment, or was sent
// with an encoded slash (models/a%2Fb cannot be told from models/a/b).
// Slashes are allowed: provider/model names route as on the other APIs, and
// Google's SDK puts such a name in the path as it is.
func geminiTarget(r *http.Request) (model, method string, err error) {
	rest, ok := strings.CutPrefix(r.URL.Path, GeminiPrefix+"/")
	if !ok {
		rest, ok = strings.CutPrefix(r.URL.Path, GeminiV1Prefix)
	}
	if !ok {
		return "", "", errs.New(errs.NotFound, "ROUTE_NOT_FOUND", "no route %s", truncateMsg(r.URL.Path))
	}
	model = rest
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		model, method = rest[:i], rest[i+1:]
	}
	bad := func(format string, args ...any) error {
		return errs.New(errs.Invalid, "INVALID_MODEL", format, args...).WithParam("model")
	}
	switch {
	case model == "":
		return "", "", bad("the URL names no model: use %s/{model}:generateContent", GeminiPrefix)
	case len(model) > maxModelLen:
		return "", "", bad("the model name in the URL is %d bytes; a model name is at most %d", len(model), maxModelLen)
	case strings.Contains(strings.ToLower(r.URL.RawPath), "%2f"):
		return "", "", bad("the model name in the URL holds an encoded slash (%%2F); write provider/model with a plain slash")
	}
	for i := 0; i < len(model); i++ {
		if c := model[i]; c <= ' ' || c >= 0x7f || c == '%' || c == '\\' {
			return "", "", bad("the model name in the URL holds a character a model name cannot have (byte %d)", i)
		}
	}
	for seg := range strings.SplitSeq(model, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", "", bad("the model name %q in the URL has an empty or dot segment", truncateMsg(model))
		}
	}
	return strings.TrimPrefix(model, "models/"), method, nil
}

// serveGemini serves a generateContent or streamGenerateContent call.
func (g *Gateway) serveGemini(w http.ResponseWriter, r *http.Request, c Client, call geminiCall) {
	g.serveAs(w, r, translate.Gemini, c, call)
}

// serveAs serves a Gemini-native call in client format f.
func (g *Gateway) serveAs(w http.ResponseWriter, r *http.Request, f translate.Format, c Client, call geminiCall) {
	req, err := g.beginCall(w, r, f, c, &call)
	if err == errAnswered {
		req.releaseBody()
		return
	}
	if err == nil {
		defer g.inFlight.Add(-1)
		if g.capture != nil && g.beginCapture(req) {
			g.runCaptured(w, r, req)
			return
		}
		err = g.runWithFallback(w, r, req)
	}
	g.end(w, req, err)
}

// geminiCountTokens serves :countTokens with a local estimate (as
// /v1/messages/count_tokens does): the model's upstream is not asked.
func (g *Gateway) geminiCountTokens(w http.ResponseWriter, r *http.Request) {
	g.countLocally(w, r, translate.Gemini, "INVALID_ARGUMENT", tgemini.CountTokens, func(w http.ResponseWriter, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(tgemini.CountTokensResponse(n))
	})
}

// geminiModelInfo is one model in Google's Model shape.
type geminiModelInfo struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId"`
	Version                    string   `json:"version"`
	DisplayName                string   `json:"displayName"`
	Description                string   `json:"description"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

func geminiModelOf(m model) geminiModelInfo {
	return geminiModelInfo{Name: "models/" + m.ID, BaseModelID: m.ID, Version: "001", DisplayName: m.ID,
		Description:                "served by " + m.OwnedBy + " through OmniRoute",
		SupportedGenerationMethods: []string{"generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"}}
}

// GeminiModels serves GET /v1beta/models: the names of /v1/models in
// Google's list shape ({"models":[{"name":"models/…"}]}).
func (g *Gateway) GeminiModels(w http.ResponseWriter, r *http.Request) {
	list := g.modelList(r)
	out := make([]geminiModelInfo, 0, len(list))
	for _, m := range list {
		out = append(out, geminiModelOf(m))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"models": out})
}

// geminiModel serves GET /v1beta/models/{model}: the one model, or 404 NOT_FOUND.
func (g *Gateway) geminiModel(w http.ResponseWriter, r *http.Request, c Client, name string) {
	list := g.modelList(r.WithContext(WithClient(r.Context(), c)))
	for _, m := range list {
		if m.ID == name {
			httpx.WriteJSON(w, http.StatusOK, geminiModelOf(m))
			return
		}
	}
	writeError(w, translate.Gemini, 0, errs.New(errs.NotFound, "MODEL_NOT_FOUND", "model %q is not served to this key (GET %s lists the models)", truncateMsg(name), GeminiPrefix))
}

// WriteGeminiError writes e in Google's error shape, for the edge's refusals
// on the Gemini-native routes (see writeGeminiError).
func WriteGeminiError(w http.ResponseWriter, e *errs.Error) {
	writeGeminiError(w, httpx.Status(e.Class), e)
}

// WriteGeminiErrorStatus is WriteGeminiError with an explicit status.
func WriteGeminiErrorStatus(w http.ResponseWriter, status int, e *errs.Error) {
	writeGeminiError(w, status, e)
}

// writeGeminiError writes Google's error body
// {"error":{"code":<HTTP status>,"message":…,"status":<google.rpc.Code name>,
// "details":[…]}}: the gateway's own code is the reason of a
// google.rpc.ErrorInfo (domain "omniroute"), and a retry delay a
// google.rpc.RetryInfo, which Google's SDKs and the Gemini CLI read.
func writeGeminiError(w http.ResponseWriter, status int, e *errs.Error) {
	details := []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": e.Code, "domain": "omniroute"}}
	if e.Param != "" {
		details[0]["metadata"] = map[string]string{"param": e.Param}
	}
	if e.RetryAfter > 0 {
		secs := httpx.RetryAfterSeconds(e.RetryAfter)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(secs) + "s"})
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": status, "message": e.Message, "status": tgemini.StatusFor(status), "details": details}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
