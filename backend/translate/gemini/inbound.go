package gemini

import (
	"bytes"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// dataKeys are the members of a Part that hold its data (Google's oneof
// "data"); a part with none of them, or only an empty text, is refused by
// Google ("required oneof field 'data' must have one initialized field").
var dataKeys = []string{"inlineData", "inline_data", "functionCall", "function_call",
	"functionResponse", "function_response", "fileData", "file_data", "executableCode",
	"executable_code", "codeExecutionResult", "code_execution_result"}

// emptyPart reports whether p is a part with no data: an empty text (with at
// most a thought flag or signature) and nothing else.
func emptyPart(p gjson.Result) bool {
	if !p.IsObject() {
		return false
	}
	t := p.Get("text")
	if t.Type != gjson.String || t.Str != "" {
		return false
	}
	for _, k := range dataKeys {
		if p.Get(k).Exists() {
			return false
		}
	}
	return true
}

// DropEmptyTextParts removes the parts that hold no data ({"text":""}, as a
// Gemini client keeps from an answer's last chunk and sends back in its
// history) from a generateContent body's contents, and the contents left
// with no part, so the body can go to Gemini as it is. A body with no such
// part is returned unchanged (no copy). The body must be valid JSON.
func DropEmptyTextParts(body []byte) []byte {
	if !bytes.Contains(body, []byte(`""`)) {
		return body
	}
	root := gjson.ParseBytes(body)
	contents := root.Get("contents")
	if !contents.IsArray() {
		return body
	}
	found := false
	contents.ForEach(func(_, c gjson.Result) bool {
		c.Get("parts").ForEach(func(_, p gjson.Result) bool {
			found = emptyPart(p)
			return !found
		})
		return !found
	})
	if !found {
		return body
	}
	// Rebuild contents, then the body with contents in place of the old one.
	arr := []byte{'['}
	contents.ForEach(func(_, c gjson.Result) bool {
		parts := c.Get("parts")
		if !c.IsObject() || !parts.IsArray() {
			arr = appendElem(arr, c.Raw)
			return true
		}
		kept := []byte{'['}
		n := 0
		parts.ForEach(func(_, p gjson.Result) bool {
			if !emptyPart(p) {
				kept = appendElem(kept, p.Raw)
				n++
			}
			return true
		})
		if n == 0 {
			return true // a turn of nothing: left out
		}
		kept = append(kept, ']')
		obj := []byte{'{'}
		c.ForEach(func(k, v gjson.Result) bool {
			raw := v.Raw
			if k.Str == "parts" {
				raw = string(kept)
			}
			if len(obj) > 1 {
				obj = append(obj, ',')
			}
			obj = append(obj, k.Raw...)
			obj = append(obj, ':')
			obj = append(obj, raw...)
			return true
		})
		arr = appendElem(arr, string(append(obj, '}')))
		return true
	})
	arr = append(arr, ']')
	out := make([]byte, 0, len(body))
	out = append(out, body[:contents.Index]...)
	out = append(out, arr...)
	return append(out, body[contents.Index+len(contents.Raw):]...)
}

func appendElem(arr []byte, raw string) []byte {
	if len(arr) > 1 {
		arr = append(arr, ',')
	}
	return append(arr, raw...)
}

// NewStreamReframe returns the translator for a Gemini-native client of a
// Gemini upstream: the upstream's ?alt=sse chunks are passed as they are, in
// the client's framing (SSE events, or the elements of one JSON array),
// keep-alive comments dropped. It reads what the gateway needs on the way:
// the finishReason (or a blocked prompt) that makes the stream complete, the
// usageMetadata, and an {"error": …} chunk (an *UpstreamStreamError).
func NewStreamReframe(framing Framing) translate.StreamTranslator {
	return &reframe{framing: framing}
}

type reframe struct {
	framing Framing
	opened  bool
	finish  bool
	closed  bool
	failed  bool
	usage   tokens
	buf     []byte
}

func (s *reframe) Complete() bool         { return s.finish && !s.failed }
func (s *reframe) Usage() translate.Usage { return s.usage.public() }

func (s *reframe) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if s.failed || s.closed || ev.Comment || len(ev.Data) == 0 {
		return dst, nil
	}
	if !jsonv.Valid(ev.Data) {
		s.failed = true
		return dst, &UpstreamStreamError{Message: truncate(string(ev.Data), 500)}
	}
	root := gjson.ParseBytes(ev.Data)
	data := ev.Data
	if root.IsArray() { // one element of the JSON-array framing, sent as an event
		root = root.Get("0")
		data = []byte(root.Raw)
	}
	if e := root.Get("error"); e.Exists() {
		s.failed = true
		return dst, &UpstreamStreamError{Code: e.Get("status").String(), Message: truncate(e.Get("message").String(), 500)}
	}
	if u := pick(root, "usageMetadata", "usage_metadata"); u.IsObject() {
		s.usage.readGemini(u)
	}
	if pick(pick(root, "promptFeedback", "prompt_feedback"), "blockReason", "block_reason").Exists() {
		s.finish = true
	}
	pick(root, "candidates").ForEach(func(_, c gjson.Result) bool {
		if r := pick(c, "finishReason", "finish_reason"); r.String() != "" && r.String() != "FINISH_REASON_UNSPECIFIED" {
			s.finish = true
		}
		return true
	})
	return s.frame(dst, data), nil
}

func (s *reframe) frame(dst, chunk []byte) []byte {
	if s.framing == FramingJSONArray {
		if s.opened {
			dst = append(dst, ",\r\n"...)
		} else {
			dst = append(dst, '[')
		}
		s.opened = true
		return append(dst, chunk...)
	}
	s.opened = true
	return sse.Append(dst, "", chunk)
}

// End closes the JSON array of a complete stream.
func (s *reframe) End(dst []byte) []byte {
	if !s.Complete() || s.closed {
		return dst
	}
	s.closed = true
	if s.framing == FramingJSONArray {
		if !s.opened {
			dst = append(dst, '[')
		}
		dst = append(dst, ']')
	}
	return dst
}

// AppendError ends the stream with a Google error object in its framing.
func (s *reframe) AppendError(dst []byte, httpStatus int, status, message string) []byte {
	if s.closed {
		return dst
	}
	s.closed, s.failed = true, true
	s.buf = AppendError(s.buf[:0], httpStatus, status, message, 0)
	dst = s.frame(dst, s.buf)
	if s.framing == FramingJSONArray {
		dst = append(dst, ']')
	}
	return dst
}
