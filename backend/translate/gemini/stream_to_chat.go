package gemini

import (
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// NewStreamToChat returns a translator from a Gemini streamGenerateContent
// ?alt=sse stream (each data: is one GenerateContentResponse chunk) to OpenAI
// chat.completion.chunk events: a role chunk, content / reasoning_content /
// tool_calls deltas (each functionCall part is one whole tool call), one
// finish chunk when a candidate reports its finishReason (or the prompt is
// blocked), then at End a usage chunk with "choices": [] and "data: [DONE]".
// Gemini has no end-of-stream event: a finishReason is what makes the stream
// Complete. model names the answer until a chunk reports its modelVersion.
func NewStreamToChat(model string) translate.StreamTranslator {
	return &streamToChat{model: model, created: time.Now().Unix()}
}

type streamToChat struct {
	model   string
	id      string
	created int64
	prefix  []byte // `{"id":…,"model":…,"choices":[{"index":0,"delta":`
	tools   int    // tool calls sent so far
	usage   tokens
	started bool // the role chunk was sent
	finish  bool // the finish chunk was sent
	ended   bool // End wrote usage and [DONE]
	failed  bool
	buf     []byte
}

// Complete reports whether a finishReason (or a prompt block) arrived and no error.
func (s *streamToChat) Complete() bool { return s.finish && !s.failed }

// Usage returns the latest usageMetadata seen.
func (s *streamToChat) Usage() translate.Usage { return s.usage.public() }

// End writes the usage chunk and [DONE] after a complete stream.
func (s *streamToChat) End(dst []byte) []byte {
	if !s.Complete() || s.ended {
		return dst
	}
	s.ended = true
	s.buf = append(s.buf[:0], `{"id":`...)
	s.buf = appendString(s.buf, s.id)
	s.buf = append(s.buf, `,"object":"chat.completion.chunk","created":`...)
	s.buf = appendInt(s.buf, int(s.created))
	s.buf = append(s.buf, `,"model":`...)
	s.buf = appendString(s.buf, s.model)
	s.buf = append(s.buf, `,"choices":[],"usage":`...)
	s.buf = appendChatUsage(s.buf, s.usage)
	s.buf = append(s.buf, '}')
	dst = sse.Append(dst, "", s.buf)
	return sse.Append(dst, "", []byte("[DONE]"))
}

// Event translates one upstream chunk; an error chunk becomes an *UpstreamStreamError.
func (s *streamToChat) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if s.failed || s.ended || ev.Comment {
		return dst, nil
	}
	if len(ev.Data) == 0 || !jsonv.Valid(ev.Data) {
		if ev.Event == "error" {
			s.failed = true
			return dst, &UpstreamStreamError{Message: truncate(string(ev.Data), 500)}
		}
		return dst, nil
	}
	root := gjson.ParseBytes(ev.Data)
	if root.IsArray() { // one element of the JSON-array framing, passed whole
		root = root.Get("0")
	}
	if !root.IsObject() {
		return dst, nil
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null || ev.Event == "error" {
		s.failed = true
		msg := e.Get("message").String()
		if msg == "" {
			msg = "the upstream reported an error"
		}
		code := e.Get("status").String()
		if code == "" {
			code = e.Get("code").String()
		}
		return dst, &UpstreamStreamError{Code: code, Message: truncate(msg, 2000)}
	}
	if s.id == "" {
		s.id = pick(root, "responseId", "response_id").String()
	}
	if mv := pick(root, "modelVersion", "model_version").String(); mv != "" && !s.started {
		s.model = mv
	}
	if u := pick(root, "usageMetadata", "usage_metadata"); u.IsObject() {
		s.usage.readGemini(u)
	}
	dst = s.start(dst)
	if s.finish {
		return dst, nil // a usage-only chunk after the end
	}
	cand := firstCandidate(root.Get("candidates"))
	each(cand.Get("content.parts"), func(_ int, p gjson.Result) bool {
		dst = s.part(dst, p)
		return true
	})
	if fr := pick(cand, "finishReason", "finish_reason"); fr.Type == gjson.String && fr.Str != "" && fr.Str != "FINISH_REASON_UNSPECIFIED" {
		s.finish = true
		dst = s.chunk(dst, `{}`, finishReason(fr.Str, s.tools > 0))
	} else if !cand.Exists() && pick(pick(root, "promptFeedback", "prompt_feedback"), "blockReason", "block_reason").String() != "" {
		s.finish = true
		dst = s.chunk(dst, `{}`, "content_filter")
	}
	return dst, nil
}

// part translates one Part of a chunk.
func (s *streamToChat) part(dst []byte, p gjson.Result) []byte {
	if !p.IsObject() {
		return dst
	}
	if fc := pick(p, "functionCall", "function_call"); fc.IsObject() {
		id := fc.Get("id").String()
		if id == "" {
			id = newID(syntheticIDPrefix)
		}
		s.buf = append(s.buf[:0], s.prefix...)
		s.buf = append(s.buf, `{"tool_calls":[{"index":`...)
		s.buf = appendInt(s.buf, s.tools)
		s.buf = append(s.buf, `,"id":`...)
		s.buf = appendString(s.buf, id)
		s.buf = append(s.buf, `,"type":"function","function":{"name":`...)
		s.buf = appendString(s.buf, fc.Get("name").String())
		s.buf = append(s.buf, `,"arguments":`...)
		s.buf = appendString(s.buf, argsToArguments(fc.Get("args")))
		s.buf = append(s.buf, '}')
		if sig := pick(p, "thoughtSignature", "thought_signature").String(); sig != "" {
			s.buf = append(s.buf, `,"extra_content":{"google":{"thought_signature":`...)
			s.buf = appendString(s.buf, sig)
			s.buf = append(s.buf, `}}`...)
		}
		s.buf = append(s.buf, `}]}`...)
		s.tools++
		return s.closeChunk(dst, "")
	}
	t := p.Get("text")
	if t.Type != gjson.String || t.Str == "" {
		return dst // inlineData, executableCode, signature-only parts: no Chat form
	}
	key := "content"
	if p.Get("thought").Bool() {
		key = "reasoning_content"
	}
	s.buf = append(s.buf[:0], s.prefix...)
	s.buf = append(s.buf, `{"`...)
	s.buf = append(s.buf, key...)
	s.buf = append(s.buf, `":`...)
	s.buf = appendString(s.buf, t.Str)
	s.buf = append(s.buf, '}')
	return s.closeChunk(dst, "")
}

// start sends the role chunk once.
func (s *streamToChat) start(dst []byte) []byte {
	if s.started {
		return dst
	}
	s.started = true
	if s.id == "" {
		s.id = newID("chatcmpl-")
	}
	s.prefix = append(s.prefix[:0], `{"id":`...)
	s.prefix = appendString(s.prefix, s.id)
	s.prefix = append(s.prefix, `,"object":"chat.completion.chunk","created":`...)
	s.prefix = appendInt(s.prefix, int(s.created))
	s.prefix = append(s.prefix, `,"model":`...)
	s.prefix = appendString(s.prefix, s.model)
	s.prefix = append(s.prefix, `,"choices":[{"index":0,"delta":`...)
	return s.chunk(dst, `{"role":"assistant","content":""}`, "")
}

// chunk writes one chunk with the given delta JSON and finish reason ("" = null).
func (s *streamToChat) chunk(dst []byte, delta, finish string) []byte {
	s.buf = append(s.buf[:0], s.prefix...)
	s.buf = append(s.buf, delta...)
	return s.closeChunk(dst, finish)
}

func (s *streamToChat) closeChunk(dst []byte, finish string) []byte {
	if finish == "" {
		s.buf = append(s.buf, `,"finish_reason":null}]}`...)
	} else {
		s.buf = append(s.buf, `,"finish_reason":"`...)
		s.buf = append(s.buf, finish...)
		s.buf = append(s.buf, `"}]}`...)
	}
	return sse.Append(dst, "", s.buf)
}
