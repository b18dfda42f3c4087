// Package ollama translates Ollama's native API (POST /api/chat, /api/generate,
// /api/embed; answers as one JSON object or as NDJSON lines) to and from the
// Chat pivot, so tools that only speak Ollama reach every upstream through the
// gateway's /ollama prefix.
//
// Facts of the wire: "stream" defaults to true; a streamed answer is one JSON
// object per line ending with a "done": true line carrying done_reason and the
// token counts (prompt_eval_count, eval_count); images are bare base64; tool
// calls carry their arguments as an object, not a string, and arrive whole;
// sampling settings live under "options" (num_predict is the output limit).
package ollama

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
)

// ErrSuffix refuses /api/generate's "suffix" (fill-in-the-middle), which has
// no chat equivalent.
var ErrSuffix = errors.New("\"suffix\" (fill-in-the-middle) is not served on /ollama/api/generate; use POST /v1/completions with an OpenAI-compatible connection")

// InputError names the part of a request that cannot be translated.
type InputError struct{ Field, Why string }

func (e *InputError) Error() string { return "\"" + e.Field + "\" " + e.Why }

// ChatToChat turns an /api/chat request into a Chat Completions request.
// The body must have passed jsonv.CheckRequest.
func ChatToChat(body []byte) ([]byte, error) {
	root := gjson.ParseBytes(body)
	msgs := []map[string]any{}
	var lastCalls []string // ids of the last assistant turn's tool calls, by position
	var lastNames []string
	used := 0
	for i, m := range root.Get("messages").Array() {
		role := m.Get("role").String()
		out := map[string]any{"role": role}
		content := m.Get("content").String()
		switch role {
		case "assistant":
			calls := m.Get("tool_calls").Array()
			lastCalls, lastNames, used = nil, nil, 0
			if len(calls) > 0 {
				var tc []map[string]any
				for j, c := range calls {
					id := "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
					args := c.Get("function.arguments")
					argText := args.Raw
					if args.Type == gjson.String {
						argText = args.Str
					} else if !args.Exists() {
						argText = "{}"
					}
					name := c.Get("function.name").String()
					tc = append(tc, map[string]any{"id": id, "type": "function",
						"function": map[string]any{"name": name, "arguments": argText}})
					lastCalls, lastNames = append(lastCalls, id), append(lastNames, name)
				}
				out["tool_calls"] = tc
			}
			if th := m.Get("thinking").String(); th != "" {
				out["reasoning_content"] = th
			}
			out["content"] = content
		case "tool":
			id := ""
			name := m.Get("tool_name").String()
			for k := used; k < len(lastCalls); k++ { // by name, else the next unanswered call
				if name == "" || lastNames[k] == name {
					id = lastCalls[k]
					if k == used {
						used++
					}
					break
				}
			}
			if id == "" {
				return nil, &InputError{Field: "messages[" + strconv.Itoa(i) + "]", Why: "is a tool result with no tool call before it"}
			}
			out["tool_call_id"] = id
			out["content"] = content
		default:
			imgs := m.Get("images").Array()
			if len(imgs) == 0 {
				out["content"] = content
				break
			}
			parts := []map[string]any{}
			if content != "" {
				parts = append(parts, map[string]any{"type": "text", "text": content})
			}
			for _, img := range imgs {
				parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL(img.String())}})
			}
			out["content"] = parts
		}
		msgs = append(msgs, out)
	}
	chat := map[string]any{"model": root.Get("model").String(), "messages": msgs}
	if t := root.Get("tools"); t.IsArray() && len(t.Array()) > 0 {
		chat["tools"] = json.RawMessage(t.Raw)
	}
	if err := common(root, chat); err != nil {
		return nil, err
	}
	return json.Marshal(chat)
}

// GenerateToChat turns an /api/generate request (prompt, optional system)
// into a Chat Completions request.
func GenerateToChat(body []byte) ([]byte, error) {
	root := gjson.ParseBytes(body)
	if s := root.Get("suffix"); s.Type == gjson.String && s.Str != "" {
		return nil, ErrSuffix
	}
	msgs := []map[string]any{}
	if sys := root.Get("system").String(); sys != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": sys})
	}
	user := map[string]any{"role": "user", "content": root.Get("prompt").String()}
	if imgs := root.Get("images").Array(); len(imgs) > 0 {
		parts := []map[string]any{{"type": "text", "text": root.Get("prompt").String()}}
		for _, img := range imgs {
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL(img.String())}})
		}
		user["content"] = parts
	}
	msgs = append(msgs, user)
	chat := map[string]any{"model": root.Get("model").String(), "messages": msgs}
	if err := common(root, chat); err != nil {
		return nil, err
	}
	return json.Marshal(chat)
}

// common copies what /api/chat and /api/generate share: stream (default
// true), format, think and the sampling options.
func common(root gjson.Result, chat map[string]any) error {
	stream := root.Get("stream")
	chat["stream"] = stream.Type != gjson.False
	if chat["stream"] == true {
		chat["stream_options"] = map[string]any{"include_usage": true}
	}
	switch f := root.Get("format"); {
	case f.Type == gjson.String && f.Str == "json":
		chat["response_format"] = map[string]any{"type": "json_object"}
	case f.IsObject():
		chat["response_format"] = map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "response", "schema": json.RawMessage(f.Raw)}}
	case f.Exists() && f.Type != gjson.Null && !(f.Type == gjson.String && f.Str == ""):
		return &InputError{Field: "format", Why: "must be \"json\" or a JSON schema object"}
	}
	switch t := root.Get("think"); {
	case t.Type == gjson.True:
		chat["reasoning_effort"] = "medium"
	case t.Type == gjson.String && (t.Str == "low" || t.Str == "medium" || t.Str == "high"):
		chat["reasoning_effort"] = t.Str
	}
	opts := root.Get("options")
	for ollamaName, chatName := range map[string]string{"temperature": "temperature", "top_p": "top_p", "seed": "seed",
		"stop": "stop", "num_predict": "max_tokens", "presence_penalty": "presence_penalty", "frequency_penalty": "frequency_penalty"} {
		v := opts.Get(ollamaName)
		if !v.Exists() || v.Type == gjson.Null {
			continue
		}
		if ollamaName == "num_predict" && v.Int() <= 0 {
			continue // -1 (and -2): no limit, as chat without max_tokens
		}
		chat[chatName] = json.RawMessage(v.Raw)
	}
	return nil
}

// dataURL makes a data: URL of an Ollama image (bare base64), its type read
// from its first bytes.
func dataURL(b64 string) string {
	head := b64
	if len(head) > 64 {
		head = head[:64]
	}
	raw, _ := base64.StdEncoding.DecodeString(head[:len(head)/4*4])
	mime := http.DetectContentType(raw)
	if len(mime) < 6 || mime[:6] != "image/" {
		mime = "image/png"
	}
	return "data:" + mime + ";base64," + b64
}
