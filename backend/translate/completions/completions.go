// Package completions translates OpenAI's legacy text completions
// (POST /v1/completions: a "prompt", answers in choices[].text) to and from the
// Chat pivot, for upstreams that serve only chat. Fill-in-the-middle (a
// "suffix") has no chat equivalent and is refused: it needs an upstream that
// serves /completions itself, where the body passes through untouched.
//
// Autocomplete clients (Continue's tab completion, editor plugins) send these.
package completions

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// ErrFillInTheMiddle refuses a "suffix" on the way to a chat-only upstream.
var ErrFillInTheMiddle = errors.New("fill-in-the-middle (\"suffix\") needs an upstream that serves /v1/completions; this model's connection serves chat only")

// InputError says which part of a completions request has no chat equivalent.
type InputError struct{ Field, Why string }

func (e *InputError) Error() string { return "\"" + e.Field + "\" " + e.Why }

// copied are the request fields chat takes under the same name and meaning.
var copied = []string{"max_tokens", "temperature", "top_p", "n", "stop", "presence_penalty",
	"frequency_penalty", "seed", "user", "stream", "stream_options", "logit_bias"}

// RequestToChat turns a completions request into a chat request whose one user
// message is the prompt. The body must have passed jsonv.CheckRequest.
func RequestToChat(body []byte) ([]byte, error) {
	root := gjson.ParseBytes(body)
	if s := root.Get("suffix"); s.Exists() && s.Type != gjson.Null && s.String() != "" {
		return nil, ErrFillInTheMiddle
	}
	for _, f := range []string{"echo", "logprobs", "best_of"} {
		v := root.Get(f)
		if v.Exists() && v.Type != gjson.Null && v.Type != gjson.False && !(f == "best_of" && v.Int() == 1) {
			return nil, &InputError{Field: f, Why: "has no chat equivalent"}
		}
	}
	prompt, err := promptText(root.Get("prompt"))
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"model":    root.Get("model").String(),
		"messages": []map[string]string{{"role": "user", "content": prompt}},
	}
	for _, f := range copied {
		if v := root.Get(f); v.Exists() {
			out[f] = json.RawMessage(v.Raw)
		}
	}
	return json.Marshal(out)
}

// promptText is the one prompt of a request: a string, or an array of one string.
func promptText(p gjson.Result) (string, error) {
	switch {
	case p.Type == gjson.String:
		return p.Str, nil
	case p.IsArray():
		items := p.Array()
		if len(items) == 1 && items[0].Type == gjson.String {
			return items[0].Str, nil
		}
		if len(items) > 1 && items[0].Type == gjson.String {
			return "", &InputError{Field: "prompt", Why: "holds several prompts; a chat upstream answers one (send one request per prompt)"}
		}
	}
	return "", &InputError{Field: "prompt", Why: "must be a string (token arrays need an upstream that serves /v1/completions)"}
}

// finishReason maps chat's finish reasons to completions' (tool calls cannot
// happen: the request offers no tools).
func finishReason(r gjson.Result) any {
	if r.Type != gjson.String {
		return nil
	}
	if r.Str == "length" || r.Str == "content_filter" {
		return r.Str
	}
	return "stop"
}

// ResponseFromChat turns a chat completion into a text completion.
func ResponseFromChat(chat []byte) ([]byte, error) {
	if err := jsonv.Check(chat); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(chat)
	choices := []map[string]any{}
	if !root.Get("choices").IsArray() {
		return nil, errors.New("the chat answer has no choices")
	}
	for _, c := range root.Get("choices").Array() {
		choices = append(choices, map[string]any{
			"text":          c.Get("message.content").String(),
			"index":         c.Get("index").Int(),
			"logprobs":      nil,
			"finish_reason": finishReason(c.Get("finish_reason")),
		})
	}
	if len(choices) == 0 {
		return nil, errors.New("the chat answer has no choices")
	}
	out := map[string]any{
		"id":      root.Get("id").String(),
		"object":  "text_completion",
		"created": root.Get("created").Int(),
		"model":   root.Get("model").String(),
		"choices": choices,
	}
	if u := root.Get("usage"); u.IsObject() {
		out["usage"] = json.RawMessage(u.Raw)
	}
	return json.Marshal(out)
}

// NewStreamFromChat returns a translator from chat.completion.chunk events to
// text_completion events (choices[].text), ending with [DONE]. model names
// the answer until a chunk names the upstream's own.
func NewStreamFromChat(model string) translate.StreamTranslator {
	return &streamFromChat{ChatReader: translate.ChatReader{Model: model}}
}

type streamFromChat struct {
	translate.ChatReader
	buf []byte
}

func (s *streamFromChat) Usage() translate.Usage { return s.ChatReader.Usage }

// End writes [DONE] once, after a complete upstream stream.
func (s *streamFromChat) End(dst []byte) []byte {
	if !s.Complete() || s.Ended {
		return dst
	}
	s.Ended = true
	return sse.Append(dst, "", []byte("[DONE]"))
}

// Event translates one chat chunk.
func (s *streamFromChat) Event(dst []byte, ev sse.Event) ([]byte, error) {
	root, ok, err := s.Next(ev)
	if !ok {
		return dst, err
	}
	s.buf = s.buf[:0]
	s.buf = append(s.buf, `{"id":`...)
	s.buf = translate.AppendJSONString(s.buf, root.Get("id").String())
	s.buf = append(s.buf, `,"object":"text_completion","created":`...)
	s.buf = strconv.AppendInt(s.buf, root.Get("created").Int(), 10)
	s.buf = append(s.buf, `,"model":`...)
	s.buf = translate.AppendJSONString(s.buf, s.Model)
	s.buf = append(s.buf, `,"choices":[`...)
	for i, c := range root.Get("choices").Array() {
		if i > 0 {
			s.buf = append(s.buf, ',')
		}
		s.buf = append(s.buf, `{"text":`...)
		s.buf = translate.AppendJSONString(s.buf, c.Get("delta.content").String())
		s.buf = append(s.buf, `,"index":`...)
		s.buf = strconv.AppendInt(s.buf, c.Get("index").Int(), 10)
		s.buf = append(s.buf, `,"logprobs":null,"finish_reason":`...)
		if fr, ok := finishReason(c.Get("finish_reason")).(string); ok {
			s.SawFinish = true
			s.buf = translate.AppendJSONString(s.buf, fr)
		} else {
			s.buf = append(s.buf, "null"...)
		}
		s.buf = append(s.buf, '}')
	}
	s.buf = append(s.buf, ']')
	if u := root.Get("usage"); u.IsObject() {
		s.buf = append(s.buf, `,"usage":`...)
		s.buf = append(s.buf, u.Raw...)
	}
	s.buf = append(s.buf, '}')
	return sse.Append(dst, "", s.buf), nil
}
