package responses

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// This file is the other direction: a Responses-speaking upstream (the ChatGPT
// Codex backend) behind Chat and Messages clients.
//
//   - RequestFromChat turns a Chat Completions request into a Responses request.
//   - ResponseToChat turns a Responses response object into a chat.completion.
//   - NewStreamToChat (stream_upstream.go) turns the Responses event stream into
//     Chat Completions chunks.

// RequestFromChat turns a Chat Completions request into a Responses request:
// system and developer messages become instructions, the rest input items
// (messages, function_call, function_call_output), function tools keep their
// schema, reasoning_effort becomes reasoning.effort and max_tokens
// max_output_tokens.
func RequestFromChat(body []byte) ([]byte, error) {
	if !gjson.ValidBytes(body) {
		return nil, fieldErr("", "the request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, fieldErr("", "the request body must be a JSON object")
	}
	out := map[string]any{"model": root.Get("model").String()}
	var instructions []string
	input := []any{}
	var err error
	root.Get("messages").ForEach(func(_, m gjson.Result) bool {
		role := m.Get("role").String()
		switch role {
		case "system", "developer":
			if t := chatText(m.Get("content")); t != "" {
				instructions = append(instructions, t)
			}
		case "user":
			input = append(input, map[string]any{"type": "message", "role": "user", "content": userContent(m.Get("content"))})
		case "assistant":
			if t := chatText(m.Get("content")); t != "" {
				input = append(input, map[string]any{"type": "message", "role": "assistant",
					"content": []any{map[string]any{"type": "output_text", "text": t}}})
			}
			m.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
				input = append(input, map[string]any{"type": "function_call", "call_id": tc.Get("id").String(),
					"name": tc.Get("function.name").String(), "arguments": tc.Get("function.arguments").String()})
				return true
			})
		case "tool":
			input = append(input, map[string]any{"type": "function_call_output", "call_id": m.Get("tool_call_id").String(),
				"output": chatText(m.Get("content"))})
		default:
			err = fieldErr("messages", "unknown message role %q", role)
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out["instructions"] = strings.Join(instructions, "\n\n")
	out["input"] = input
	if s := root.Get("stream"); s.Exists() {
		out["stream"] = s.Bool()
	}
	var tools []any
	root.Get("tools").ForEach(func(_, t gjson.Result) bool {
		if t.Get("type").String() != "function" {
			return true
		}
		f := t.Get("function")
		tool := map[string]any{"type": "function", "name": f.Get("name").String()}
		if d := f.Get("description"); d.Exists() {
			tool["description"] = d.String()
		}
		if p := f.Get("parameters"); p.Exists() {
			tool["parameters"] = json.RawMessage(p.Raw)
		}
		if s := f.Get("strict"); s.Exists() {
			tool["strict"] = s.Bool()
		}
		tools = append(tools, tool)
		return true
	})
	if len(tools) > 0 {
		out["tools"] = tools
	}
	if tc := root.Get("tool_choice"); tc.Exists() {
		if tc.Type == gjson.String {
			out["tool_choice"] = tc.String()
		} else if name := tc.Get("function.name").String(); name != "" {
			out["tool_choice"] = map[string]any{"type": "function", "name": name}
		}
	}
	if p := root.Get("parallel_tool_calls"); p.Exists() {
		out["parallel_tool_calls"] = p.Bool()
	}
	if e := root.Get("reasoning_effort").String(); e != "" {
		out["reasoning"] = map[string]any{"effort": e, "summary": "auto"}
	}
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if v := root.Get(k); v.Exists() {
			out["max_output_tokens"] = v.Int()
			break
		}
	}
	for _, k := range []string{"temperature", "top_p"} {
		if v := root.Get(k); v.Exists() {
			out[k] = json.RawMessage(v.Raw)
		}
	}
	if rf := root.Get("response_format"); rf.Get("type").String() == "json_schema" {
		js := rf.Get("json_schema")
		f := map[string]any{"type": "json_schema", "name": js.Get("name").String(), "schema": json.RawMessage(orRaw(js.Get("schema"), "{}"))}
		if s := js.Get("strict"); s.Exists() {
			f["strict"] = s.Bool()
		}
		out["text"] = map[string]any{"format": f}
	} else if rf.Get("type").String() == "json_object" {
		out["text"] = map[string]any{"format": map[string]any{"type": "json_object"}}
	}
	return marshal(out)
}

func orRaw(v gjson.Result, def string) string {
	if v.Exists() {
		return v.Raw
	}
	return def
}

// chatText is a Chat content's text: the string, or its text parts joined.
func chatText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	var b strings.Builder
	c.ForEach(func(_, p gjson.Result) bool {
		if t := p.Get("text"); t.Exists() {
			b.WriteString(t.String())
		}
		return true
	})
	return b.String()
}

// userContent turns a Chat user content into Responses input parts.
func userContent(c gjson.Result) []any {
	if c.Type == gjson.String {
		return []any{map[string]any{"type": "input_text", "text": c.Str}}
	}
	parts := []any{}
	c.ForEach(func(_, p gjson.Result) bool {
		switch p.Get("type").String() {
		case "text":
			parts = append(parts, map[string]any{"type": "input_text", "text": p.Get("text").String()})
		case "image_url":
			img := map[string]any{"type": "input_image", "image_url": p.Get("image_url.url").String()}
			if d := p.Get("image_url.detail").String(); d != "" {
				img["detail"] = d
			}
			parts = append(parts, img)
		}
		return true
	})
	return parts
}

// ResponseToChat turns a Responses response object into a chat.completion.
// A failed response becomes an *UpstreamError.
func ResponseToChat(body []byte) ([]byte, error) {
	if !gjson.ValidBytes(body) {
		return nil, fieldErr("", "the upstream answer is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if root.Get("object").String() != "response" {
		if e := root.Get("error"); e.IsObject() {
			return nil, upstreamError(e)
		}
		return nil, fieldErr("object", "the upstream answer is not a Responses response object")
	}
	if root.Get("status").String() == "failed" {
		return nil, upstreamError(root.Get("error"))
	}
	var text, reasoning, refusal strings.Builder
	var calls []any
	root.Get("output").ForEach(func(_, it gjson.Result) bool {
		switch it.Get("type").String() {
		case "message":
			it.Get("content").ForEach(func(_, c gjson.Result) bool {
				switch c.Get("type").String() {
				case "output_text":
					text.WriteString(c.Get("text").String())
				case "refusal":
					refusal.WriteString(c.Get("refusal").String())
				}
				return true
			})
		case "reasoning":
			it.Get("summary").ForEach(func(_, s gjson.Result) bool {
				reasoning.WriteString(s.Get("text").String())
				return true
			})
		case "function_call":
			calls = append(calls, map[string]any{"id": it.Get("call_id").String(), "type": "function",
				"function": map[string]any{"name": it.Get("name").String(), "arguments": it.Get("arguments").String()}})
		case "custom_tool_call":
			args, _ := json.Marshal(map[string]string{"input": it.Get("input").String()})
			calls = append(calls, map[string]any{"id": it.Get("call_id").String(), "type": "function",
				"function": map[string]any{"name": it.Get("name").String(), "arguments": string(args)}})
		}
		return true
	})
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil} // refusal: a key the reference requires
	if text.Len() > 0 || len(calls) == 0 && refusal.Len() == 0 {
		msg["content"] = text.String()
	}
	if refusal.Len() > 0 {
		msg["refusal"] = refusal.String() // as OpenAI's Chat answers a refusal
	}
	if reasoning.Len() > 0 {
		msg["reasoning_content"] = reasoning.String()
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	out := map[string]any{
		"id": "chatcmpl-" + strings.TrimPrefix(root.Get("id").String(), "resp_"), "object": "chat.completion",
		"created": root.Get("created_at").Int(), "model": root.Get("model").String(),
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finishOf(root, len(calls) > 0)}},
	}
	if u := root.Get("usage"); u.IsObject() {
		out["usage"] = chatUsage(u)
	}
	return marshal(out)
}

// finishOf maps a response's status to a Chat finish_reason.
func finishOf(resp gjson.Result, calls bool) string {
	switch {
	case calls:
		return "tool_calls"
	case resp.Get("status").String() == "incomplete":
		if resp.Get("incomplete_details.reason").String() == "content_filter" {
			return "content_filter"
		}
		return "length"
	}
	return "stop"
}

// chatUsage maps Responses usage to Chat usage, keeping cached and reasoning tokens.
func chatUsage(u gjson.Result) map[string]any {
	in, out := u.Get("input_tokens").Int(), u.Get("output_tokens").Int()
	m := map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
	if c := u.Get("input_tokens_details.cached_tokens"); c.Exists() {
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": c.Int()}
	}
	if r := u.Get("output_tokens_details.reasoning_tokens"); r.Exists() {
		m["completion_tokens_details"] = map[string]any{"reasoning_tokens": r.Int()}
	}
	return m
}
