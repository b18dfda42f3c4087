package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/errs"
	"omniroute/backend/jsonv"
	"omniroute/backend/providers"
	"omniroute/backend/translate"
	tanthropic "omniroute/backend/translate/anthropic"
	"omniroute/backend/translate/completions"
	tgemini "omniroute/backend/translate/gemini"
	"omniroute/backend/translate/ollama"
	"omniroute/backend/translate/responses"
	"omniroute/backend/translate/sse"
)

// codec converts between the client's wire format and one upstream format,
// through OpenAI Chat as the hub. When both speak the same format the body
// passes through with only "model" rewritten (by the executor).
type codec struct {
	client   translate.Format
	upstream translate.Format
	// now stamps Ollama answers' created_at (nil for other formats).
	now func() time.Time
	// gemini is a Gemini-native client's model, stream flag and framing
	// (from its URL; the body has none).
	gemini geminiCall
	// prefill, when set, is a continuation's delivered text, added to the
	// chat request as a trailing assistant message (Ollama clients: their
	// requests are translated through chat).
	prefill string
}

func newCodec(client translate.Format, upstream providers.Format) codec {
	u := translate.Chat
	switch upstream {
	case providers.FormatAnthropic:
		u = translate.Messages
	case providers.FormatResponses:
		u = translate.Responses
	case providers.FormatGemini:
		u = translate.Gemini
	}
	if (client == translate.Embeddings || client == translate.Completions) && u == translate.Chat {
		u = client // an OpenAI-compatible upstream serves the endpoint itself
	}
	if (client == translate.OllamaEmbed || client == translate.GeminiEmbedIn) && u == translate.Chat {
		u = translate.Embeddings
	}
	if (client == translate.Embeddings || client == translate.OllamaEmbed || client == translate.GeminiEmbedIn) && u == translate.Gemini {
		u = translate.GeminiEmbed // Gemini's batchEmbedContents
	}
	return codec{client: client, upstream: u}
}

// codecFor is the codec of a client request to model on provider p: the
// wire's, with a legacy completion translated through chat when p's
// executor serves chat alone (Provider.ChatOnly), and embeddings left on
// chat, which unsupported() passes over, when it serves none
// (Provider.NoEmbeddings).
func codecFor(client translate.Format, p *providers.Provider, model string) codec {
	c := newCodec(client, p.FormatOf(model))
	switch {
	case c.upstream == translate.Completions && p.ChatOnly:
		c.upstream = translate.Chat
	case c.upstream == translate.Embeddings && p.NoEmbeddings:
		c.upstream = translate.Chat
	}
	return c
}

func (c codec) passthrough() bool { return c.client == c.upstream }

// unsupported reports whether the upstream's wire has no equivalent of the
// client's endpoint at all (embeddings from a chat-only wire): the target is
// passed over for the next, as a wire the gateway cannot speak is.
func (c codec) unsupported() bool {
	return (c.client == translate.Embeddings || c.client == translate.OllamaEmbed || c.client == translate.GeminiEmbedIn) &&
		c.upstream != translate.Embeddings && c.upstream != translate.GeminiEmbed
}

// path is the upstream endpoint of an OpenAI-compatible call ("" for chat),
// or the method of a Gemini embeddings call.
func (c codec) path() string {
	switch c.upstream {
	case translate.GeminiEmbed:
		return providers.GeminiBatchEmbed
	case translate.Embeddings:
		return "/embeddings"
	case translate.Completions:
		return "/completions"
	}
	return ""
}

// anthropicHeaders returns the client's Anthropic protocol headers when the
// body passes through from an Anthropic client to an Anthropic upstream, the
// one case where the client's anthropic-beta and anthropic-version describe
// the body the upstream gets. Otherwise none: a translated body is the
// gateway's own and uses no beta.
func (c codec) anthropicHeaders(h http.Header) providers.AnthropicHeaders {
	if !c.passthrough() || c.client != translate.Messages {
		return providers.AnthropicHeaders{}
	}
	out := providers.AnthropicHeaders{Version: headerToken(h.Get("Anthropic-Version"))}
	for _, v := range h.Values("Anthropic-Beta") {
		if v = headerToken(v); v != "" {
			out.Betas = append(out.Betas, v)
		}
	}
	return out
}

// maxProtocolHeader bounds one forwarded protocol header value.
const maxProtocolHeader = 2048

// headerToken keeps a protocol header value only when it is short printable
// ASCII (dates, beta names and commas), so a malformed client header cannot
// make every upstream attempt fail.
func headerToken(v string) string {
	if len(v) > maxProtocolHeader {
		return ""
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return ""
		}
	}
	return v
}

// errTranslate marks a request the gateway cannot translate (a client error).
var errTranslate = errors.New("request cannot be translated")

// request turns the client body into the upstream body.
func (c codec) request(body []byte) ([]byte, error) {
	if c.passthrough() {
		if c.upstream == translate.Responses && gjson.GetBytes(body, "previous_response_id").String() != "" {
			// The Responses upstream (Codex) stores nothing either: same refusal as a translation.
			return nil, responses.ErrPreviousResponse
		}
		return body, nil
	}
	chat := body
	var err error
	switch c.client {
	case translate.Messages:
		chat, err = tanthropic.RequestToChat(body)
	case translate.Responses:
		chat, err = responses.RequestToChat(body)
	case translate.Completions:
		chat, err = completions.RequestToChat(body)
	case translate.OllamaChat:
		chat, err = ollama.ChatToChat(body)
	case translate.OllamaGenerate:
		chat, err = ollama.GenerateToChat(body)
	case translate.OllamaEmbed:
		if chat, err = ollama.EmbedRequestToOpenAI(body); err != nil || c.upstream != translate.GeminiEmbed {
			return chat, err
		}
	case translate.GeminiEmbedIn:
		if chat, err = tgemini.EmbedRequestToOpenAI(body, c.gemini.model, c.gemini.one); err != nil || c.upstream != translate.GeminiEmbed {
			return chat, err
		}
	case translate.Gemini:
		chat, err = tgemini.RequestToChat(body, c.gemini.model, c.gemini.stream)
	}
	if err == nil && c.prefill != "" {
		chat, err = sjson.SetBytes(chat, "messages.-1", map[string]any{"role": "assistant", "content": c.prefill})
	}
	if err != nil {
		return nil, err
	}
	switch c.upstream {
	case translate.GeminiEmbed:
		// The OpenAI embeddings request; the target's model names each item.
		return tgemini.EmbedRequestFromOpenAI(chat, c.gemini.model)
	case translate.Messages:
		return tanthropic.RequestFromChat(chat)
	case translate.Responses:
		return responses.RequestFromChat(chat)
	case translate.Gemini:
		// The model and stream flag go in the URL (the executor's).
		return tgemini.RequestFromChat(chat)
	}
	return chat, nil
}

// targetBody is the upstream body as one target's wire takes it: a Chat
// body for an OpenAI-wire provider loses the pivot's members that wire does
// not define (Provider.ChatBody); the body is shared by the request's targets
// of one format (upstreamBody), so this is per target.
func targetBody(p *providers.Provider, format providers.Format, c codec, body []byte) ([]byte, error) {
	if c.upstream != translate.Chat || format != providers.FormatOpenAI {
		return body, nil
	}
	out, err := p.ChatBody(body)
	if err != nil {
		return nil, errs.New(errs.Invalid, "UNTRANSLATABLE_REQUEST", "the request cannot be sent to %s: %v", p.ID, err)
	}
	return out, nil
}

// errBadAnswer marks an upstream 2xx body that is not a usable answer.
var errBadAnswer = errors.New("the upstream's 2xx answer is not a complete response")

// checkAnswer rejects a same-format 2xx body that is truncated, an error
// object in disguise, or not the answer shape, so the attempt fails over
// instead of reaching the client as a success.
func (c codec) checkAnswer(body []byte, text string, top *answerTop) error {
	if !jsonv.Valid(body) {
		return errBadAnswer
	}
	// One walk over the top level reads "error" and the member that says
	// what the answer is (a Get of each would scan the whole answer for an
	// "error" it does not have); the first of a repeated key counts, as a Get
	// reads it.
	shape := "choices"
	switch c.upstream {
	case translate.Messages:
		shape = "type"
	case translate.Responses:
		shape = "object"
	case translate.Embeddings:
		shape = "data"
	case translate.Gemini:
		shape = "candidates"
	}
	root := gjson.Parse(text)
	var errField, kind gjson.Result
	top.read = true
	root.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "error" && !errField.Exists():
			errField = v
		case k.Str == shape && !kind.Exists():
			kind = v
		case k.Str == "model" && !top.model.Exists():
			top.model = v
		case k.Str == "usage" && !top.usage.Exists():
			top.usage = v
		}
		return true
	})
	if errField.IsObject() {
		return fmt.Errorf("%w: %s", errBadAnswer, truncateMsg(root.Get("error.message").String()))
	}
	switch c.upstream {
	case translate.Messages:
		if kind.String() != "message" {
			return errBadAnswer
		}
	case translate.Responses:
		if kind.String() != "response" {
			return errBadAnswer
		}
	case translate.Gemini:
		// A blocked prompt answers without candidates, with promptFeedback.
		if !kind.IsArray() && !root.Get("promptFeedback").IsObject() {
			return errBadAnswer
		}
	default:
		if !kind.IsArray() {
			return errBadAnswer
		}
	}
	return nil
}

func truncateMsg(s string) string {
	if len(s) > 300 {
		return s[:300]
	}
	return s
}

// response turns an upstream JSON answer into the client's format. text is
// out as a string (a view of it when out is body, else one copy) that every
// later read of the answer (the check, its model, its usage) goes through,
// where each gjson.GetBytes would copy again.
//
// top is the answer's top-level "model" and "usage" when the check's walk
// read them (a same-format answer: one walk for the check, the served
// model's header and the usage); else top.read is false and they are Gets
// of text (answerTop.get).
func (c codec) response(body, clientReq []byte) (out []byte, text string, top answerTop, err error) {
	if c.passthrough() {
		text = view(body) // body is the answer as read, never modified
		if err := c.checkAnswer(body, text, &top); err != nil {
			return nil, "", answerTop{}, err
		}
		return body, text, top, nil
	}
	if out, err = c.translateResponse(body, clientReq); err != nil {
		return nil, "", answerTop{}, err
	}
	return out, view(out), top, nil // out is the gateway's own, never modified either
}

// answerTop is what the gateway reads of a JSON answer's top level besides
// the check: the model it names and its usage object, the first of a
// repeated key (as a gjson Get reads it).
type answerTop struct {
	model, usage gjson.Result
	read         bool // the check's walk read them: absent means absent
}

// get fills top from text when the check's walk did not (a translated answer).
func (top *answerTop) get(text string) {
	if !top.read {
		top.model, top.usage, top.read = gjson.Get(text, "model"), gjson.Get(text, "usage"), true
	}
}

// view is b as a string without a copy. Only for bytes nobody modifies while
// the string (or any part of it, such as a gjson result) is in use: a body as
// read from the client or the upstream, which the gateway only reads, or an
// event whose text is copied before its buffer is reused.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// translateResponse turns an upstream JSON answer of another format into the client's.
func (c codec) translateResponse(body, clientReq []byte) ([]byte, error) {
	if c.upstream == translate.GeminiEmbed {
		return c.geminiEmbeddings(body, clientReq)
	}
	if c.client == translate.OllamaEmbed {
		return ollama.EmbedResponseFromOpenAI(body)
	}
	if c.client == translate.GeminiEmbedIn {
		return tgemini.EmbedAnswerFromOpenAI(body, c.gemini.one)
	}
	chat := body
	var err error
	switch c.upstream {
	case translate.Messages:
		if chat, err = tanthropic.ResponseToChat(body); err != nil {
			return nil, err
		}
	case translate.Responses:
		if chat, err = responses.ResponseToChat(body); err != nil {
			return nil, err
		}
	case translate.Gemini:
		if chat, err = tgemini.ResponseToChat(body, ""); err != nil {
			return nil, err
		}
	}
	switch c.client {
	case translate.Messages:
		return tanthropic.ResponseFromChat(chat)
	case translate.Responses:
		return responses.ResponseFromChat(chat, clientReq)
	case translate.Completions:
		return completions.ResponseFromChat(chat)
	case translate.OllamaChat:
		return ollama.ResponseFromChat(chat, ollama.Chat, c.now())
	case translate.OllamaGenerate:
		return ollama.ResponseFromChat(chat, ollama.Generate, c.now())
	case translate.Gemini:
		return tgemini.ResponseFromChat(chat)
	}
	return chat, nil
}

// geminiEmbeddings turns a batchEmbedContents answer into the client's
// embeddings answer (OpenAI's, or Ollama's through it). Gemini counts no
// tokens for embeddings: usage is the local estimate of the inputs.
func (c codec) geminiEmbeddings(body, clientReq []byte) ([]byte, error) {
	oai := clientReq
	if c.client == translate.GeminiEmbedIn {
		oai, err := tgemini.EmbedRequestToOpenAI(clientReq, c.gemini.model, c.gemini.one)
		if err != nil {
			return nil, err
		}
		return tgemini.EmbedAnswerFromGemini(body, c.gemini.one, tgemini.EstimateEmbedTokens(oai))
	}
	if c.client == translate.OllamaEmbed {
		var err error
		if oai, err = ollama.EmbedRequestToOpenAI(clientReq); err != nil {
			return nil, err
		}
	}
	b64 := c.client == translate.Embeddings && gjson.GetBytes(clientReq, "encoding_format").String() == "base64"
	out, err := tgemini.EmbeddingsToOpenAI(body, c.gemini.model, b64, tgemini.EstimateEmbedTokens(oai))
	if err != nil || c.client != translate.OllamaEmbed {
		return out, err
	}
	return ollama.EmbedResponseFromOpenAI(out)
}

// stream returns the stream translator, or nil for a passthrough.
func (c codec) stream(model string, clientReq []byte) translate.StreamTranslator {
	if c.passthrough() {
		if c.client == translate.Gemini {
			// Gemini upstreams stream SSE: reframed for the client (a JSON
			// array without alt=sse), usage and the finish read on the way.
			return tgemini.NewStreamReframe(c.gemini.framing)
		}
		return nil
	}
	var toChat translate.StreamTranslator
	switch c.upstream {
	case translate.Messages:
		toChat = tanthropic.NewStreamToChat(model)
	case translate.Responses:
		toChat = responses.NewStreamToChat(model)
	case translate.Gemini:
		toChat = tgemini.NewStreamToChat(model)
	}
	var fromChat translate.StreamTranslator
	switch c.client {
	case translate.Messages:
		fromChat = tanthropic.NewStreamFromChat(model)
	case translate.Responses:
		fromChat = responses.NewStreamFromChat(model, clientReq)
	case translate.Completions:
		fromChat = completions.NewStreamFromChat(model)
	case translate.OllamaChat:
		fromChat = ollama.NewStreamFromChat(model, ollama.Chat, c.now)
	case translate.OllamaGenerate:
		fromChat = ollama.NewStreamFromChat(model, ollama.Generate, c.now)
	case translate.Gemini:
		fromChat = tgemini.NewStreamFromChat(model, c.gemini.framing)
	}
	switch {
	case toChat == nil:
		return fromChat
	case fromChat == nil:
		return toChat
	}
	return &chain{first: toChat, second: fromChat}
}

// chain pipes one translator's output events into another.
type chain struct {
	first, second translate.StreamTranslator
	parser        sse.Parser
	mid           []byte
}

func (c *chain) pipe(dst, mid []byte) ([]byte, error) {
	var err error
	perr := c.parser.Feed(mid, func(ev sse.Event) bool {
		dst, err = c.second.Event(dst, ev)
		return err == nil
	})
	if err != nil {
		return dst, err
	}
	return dst, perr
}

func (c *chain) Event(dst []byte, ev sse.Event) ([]byte, error) {
	mid, err := c.first.Event(c.mid[:0], ev)
	c.mid = mid
	if err != nil {
		return dst, err
	}
	return c.pipe(dst, mid)
}

func (c *chain) End(dst []byte) []byte {
	c.mid = c.first.End(c.mid[:0])
	dst, _ = c.pipe(dst, c.mid)
	return c.second.End(dst)
}

func (c *chain) Complete() bool { return c.first.Complete() }

func (c *chain) Usage() translate.Usage { return c.first.Usage() }
