package ollama

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
)

// The upstream direction: an `ollama` connection speaks Ollama's native
// /api/chat to the server, so the Chat pivot is turned into an /api/chat
// request, and its answer (one JSON object, or NDJSON lines ending with a
// "done": true line) back into a chat.completion or chat.completion.chunk
// events.

// RequestFromChat turns a Chat Completions request into an /api/chat
// request: messages (images as bare base64, tool call arguments as objects,
// tool results named by their call's function), tools (Ollama takes
// OpenAI's function tools as they are), stream, format, think and the
// sampling options.
func RequestFromChat(chat []byte) ([]byte, error) {
	if err := jsonv.Check(chat); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(chat)
	names := map[string]string{} // tool call id → function name
	msgs := []map[string]any{}
	for i, m := range root.Get("messages").Array() {
		role := m.Get("role").String()
		if role == "developer" {
			role = "system"
		}
		out := map[string]any{"role": role}
		text, images, err := contentParts(m.Get("content"))
		if err != nil {
			return nil, &InputError{Field: "messages[" + strconv.Itoa(i) + "].content", Why: err.Error()}
		}
		out["content"] = text
		if len(images) > 0 {
			out["images"] = images
		}
		switch role {
		case "assistant":
			if th := m.Get("reasoning_content").String(); th != "" {
				out["thinking"] = th
			}
			var calls []map[string]any
			for _, c := range m.Get("tool_calls").Array() {
				name := c.Get("function.name").String()
				names[c.Get("id").String()] = name
				args := json.RawMessage("{}")
				if a := c.Get("function.arguments").String(); a != "" {
					if !jsonv.Valid([]byte(a)) || !gjson.Parse(a).IsObject() {
						return nil, &InputError{Field: "messages[" + strconv.Itoa(i) + "].tool_calls", Why: "has arguments that are not a JSON object"}
					}
					args = json.RawMessage(a)
				}
				calls = append(calls, map[string]any{"function": map[string]any{"name": name, "arguments": args}})
			}
			if len(calls) > 0 {
				out["tool_calls"] = calls
			}
		case "tool":
			if n := names[m.Get("tool_call_id").String()]; n != "" {
				out["tool_name"] = n
			} else if n := m.Get("name").String(); n != "" {
				out["tool_name"] = n
			}
		}
		msgs = append(msgs, out)
	}
	req := map[string]any{"model": root.Get("model").String(), "messages": msgs, "stream": root.Get("stream").Bool()}
	if t := root.Get("tools"); t.IsArray() && len(t.Array()) > 0 {
		req["tools"] = json.RawMessage(t.Raw)
	}
	switch rf := root.Get("response_format"); rf.Get("type").String() {
	case "json_object":
		req["format"] = "json"
	case "json_schema":
		if s := rf.Get("json_schema.schema"); s.IsObject() {
			req["format"] = json.RawMessage(s.Raw)
		} else {
			req["format"] = "json"
		}
	}
	switch e := root.Get("reasoning_effort").String(); e {
	case "":
	case "none", "minimal":
		req["think"] = false
	case "low", "medium", "high":
		req["think"] = e
	default:
		req["think"] = true
	}
	opts := map[string]any{}
	for chatName, ollamaName := range map[string]string{"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop",
		"presence_penalty": "presence_penalty", "frequency_penalty": "frequency_penalty", "max_tokens": "num_predict", "max_completion_tokens": "num_predict"} {
		if v := root.Get(chatName); v.Exists() && v.Type != gjson.Null {
			opts[ollamaName] = json.RawMessage(v.Raw)
		}
	}
	if len(opts) > 0 {
		req["options"] = opts
	}
	return json.Marshal(req)
}

// contentParts reads a chat message's content: a string, or parts whose
// text is joined and whose images (data: URLs only: Ollama fetches nothing)
// become bare base64.
func contentParts(c gjson.Result) (string, []string, error) {
	if !c.IsArray() {
		return c.String(), nil, nil
	}
	var text strings.Builder
	var images []string
	for _, p := range c.Array() {
		switch p.Get("type").String() {
		case "text", "input_text":
			text.WriteString(p.Get("text").String())
		case "image_url":
			u := p.Get("image_url.url").String()
			if u == "" {
				u = p.Get("image_url").String()
			}
			_, b64, ok := strings.Cut(u, ";base64,")
			if !strings.HasPrefix(u, "data:") || !ok {
				return "", nil, errors.New("has an image by URL; Ollama takes images inline (data: URLs) only")
			}
			images = append(images, b64)
		}
	}
	return text.String(), images, nil
}

// finishReason maps an answer's done_reason (and its tool calls) to chat's.
func finishReason(done string, calls bool) string {
	switch {
	case calls:
		return "tool_calls"
	case done == "length":
		return "length"
	}
	return "stop"
}

// chatToolCalls renders Ollama tool calls as chat's: ids made up (Ollama
// has none), arguments as a JSON string.
func chatToolCalls(calls []gjson.Result, first int, withIndex bool) []map[string]any {
	out := make([]map[string]any, 0, len(calls))
	for i, c := range calls {
		args := c.Get("function.arguments").Raw
		if a := c.Get("function.arguments"); a.Type == gjson.String {
			args = a.Str
		} else if !a.Exists() {
			args = "{}"
		}
		tc := map[string]any{"id": "call_" + strconv.Itoa(first+i), "type": "function",
			"function": map[string]any{"name": c.Get("function.name").String(), "arguments": args}}
		if withIndex {
			tc["index"] = first + i
		}
		out = append(out, tc)
	}
	return out
}

// upstreamError is the message of an Ollama error object ({"error": "…"}), if any.
func upstreamError(root gjson.Result) (string, bool) {
	e := root.Get("error")
	if !e.Exists() || e.Type == gjson.Null {
		return "", false
	}
	if e.IsObject() {
		return e.Get("message").String(), true
	}
	return e.String(), true
}

// ResponseToChat turns a non-streamed /api/chat answer into a chat.completion.
func ResponseToChat(body []byte, id, model string, created int64) ([]byte, error) {
	if err := jsonv.Check(body); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(body)
	if msg, ok := upstreamError(root); ok {
		return nil, fmt.Errorf("the Ollama answer is an error: %s", truncate(msg))
	}
	if !root.Get("done").Bool() || !root.Get("message").IsObject() {
		return nil, errors.New("the Ollama answer is not a complete /api/chat response")
	}
	m := root.Get("message")
	msg := map[string]any{"role": "assistant", "content": m.Get("content").String()}
	if th := m.Get("thinking").String(); th != "" {
		msg["reasoning_content"] = th
	}
	calls := m.Get("tool_calls").Array()
	if len(calls) > 0 {
		msg["tool_calls"] = chatToolCalls(calls, 0, false)
	}
	if n := root.Get("model").String(); n != "" {
		model = n
	}
	in, out := root.Get("prompt_eval_count").Int(), root.Get("eval_count").Int()
	return json.Marshal(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(root.Get("done_reason").String(), len(calls) > 0)}},
		"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300]
	}
	return s
}

// maxLine bounds one NDJSON line of a streamed answer.
const maxLine = 8 << 20

// ErrTruncated is a stream that ended before its "done" line.
var ErrTruncated = errors.New("ollama stream: ended before its done line")

// sseReader turns an /api/chat NDJSON stream into chat.completion.chunk SSE
// events, one line at a time. A stream that ends before its "done" line, or
// a line that is not a JSON object, is a read error, never a clean end.
type sseReader struct {
	body    io.ReadCloser
	in      *bufio.Reader
	id      string
	model   string
	created int64

	out     bytes.Buffer
	started bool
	calls   int
	done    bool
	err     error
}

// NewSSEReader translates body (an /api/chat NDJSON stream) for model.
func NewSSEReader(body io.ReadCloser, id, model string, created int64) io.ReadCloser {
	return &sseReader{body: body, in: bufio.NewReaderSize(body, 64<<10), id: id, model: model, created: created}
}

func (s *sseReader) Close() error { return s.body.Close() }

func (s *sseReader) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.done {
			return 0, io.EOF
		}
		s.step()
	}
	return s.out.Read(p)
}

// chunk writes one chat.completion.chunk (delta nil: no choices).
func (s *sseReader) chunk(delta map[string]any, finish any, usage map[string]any) {
	c := map[string]any{"id": s.id, "object": "chat.completion.chunk", "created": s.created, "model": s.model}
	if delta != nil {
		c["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
	} else {
		c["choices"] = []any{}
	}
	if usage != nil {
		c["usage"] = usage
	}
	b, _ := json.Marshal(c)
	s.out.WriteString("data: ")
	s.out.Write(b)
	s.out.WriteString("\n\n")
}

// readLine reads one line of at most maxLine bytes (without its newline).
func (s *sseReader) readLine() ([]byte, error) {
	var line []byte
	for {
		part, err := s.in.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxLine {
			return nil, errors.New("ollama stream: a line is over 8 MiB")
		}
		switch {
		case err == nil:
			return bytes.TrimRight(line, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(bytes.TrimSpace(line)) > 0:
			return bytes.TrimSpace(line), nil // a last line without its newline
		default:
			return nil, err
		}
	}
}

// step translates the next line.
func (s *sseReader) step() {
	line, err := s.readLine()
	if err == io.EOF {
		s.err = ErrTruncated
		return
	}
	if err != nil {
		s.err = err
		return
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] != '{' || !jsonv.Valid(line) {
		s.err = errors.New("ollama stream: a line is not a JSON object")
		return
	}
	root := gjson.ParseBytes(line)
	if msg, ok := upstreamError(root); ok {
		// An error inside the stream: an OpenAI-shaped error event the
		// gateway judges like any in-stream error, then the end.
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": "ollama_error"}})
		s.out.WriteString("data: ")
		s.out.Write(b)
		s.out.WriteString("\n\n")
		s.done = true
		return
	}
	m := root.Get("message")
	done := root.Get("done").Bool()
	delta := map[string]any{}
	if t := m.Get("content").String(); t != "" {
		delta["content"] = t
	}
	if th := m.Get("thinking").String(); th != "" {
		delta["reasoning_content"] = th
	}
	if calls := m.Get("tool_calls").Array(); len(calls) > 0 {
		delta["tool_calls"] = chatToolCalls(calls, s.calls, true)
		s.calls += len(calls)
	}
	if len(delta) > 0 || (!s.started && !done) {
		if !s.started {
			delta["role"] = "assistant"
			s.started = true
		}
		s.chunk(delta, nil, nil)
	}
	if root.Get("done").Bool() {
		in, out := root.Get("prompt_eval_count").Int(), root.Get("eval_count").Int()
		s.chunk(map[string]any{}, finishReason(root.Get("done_reason").String(), s.calls > 0), nil)
		s.chunk(nil, nil, map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out})
		s.out.WriteString("data: [DONE]\n\n")
		s.done = true
	}
}

// EmbedRequestFromOpenAI turns an OpenAI embeddings request ({model, input,
// dimensions?}) into an /api/embed request.
func EmbedRequestFromOpenAI(body []byte) ([]byte, error) {
	if err := jsonv.Check(body); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(body)
	in := root.Get("input")
	if !in.Exists() || (!in.IsArray() && in.Type != gjson.String) {
		return nil, &InputError{Field: "input", Why: "must be a string or an array of strings"}
	}
	for _, v := range in.Array() {
		if in.IsArray() && v.Type != gjson.String {
			return nil, &InputError{Field: "input", Why: "must be text: Ollama does not take token arrays"}
		}
	}
	out := map[string]any{"model": root.Get("model").String(), "input": json.RawMessage(in.Raw)}
	if d := root.Get("dimensions"); d.Type == gjson.Number {
		out["dimensions"] = d.Int()
	}
	return json.Marshal(out)
}

// EmbedResponseToOpenAI turns an /api/embed answer ({model, embeddings,
// prompt_eval_count}) into an OpenAI embeddings answer.
func EmbedResponseToOpenAI(body []byte) ([]byte, error) {
	if err := jsonv.Check(body); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(body)
	embs := root.Get("embeddings")
	if !embs.IsArray() {
		return nil, errors.New("the /api/embed answer has no embeddings")
	}
	data := []map[string]any{}
	for i, e := range embs.Array() {
		if !e.IsArray() {
			return nil, errors.New("an embedding is not an array of numbers")
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": json.RawMessage(e.Raw)})
	}
	n := root.Get("prompt_eval_count").Int()
	return json.Marshal(map[string]any{"object": "list", "model": root.Get("model").String(), "data": data,
		"usage": map[string]any{"prompt_tokens": n, "total_tokens": n}})
}
