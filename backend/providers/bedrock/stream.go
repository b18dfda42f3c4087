package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// sseReader turns a ConverseStream body into an OpenAI Chat Completions SSE
// stream, one event-stream message at a time (nothing is buffered beyond the
// message being translated). A corrupt or truncated frame is a read error,
// never a clean end: the caller sees a broken stream, not a short success.
type sseReader struct {
	body    io.ReadCloser
	dec     *Decoder
	id      string
	model   string
	created int64

	out   bytes.Buffer
	tools map[int]int // Converse content block index → OpenAI tool_calls index
	done  bool
	err   error
}

// NewSSEReader translates body (application/vnd.amazon.eventstream) for model.
func NewSSEReader(body io.ReadCloser, id, model string, created int64) io.ReadCloser {
	return &sseReader{body: body, dec: NewDecoder(body), id: id, model: model, created: created, tools: map[int]int{}}
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

// chunk writes one chat.completion.chunk with the given choice fields (nil: no choices).
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

// step translates the next message.
func (s *sseReader) step() {
	m, err := s.dec.Next()
	if err == io.EOF {
		// The stream ended between messages; without metadata it still ends cleanly.
		s.out.WriteString("data: [DONE]\n\n")
		s.done = true
		return
	}
	if err != nil {
		s.err = fmt.Errorf("bedrock stream: %w", err)
		return
	}
	if m.Headers[":message-type"] == "exception" || m.Headers[":message-type"] == "error" {
		// An error inside the stream: an OpenAI-shaped error event the
		// gateway judges like any in-stream error, then the end.
		code := m.Headers[":exception-type"]
		if code == "" {
			code = m.Headers[":error-code"]
		}
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(m.Payload, &e)
		if e.Message == "" {
			e.Message = m.Headers[":error-message"]
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": exceptionName(code), "message": e.Message, "type": exceptionName(code)}})
		s.out.WriteString("data: ")
		s.out.Write(b)
		s.out.WriteString("\n\n")
		s.done = true
		return
	}
	var ev struct {
		Role              string `json:"role"`
		ContentBlockIndex int    `json:"contentBlockIndex"`
		Start             struct {
			ToolUse *struct {
				ToolUseID string `json:"toolUseId"`
				Name      string `json:"name"`
			} `json:"toolUse"`
		} `json:"start"`
		Delta struct {
			Text    *string `json:"text"`
			ToolUse *struct {
				Input string `json:"input"`
			} `json:"toolUse"`
			ReasoningContent *struct {
				Text            string `json:"text"`
				Signature       string `json:"signature"`
				RedactedContent string `json:"redactedContent"`
			} `json:"reasoningContent"`
		} `json:"delta"`
		StopReason string `json:"stopReason"`
		Usage      *usage `json:"usage"`
	}
	if err := json.Unmarshal(m.Payload, &ev); err != nil {
		s.err = fmt.Errorf("bedrock stream: %s event is not JSON", m.Headers[":event-type"])
		return
	}
	switch m.Headers[":event-type"] {
	case "messageStart":
		s.chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	case "contentBlockStart":
		if tu := ev.Start.ToolUse; tu != nil {
			i := len(s.tools)
			s.tools[ev.ContentBlockIndex] = i
			s.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tu.ToolUseID, "type": "function",
				"function": map[string]any{"name": tu.Name, "arguments": ""}}}}, nil, nil)
		}
	case "contentBlockDelta":
		switch d := ev.Delta; {
		case d.Text != nil:
			s.chunk(map[string]any{"content": *d.Text}, nil, nil)
		case d.ToolUse != nil:
			s.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": s.tools[ev.ContentBlockIndex],
				"function": map[string]any{"arguments": d.ToolUse.Input}}}}, nil, nil)
		case d.ReasoningContent != nil:
			// One of text, signature or redactedContent (a union); the
			// signature and redacted reasoning go as Chat's thinking_blocks.
			switch r := d.ReasoningContent; {
			case r.Text != "":
				s.chunk(map[string]any{"reasoning_content": r.Text}, nil, nil)
			case r.Signature != "":
				s.chunk(map[string]any{"thinking_blocks": []thinkingBlock{{Type: "thinking", Signature: r.Signature}}}, nil, nil)
			case r.RedactedContent != "":
				s.chunk(map[string]any{"thinking_blocks": []thinkingBlock{{Type: "redacted_thinking", Data: r.RedactedContent}}}, nil, nil)
			}
		}
	case "messageStop":
		s.chunk(map[string]any{}, finishReason(ev.StopReason), nil)
	case "metadata":
		if ev.Usage != nil {
			s.chunk(nil, nil, ev.Usage.openai())
		}
	}
}

// exceptionName is an AWS error type without its namespace or trailing
// details ("com.amazon…#ThrottlingException:http://…" → "ThrottlingException"),
// with the stream's lower-case first letter raised ("throttlingException").
func exceptionName(s string) string {
	if i := strings.LastIndex(s, "#"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.Index(s, ":"); i >= 0 {
		s = s[:i]
	}
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
