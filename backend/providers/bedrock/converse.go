package bedrock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// chatRequest is the part of an OpenAI Chat Completions request Converse can carry.
type chatRequest struct {
	Messages []struct {
		Role           string          `json:"role"`
		Content        json.RawMessage `json:"content"`
		ToolCalls      []toolCall      `json:"tool_calls"`
		ToolCallID     string          `json:"tool_call_id"`
		ThinkingBlocks []thinkingBlock `json:"thinking_blocks"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Stop                json.RawMessage `json:"stop"`
}

// thinkingBlock is one entry of a Chat message's thinking_blocks (LiteLLM's
// form of Anthropic's blocks): signed reasoning, or redacted reasoning.
type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// block is one Converse content block.
type block map[string]any

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// ErrUnsupported is a request Converse cannot express (the gateway answers 400).
var ErrUnsupported = errors.New("bedrock: unsupported request")

// ToConverse turns an OpenAI Chat Completions body into a Converse body:
// system messages into system, user/assistant/tool turns into alternating
// messages (tool results as the user's toolResult blocks, tool calls as
// toolUse blocks), tools into toolConfig and the sampling fields into
// inferenceConfig.
func ToConverse(body []byte) ([]byte, error) {
	var in chatRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	var system []block
	var msgs []message
	add := func(role string, blocks ...block) {
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
			return
		}
		msgs = append(msgs, message{Role: role, Content: blocks})
	}
	for i, m := range in.Messages {
		switch m.Role {
		case "system", "developer":
			text, err := parts(m.Content)
			if err != nil {
				return nil, fmt.Errorf("%w: messages[%d]: %v", ErrUnsupported, i, err)
			}
			system = append(system, text...)
		case "user":
			text, err := parts(m.Content)
			if err != nil {
				return nil, fmt.Errorf("%w: messages[%d]: %v", ErrUnsupported, i, err)
			}
			if len(text) > 0 {
				add("user", text...)
			}
		case "assistant":
			text, err := parts(m.Content)
			if err != nil {
				return nil, fmt.Errorf("%w: messages[%d]: %v", ErrUnsupported, i, err)
			}
			// Signed and redacted reasoning goes back first, unmodified, as
			// the model answered it (ReasoningTextBlock: "include the text
			// and its signature unmodified").
			blocks := append(reasoningBlocks(m.ThinkingBlocks), text...)
			for _, tc := range m.ToolCalls {
				var input any = map[string]any{}
				if strings.TrimSpace(tc.Function.Arguments) != "" {
					if err := json.Unmarshal([]byte(tc.Function.Arguments), &input); err != nil {
						return nil, fmt.Errorf("%w: messages[%d].tool_calls: arguments are not JSON", ErrUnsupported, i)
					}
				}
				blocks = append(blocks, block{"toolUse": map[string]any{"toolUseId": tc.ID, "name": tc.Function.Name, "input": input}})
			}
			if len(blocks) > 0 {
				add("assistant", blocks...)
			}
		case "tool":
			text, err := parts(m.Content)
			if err != nil {
				return nil, fmt.Errorf("%w: messages[%d]: %v", ErrUnsupported, i, err)
			}
			if len(text) == 0 {
				text = []block{{"text": ""}}
			}
			add("user", block{"toolResult": map[string]any{"toolUseId": m.ToolCallID, "content": text}})
		default:
			return nil, fmt.Errorf("%w: messages[%d]: role %q", ErrUnsupported, i, m.Role)
		}
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: no user message", ErrUnsupported)
	}
	out := map[string]any{"messages": msgs}
	if len(system) > 0 {
		out["system"] = system
	}
	inf := map[string]any{}
	if in.MaxCompletionTokens != nil {
		inf["maxTokens"] = *in.MaxCompletionTokens
	} else if in.MaxTokens != nil {
		inf["maxTokens"] = *in.MaxTokens
	}
	if in.Temperature != nil {
		inf["temperature"] = *in.Temperature
	}
	if in.TopP != nil {
		inf["topP"] = *in.TopP
	}
	var stop []string
	if json.Unmarshal(in.Stop, &stop) != nil {
		var one string
		if json.Unmarshal(in.Stop, &one) == nil && one != "" {
			stop = []string{one}
		}
	}
	if len(stop) > 0 {
		inf["stopSequences"] = stop
	}
	if len(inf) > 0 {
		out["inferenceConfig"] = inf
	}
	if tc, err := toolConfig(in); err != nil {
		return nil, err
	} else if tc != nil {
		out["toolConfig"] = tc
	}
	return json.Marshal(out)
}

// reasoningBlocks are Converse reasoningContent blocks for a Chat message's
// thinking_blocks: reasoningText {text, signature} for a signed thinking
// block, redactedContent (the base64 bytes) for a redacted one.
func reasoningBlocks(tb []thinkingBlock) []block {
	var out []block
	for _, t := range tb {
		switch {
		case t.Type == "thinking" && t.Signature != "":
			out = append(out, block{"reasoningContent": map[string]any{"reasoningText": map[string]any{"text": t.Thinking, "signature": t.Signature}}})
		case t.Type == "redacted_thinking" && t.Data != "":
			out = append(out, block{"reasoningContent": map[string]any{"redactedContent": t.Data}})
		}
	}
	return out
}

// parts reads message content (a string or an array of text and image_url
// parts) as Converse blocks. Images must be data: URLs (Converse takes bytes).
func parts(raw json.RawMessage) ([]block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []block{{"text": s}}, nil
	}
	var arr []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, errors.New("content must be a string or an array of parts")
	}
	var out []block
	for _, p := range arr {
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, block{"text": p.Text})
			}
		case "image_url":
			media, data, ok := strings.Cut(strings.TrimPrefix(p.ImageURL.URL, "data:"), ";base64,")
			format := strings.TrimPrefix(media, "image/")
			if !ok || !strings.HasPrefix(p.ImageURL.URL, "data:image/") {
				return nil, errors.New("an image must be a base64 data: URL for Bedrock")
			}
			if format == "jpg" {
				format = "jpeg"
			}
			out = append(out, block{"image": map[string]any{"format": format, "source": map[string]any{"bytes": data}}})
		default:
			return nil, fmt.Errorf("content part type %q", p.Type)
		}
	}
	return out, nil
}

func toolConfig(in chatRequest) (map[string]any, error) {
	if len(in.Tools) == 0 {
		return nil, nil
	}
	var choice any
	var s string
	if json.Unmarshal(in.ToolChoice, &s) == nil {
		switch s {
		case "none":
			return nil, nil // Converse has no "none": the tools are left out
		case "required":
			choice = map[string]any{"any": map[string]any{}}
		case "", "auto":
			choice = map[string]any{"auto": map[string]any{}}
		}
	} else if len(in.ToolChoice) > 0 && string(in.ToolChoice) != "null" {
		var named struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(in.ToolChoice, &named) != nil || named.Function.Name == "" {
			return nil, fmt.Errorf("%w: tool_choice", ErrUnsupported)
		}
		choice = map[string]any{"tool": map[string]any{"name": named.Function.Name}}
	}
	var tools []any
	for _, t := range in.Tools {
		schema := t.Function.Parameters
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		spec := map[string]any{"name": t.Function.Name, "inputSchema": map[string]any{"json": schema}}
		if t.Function.Description != "" {
			spec["description"] = t.Function.Description
		}
		tools = append(tools, map[string]any{"toolSpec": spec})
	}
	out := map[string]any{"tools": tools}
	if choice != nil {
		out["toolChoice"] = choice
	}
	return out, nil
}

// finishReason maps a Converse stopReason to an OpenAI finish_reason.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop"
}

type usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	TotalTokens  int `json:"totalTokens"`
}

func (u usage) openai() map[string]any {
	return map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens}
}

// FromConverse turns a Converse answer into an OpenAI chat.completion for model.
func FromConverse(body []byte, id, model string, created int64) ([]byte, error) {
	var in struct {
		Output struct {
			Message struct {
				Content []struct {
					Text    *string `json:"text"`
					ToolUse *struct {
						ToolUseID string          `json:"toolUseId"`
						Name      string          `json:"name"`
						Input     json.RawMessage `json:"input"`
					} `json:"toolUse"`
					ReasoningContent *struct {
						ReasoningText struct {
							Text      string `json:"text"`
							Signature string `json:"signature"`
						} `json:"reasoningText"`
						RedactedContent string `json:"redactedContent"`
					} `json:"reasoningContent"`
				} `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason string `json:"stopReason"`
		Usage      usage  `json:"usage"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("bedrock: the Converse answer is not JSON: %w", err)
	}
	var text, reasoning strings.Builder
	var calls []map[string]any
	var signed []thinkingBlock
	for _, c := range in.Output.Message.Content {
		switch {
		case c.Text != nil:
			text.WriteString(*c.Text)
		case c.ToolUse != nil:
			args := string(c.ToolUse.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			calls = append(calls, map[string]any{"id": c.ToolUse.ToolUseID, "type": "function",
				"function": map[string]any{"name": c.ToolUse.Name, "arguments": args}})
		case c.ReasoningContent != nil:
			r := c.ReasoningContent
			reasoning.WriteString(r.ReasoningText.Text)
			if r.ReasoningText.Signature != "" {
				signed = append(signed, thinkingBlock{Type: "thinking", Thinking: r.ReasoningText.Text, Signature: r.ReasoningText.Signature})
			}
			if r.RedactedContent != "" {
				signed = append(signed, thinkingBlock{Type: "redacted_thinking", Data: r.RedactedContent})
			}
		}
	}
	msg := map[string]any{"role": "assistant", "content": text.String(), "refusal": nil} // keys the reference requires
	if len(calls) > 0 {
		msg["tool_calls"] = calls
		if text.Len() == 0 {
			msg["content"] = nil
		}
	}
	if reasoning.Len() > 0 {
		msg["reasoning_content"] = reasoning.String()
	}
	if len(signed) > 0 {
		msg["thinking_blocks"] = signed // what the next turn must send back
	}
	return json.Marshal(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finishReason(in.StopReason)}},
		"usage":   in.Usage.openai()})
}
