package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/translate"
	tanthropic "omniroute/backend/translate/anthropic"
)

// HeaderWarning carries a non-fatal note about how a request was served.
const HeaderWarning = "X-OmniRoute-Warning"

// Inference is an inference route's handler given its authenticated client
// directly: the edge passes it as an argument instead of attaching it to the
// request's context, which would cost a context value and a copy of the
// request on every call.
type Inference func(w http.ResponseWriter, r *http.Request, c Client)

// ChatCompletions serves POST /v1/chat/completions (OpenAI Chat) for the
// client in r's context (see WithClient).
func (g *Gateway) ChatCompletions(w http.ResponseWriter, r *http.Request) {
	g.ChatCompletionsFor(w, r, ClientFrom(r.Context()))
}

// ChatCompletionsFor serves POST /v1/chat/completions for client c.
func (g *Gateway) ChatCompletionsFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.Chat, c)
}

// Messages serves POST /v1/messages (Anthropic Messages, for Claude Code)
// for the client in r's context.
func (g *Gateway) Messages(w http.ResponseWriter, r *http.Request) {
	g.MessagesFor(w, r, ClientFrom(r.Context()))
}

// MessagesFor serves POST /v1/messages for client c.
func (g *Gateway) MessagesFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.Messages, c)
}

// Responses serves POST /v1/responses (OpenAI Responses, for Codex) for the
// client in r's context.
func (g *Gateway) Responses(w http.ResponseWriter, r *http.Request) {
	g.ResponsesFor(w, r, ClientFrom(r.Context()))
}

// ResponsesFor serves POST /v1/responses for client c.
func (g *Gateway) ResponsesFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.Responses, c)
}

// CompletionsFor serves POST /v1/completions (legacy text completions,
// fill-in-the-middle with "suffix") for client c: passed through to
// OpenAI-compatible upstreams, translated to chat for others when there is
// no suffix.
func (g *Gateway) CompletionsFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.Completions, c)
}

// EmbeddingsFor serves POST /v1/embeddings for client c, with failover over
// the OpenAI-compatible connections that serve the model.
func (g *Gateway) EmbeddingsFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.Embeddings, c)
}

// OllamaChatFor, OllamaGenerateFor and OllamaEmbedFor serve Ollama's
// /api/chat, /api/generate and /api/embed (under /ollama) for client c,
// translated to and from every upstream wire.
func (g *Gateway) OllamaChatFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.OllamaChat, c)
}

func (g *Gateway) OllamaGenerateFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.OllamaGenerate, c)
}

func (g *Gateway) OllamaEmbedFor(w http.ResponseWriter, r *http.Request, c Client) {
	g.serve(w, r, translate.OllamaEmbed, c)
}

// CountTokens serves POST /v1/messages/count_tokens with a local estimate.
func (g *Gateway) CountTokens(w http.ResponseWriter, r *http.Request) {
	g.countLocally(w, r, translate.Messages, "INVALID_REQUEST", tanthropic.CountTokens, func(w http.ResponseWriter, n int) {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"input_tokens": n})
	})
}

// countLocally answers a token count with a local estimate, no upstream
// asked: count reads the body (its error is the client's: code, in format
// f's error shape), write answers the count n.
func (g *Gateway) countLocally(w http.ResponseWriter, r *http.Request, f translate.Format, code string,
	count func([]byte) (int, error), write func(w http.ResponseWriter, n int)) {
	req := &request{}
	defer req.releaseBody()
	body, err := g.readBody(w, r, req, g.general())
	if err == nil {
		err = checkJSON(body)
	}
	var n int
	if err == nil {
		if n, err = count(body); err != nil {
			err = errs.New(errs.Invalid, code, "%s", err.Error())
		}
	}
	g.armWrite(w)
	if err != nil {
		writeError(w, f, 0, err)
		return
	}
	w.Header().Set(HeaderWarning, "token count is a local estimate")
	write(w, n)
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, format translate.Format, client Client) {
	// No Gemini call: nil, not a literal (its temporary would sit in this
	// frame, under every open stream).
	req, err := g.beginCall(w, r, format, client, nil)
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

// errAnswered is begin's refusal that it answered itself.
var errAnswered = errors.New("answered")

// beginCall reads and checks the request and takes an in-flight slot (err nil);
// call is a Gemini-native call's URL facts (nil for other formats).
// The body is read (under its deadline and the byte budget) before the slot
// is taken: a slow sender holds no slot.
//
//go:noinline
func (g *Gateway) beginCall(w http.ResponseWriter, r *http.Request, format translate.Format, client Client, call *geminiCall) (*request, error) {
	set := g.general()
	// Set field by field: a literal of the whole request may be built on
	// this frame first (3.5 KB of stack under a streaming request's frames).
	req := new(request)
	req.start, req.client, req.format, req.tools = g.clk.Now(), client, format, -1
	req.id, _ = r.Context().Value(requestIDKey{}).(string) // "": made with the log row
	req.attempts = req.firstAttempts[:0]
	if call != nil {
		req.gemini = *call // a Gemini-native call's model and stream flag (from its URL)
	}
	if err := g.decode(w, r, req, set); err != nil {
		return req, err
	}
	if n := g.inFlight.Add(1); n > int64(set.MaxInFlight) {
		g.inFlight.Add(-1)
		g.armWrite(w)
		writeError(w, format, 0, errs.New(errs.Unavailable, "GATEWAY_SATURATED",
			"the gateway is serving %d requests, its limit (maxInFlight); retry shortly", set.MaxInFlight).WithRetryAfter(time.Second))
		return req, errAnswered // refused at the door: not a request to log
	}
	if format == translate.Responses && gjson.GetBytes(req.body, "background").Bool() {
		w.Header().Set(HeaderWarning, "background responses are served synchronously")
	}
	return req, nil
}

// end answers a request that failed and writes its log row; the body's
// bytes go back to the budget.
//
//go:noinline
func (g *Gateway) end(w http.ResponseWriter, req *request, err error) {
	defer req.releaseBody()
	if err != nil {
		e := errs.As(err)
		req.log.Status = httpx.Status(e.Class)
		req.log.ErrorCode = e.Code
		g.armWrite(w)
		writeError(w, req.format, req.upstreamStatus, e)
	}
	g.finishLog(req)
}

// writeError writes the error envelope; Anthropic clients also get the
// top-level "type":"error" their SDKs look for. status, when non-zero,
// replaces the class's status (an upstream's own client error).
func writeError(w http.ResponseWriter, format translate.Format, status int, err error) {
	e := errs.As(err)
	if status == 0 {
		status = httpx.Status(e.Class)
	}
	if e.NoRetry {
		w.Header().Set("X-Should-Retry", "false")
	}
	if translate.IsGemini(format) {
		writeGeminiError(w, status, e)
		return
	}
	if translate.IsOllama(format) {
		// Ollama's clients read {"error": "…"}; the code leads the message.
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(httpx.RetryAfterSeconds(e.RetryAfter)))
		}
		httpx.WriteJSON(w, status, map[string]any{"error": e.Code + ": " + e.Message})
		return
	}
	if format != translate.Messages {
		httpx.WriteOpenAIError(w, status, e)
		return
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(httpx.RetryAfterSeconds(e.RetryAfter)))
	}
	root := map[string]any{"type": "error", "error": httpx.ErrorBody(e)}
	for k, v := range e.Top {
		root[k] = v
	}
	httpx.WriteJSON(w, status, root)
}
