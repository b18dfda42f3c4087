package ollama

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// Kind says which Ollama endpoint an answer is for.
type Kind int

// The two generating endpoints.
const (
	Chat     Kind = iota // /api/chat: the text in message.content
	Generate             // /api/generate: the text in response
)

// doneReason maps a chat finish_reason to Ollama's done_reason.
func doneReason(finish string) string {
	if finish == "length" {
		return "length"
	}
	return "stop"
}

// toolCalls renders chat tool calls as Ollama's: arguments as an object.
func toolCalls(calls []gjson.Result) []map[string]any {
	var out []map[string]any
	for _, c := range calls {
		args := json.RawMessage("{}")
		if a := c.Get("function.arguments").String(); a != "" && jsonv.Valid([]byte(a)) && gjson.Parse(a).IsObject() {
			args = json.RawMessage(a)
		}
		out = append(out, map[string]any{"function": map[string]any{"name": c.Get("function.name").String(), "arguments": args}})
	}
	return out
}

// ResponseFromChat turns a chat completion into the one JSON answer of a
// non-streaming /api/chat or /api/generate. now stamps created_at.
func ResponseFromChat(chat []byte, kind Kind, now time.Time) ([]byte, error) {
	if err := jsonv.Check(chat); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(chat)
	choice := root.Get("choices.0")
	if !choice.Exists() {
		return nil, errors.New("the chat answer has no choices")
	}
	out := map[string]any{
		"model":             root.Get("model").String(),
		"created_at":        now.UTC().Format(time.RFC3339Nano),
		"done":              true,
		"done_reason":       doneReason(choice.Get("finish_reason").String()),
		"prompt_eval_count": root.Get("usage.prompt_tokens").Int(),
		"eval_count":        root.Get("usage.completion_tokens").Int(),
	}
	msg := choice.Get("message")
	if kind == Generate {
		out["response"] = msg.Get("content").String()
		if th := msg.Get("reasoning_content").String(); th != "" {
			out["thinking"] = th
		}
		return json.Marshal(out)
	}
	m := map[string]any{"role": "assistant", "content": msg.Get("content").String()}
	if th := msg.Get("reasoning_content").String(); th != "" {
		m["thinking"] = th
	}
	if calls := msg.Get("tool_calls").Array(); len(calls) > 0 {
		m["tool_calls"] = toolCalls(calls)
	}
	out["message"] = m
	return json.Marshal(out)
}

// NewStreamFromChat returns a translator from chat.completion.chunk events to
// Ollama's NDJSON lines: one line per piece of text or thinking, the tool
// calls whole once their arguments are complete, and the "done" line with the
// counts at the end. now stamps each line's created_at.
func NewStreamFromChat(model string, kind Kind, now func() time.Time) translate.StreamTranslator {
	return &stream{ChatReader: translate.ChatReader{Model: model}, kind: kind, now: now}
}

type pendingCall struct {
	name string
	args []byte
}

type stream struct {
	translate.ChatReader
	kind   Kind
	now    func() time.Time
	finish string
	calls  []pendingCall
}

func (s *stream) Usage() translate.Usage { return s.ChatReader.Usage }

// line appends one NDJSON line for fields (model, created_at and done added).
func (s *stream) line(dst []byte, fields map[string]any, done bool) []byte {
	fields["model"] = s.Model
	fields["created_at"] = s.now().UTC().Format(time.RFC3339Nano)
	fields["done"] = done
	b, _ := json.Marshal(fields)
	return append(append(dst, b...), '\n')
}

// piece writes text or thinking as the endpoint carries it.
func (s *stream) piece(dst []byte, text, thinking string) []byte {
	if s.kind == Generate {
		f := map[string]any{"response": text}
		if thinking != "" {
			f["thinking"] = thinking
		}
		return s.line(dst, f, false)
	}
	m := map[string]any{"role": "assistant", "content": text}
	if thinking != "" {
		m["thinking"] = thinking
	}
	return s.line(dst, map[string]any{"message": m}, false)
}

// End writes the tool calls, if any, and the done line, after a complete stream.
func (s *stream) End(dst []byte) []byte {
	if !s.Complete() || s.Ended {
		return dst
	}
	s.Ended = true
	if len(s.calls) > 0 && s.kind == Chat {
		var calls []map[string]any
		for _, c := range s.calls {
			args := json.RawMessage("{}")
			if jsonv.Valid(c.args) && gjson.ParseBytes(c.args).IsObject() {
				args = json.RawMessage(c.args)
			}
			calls = append(calls, map[string]any{"function": map[string]any{"name": c.name, "arguments": args}})
		}
		dst = s.line(dst, map[string]any{"message": map[string]any{"role": "assistant", "content": "", "tool_calls": calls}}, false)
	}
	final := map[string]any{"done_reason": doneReason(s.finish),
		"prompt_eval_count": s.ChatReader.Usage.InputTokens, "eval_count": s.ChatReader.Usage.OutputTokens}
	if s.kind == Generate {
		final["response"] = ""
	} else {
		final["message"] = map[string]any{"role": "assistant", "content": ""}
	}
	return s.line(dst, final, true)
}

// Event translates one chat chunk.
func (s *stream) Event(dst []byte, ev sse.Event) ([]byte, error) {
	root, ok, err := s.Next(ev)
	if !ok {
		return dst, err
	}
	for _, c := range root.Get("choices").Array() {
		d := c.Get("delta")
		text, thinking := d.Get("content").String(), d.Get("reasoning_content").String()
		if thinking == "" {
			thinking = d.Get("reasoning").String()
		}
		if text != "" || thinking != "" {
			dst = s.piece(dst, text, thinking)
		}
		for _, tc := range d.Get("tool_calls").Array() {
			i := int(tc.Get("index").Int())
			if i < 0 || i > 128 {
				s.Failed = true
				return dst, errors.New("the upstream sent a tool call index out of range")
			}
			for len(s.calls) <= i {
				s.calls = append(s.calls, pendingCall{})
			}
			if n := tc.Get("function.name").String(); n != "" {
				s.calls[i].name = n
			}
			s.calls[i].args = append(s.calls[i].args, tc.Get("function.arguments").String()...)
		}
		if f := c.Get("finish_reason"); f.Type == gjson.String && f.Str != "" {
			s.finish, s.SawFinish = f.Str, true
		}
	}
	return dst, nil
}

// EmbedRequestToOpenAI turns an /api/embed request ({model, input}) into an
// OpenAI embeddings request; the options Ollama adds (truncate, keep_alive,
// options, dimensions) are dropped but dimensions, which OpenAI knows.
func EmbedRequestToOpenAI(body []byte) ([]byte, error) {
	root := gjson.ParseBytes(body)
	out := map[string]any{"model": root.Get("model").String(), "input": json.RawMessage(root.Get("input").Raw)}
	if d := root.Get("dimensions"); d.Type == gjson.Number {
		out["dimensions"] = d.Int()
	}
	return json.Marshal(out)
}

// EmbedResponseFromOpenAI turns an OpenAI embeddings answer into /api/embed's
// {model, embeddings: [[…]], prompt_eval_count}.
func EmbedResponseFromOpenAI(body []byte) ([]byte, error) {
	if err := jsonv.Check(body); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(body)
	data := root.Get("data")
	if !data.IsArray() {
		return nil, errors.New("the embeddings answer has no data")
	}
	vecs := []json.RawMessage{}
	for _, d := range data.Array() {
		e := d.Get("embedding")
		if !e.IsArray() {
			return nil, errors.New("an embedding is not an array of numbers")
		}
		vecs = append(vecs, json.RawMessage(e.Raw))
	}
	return json.Marshal(map[string]any{"model": root.Get("model").String(), "embeddings": vecs,
		"prompt_eval_count": root.Get("usage.prompt_tokens").Int()})
}
