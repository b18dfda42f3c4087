package fakeupstream

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Fixed values that make every answer deterministic.
const (
	fakeCreated      = 1700000000
	fakeCompletionID = "chatcmpl-fake"
	fakeMessageID    = "msg_fake01"
	fakePromptTokens = 10
)

// Fixed parts of the tool-call and reasoning answers, exported so that tests
// of the gateway can check what reached the client.
const (
	// ToolCallIDOpenAI is the id of the OpenAI tool call the fake makes.
	ToolCallIDOpenAI = "call_fake_1"
	// ToolCallIDAnthropic is the id of the Anthropic tool_use block the fake makes.
	ToolCallIDAnthropic = "toolu_fake_1"
	// ToolArguments is the JSON arguments of every tool call, streamed as
	// argument deltas (OpenAI tool_calls[].function.arguments pieces,
	// Anthropic input_json_delta partial_json pieces).
	ToolArguments = `{"city":"Paris"}`
	// ReasoningText is the reasoning prepended when the request asks for it.
	ReasoningText = "Let me think about this step by step."
	// ThinkingSignature is the signature of the Anthropic thinking block.
	ThinkingSignature = "fakesig=="
	// HeartbeatThought is the text of each reasoning frame that
	// ModeReasoningOnlyHeartbeat sends before its heartbeats.
	HeartbeatThought = "Still thinking. "
)

// Content returns the deterministic assistant text the fake answers for the
// caller key label.
func Content(label string) string { return "Hello from " + label }

// ToolResultText returns the assistant text the fake answers when the last
// message of the request is a tool result with content result.
func ToolResultText(result string) string { return "Tool said: " + result }

// answer is everything needed to reply to one (format, model, label,
// chunks, shape) combination, precomputed once so the happy path only copies
// bytes.
type answer struct {
	body    []byte   // complete non-streaming JSON
	bodyLen []string // Content-Length header value of body
	parts   [][]byte // body split into as many pieces as content events, for drip/partial faults
	head    []byte   // SSE frames before the first content event
	// chunks has one entry per content event: the event's frame, preceded by
	// the non-content frames that belong before it (Anthropic block
	// stop/start between blocks, the OpenAI tool call header).
	chunks [][]byte
	tail   []byte // SSE frames after the last content event
	done   int    // length of the terminator frame ending tail ([DONE] or message_stop)
	// thought is one reasoning frame of ModeReasoningOnlyHeartbeat; it fits
	// after head only when the answer has reasoning.
	thought []byte
	// ctype, when set, is the Content-Type of the stream (a Gemini stream
	// without alt=sse is JSON, not SSE).
	ctype []string
}

// splitContent splits s into n pieces on rune boundaries, as evenly as
// possible; pieces are empty when s has fewer than n runes.
func splitContent(s string, n int) []string {
	starts := make([]int, 0, len(s)+1) // byte offset of every rune, then len(s)
	for i := range s {
		starts = append(starts, i)
	}
	starts = append(starts, len(s))
	runes := len(starts) - 1
	out := make([]string, n)
	for i := range out {
		out[i] = s[starts[runes*i/n]:starts[runes*(i+1)/n]]
	}
	return out
}

// splitBytes splits b into n contiguous pieces (the last absorbs the rest).
func splitBytes(b []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := 0; i < n; i++ {
		out[i] = b[len(b)*i/n : len(b)*(i+1)/n]
	}
	return out
}

func sseData(b *bytes.Buffer, v any) {
	b.WriteString("data: ")
	b.Write(mustJSON(v))
	b.WriteString("\n\n")
}

func sseEvent(b *bytes.Buffer, name string, v any) {
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteByte('\n')
	sseData(b, v)
}

// blockKind is the kind of one part of an answer.
type blockKind uint8

const (
	blockReasoning blockKind = iota
	blockText
	blockTool
)

// block is one part of an answer (an Anthropic content block; for OpenAI
// the reasoning_content, content or tool_calls deltas) and its stream pieces.
type block struct {
	kind   blockKind
	text   string // whole text: reasoning, content, or the tool arguments
	pieces []string
}

// plan lists the blocks of the answer for shape: reasoning if asked, then
// the text or the tool call, each in n pieces.
func plan(s shape, text string, n int) []block {
	var blocks []block
	if s.reasoning {
		blocks = append(blocks, block{kind: blockReasoning, text: ReasoningText})
	}
	if s.kind == kindToolCall {
		args := ToolArguments
		if s.args != "" {
			args = s.args
		}
		blocks = append(blocks, block{kind: blockTool, text: args})
	} else {
		blocks = append(blocks, block{kind: blockText, text: text})
	}
	for i := range blocks {
		blocks[i].pieces = splitContent(blocks[i].text, n)
	}
	return blocks
}

// buildAnswer renders the answer for one combination; text is the assistant
// text of text answers.
func buildAnswer(format Format, model string, s shape, text string, n int) *answer {
	blocks := plan(s, text, n)
	var a *answer
	if format == FormatAnthropic {
		a = buildAnthropic(model, s, blocks)
	} else {
		a = buildOpenAI(model, s, blocks)
	}
	a.bodyLen = []string{strconv.Itoa(len(a.body))}
	a.parts = splitBytes(a.body, len(a.chunks))
	return a
}

// events counts the content events of blocks (the output tokens reported).
func events(blocks []block) (all, reasoning int) {
	for _, b := range blocks {
		all += len(b.pieces)
		if b.kind == blockReasoning {
			reasoning += len(b.pieces)
		}
	}
	return all, reasoning
}

type oaTokenDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

type oaUsage struct {
	PromptTokens            int             `json:"prompt_tokens"`
	CompletionTokens        int             `json:"completion_tokens"`
	TotalTokens             int             `json:"total_tokens"`
	CompletionTokensDetails *oaTokenDetails `json:"completion_tokens_details,omitempty"`
}

type oaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type oaToolCall struct {
	Index    *int       `json:"index,omitempty"` // streams only
	ID       string     `json:"id,omitempty"`
	Type     string     `json:"type,omitempty"`
	Function oaFunction `json:"function"`
}

type oaMessage struct {
	Role             string       `json:"role"`
	Content          *string      `json:"content"` // null with tool calls
	ReasoningContent string       `json:"reasoning_content,omitempty"`
	ToolCalls        []oaToolCall `json:"tool_calls,omitempty"`
}

type oaChoice struct {
	Index        int       `json:"index"`
	Message      oaMessage `json:"message"`
	FinishReason string    `json:"finish_reason"`
}

type oaCompletion struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []oaChoice `json:"choices"`
	Usage   oaUsage    `json:"usage"`
}

type oaDelta struct {
	Role             string       `json:"role,omitempty"`
	Content          *string      `json:"content,omitempty"`
	ReasoningContent *string      `json:"reasoning_content,omitempty"`
	ToolCalls        []oaToolCall `json:"tool_calls,omitempty"`
}

type oaChunkChoice struct {
	Index        int     `json:"index"`
	Delta        oaDelta `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type oaChunk struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []oaChunkChoice `json:"choices"`
	// Usage is omitted, or null (a nil *oaUsage) on every chunk but the
	// last when the client asked for usage, as OpenAI does.
	Usage any `json:"usage,omitempty"`
}

// buildOpenAI renders an OpenAI answer. Streams: the role chunk, one chunk
// per content event (reasoning_content, content or tool call argument
// deltas, the first argument delta preceded by the tool call header chunk),
// the finish chunk, the usage chunk (choices [], only with
// stream_options.include_usage) and [DONE].
func buildOpenAI(model string, s shape, blocks []block) *answer {
	all, reasoning := events(blocks)
	usage := oaUsage{PromptTokens: fakePromptTokens, CompletionTokens: all, TotalTokens: fakePromptTokens + all}
	if reasoning > 0 {
		usage.CompletionTokensDetails = &oaTokenDetails{ReasoningTokens: reasoning}
	}
	msg := oaMessage{Role: "assistant"}
	finish := "stop"
	for _, b := range blocks {
		switch b.kind {
		case blockReasoning:
			msg.ReasoningContent = b.text
		case blockText:
			msg.Content = &b.text
		case blockTool:
			finish = "tool_calls"
			msg.ToolCalls = []oaToolCall{{ID: ToolCallIDOpenAI, Type: "function",
				Function: oaFunction{Name: s.tool, Arguments: b.text}}}
		}
	}
	a := &answer{body: mustJSON(oaCompletion{
		ID: fakeCompletionID, Object: "chat.completion", Created: fakeCreated, Model: model,
		Choices: []oaChoice{{Message: msg, FinishReason: finish}},
		Usage:   usage,
	})}

	var nullUsage any
	if s.usage {
		nullUsage = (*oaUsage)(nil)
	}
	chunk := func(d oaDelta, finish *string) oaChunk {
		return oaChunk{ID: fakeCompletionID, Object: "chat.completion.chunk", Created: fakeCreated, Model: model,
			Choices: []oaChunkChoice{{Delta: d, FinishReason: finish}}, Usage: nullUsage}
	}
	var b bytes.Buffer
	empty, zero := "", 0
	sseData(&b, chunk(oaDelta{Role: "assistant", Content: &empty}, nil))
	a.head = bytes.Clone(b.Bytes())
	for _, bl := range blocks {
		for i := range bl.pieces {
			b.Reset()
			p := &bl.pieces[i]
			switch bl.kind {
			case blockReasoning:
				sseData(&b, chunk(oaDelta{ReasoningContent: p}, nil))
			case blockText:
				sseData(&b, chunk(oaDelta{Content: p}, nil))
			case blockTool:
				if i == 0 {
					sseData(&b, chunk(oaDelta{ToolCalls: []oaToolCall{{Index: &zero, ID: ToolCallIDOpenAI, Type: "function",
						Function: oaFunction{Name: s.tool}}}}, nil))
				}
				sseData(&b, chunk(oaDelta{ToolCalls: []oaToolCall{{Index: &zero, Function: oaFunction{Arguments: *p}}}}, nil))
			}
			a.chunks = append(a.chunks, bytes.Clone(b.Bytes()))
		}
	}
	b.Reset()
	sseData(&b, chunk(oaDelta{}, &finish))
	if s.usage {
		sseData(&b, oaChunk{ID: fakeCompletionID, Object: "chat.completion.chunk", Created: fakeCreated, Model: model,
			Choices: []oaChunkChoice{}, Usage: &usage})
	}
	b.WriteString(openAIDone)
	a.tail = bytes.Clone(b.Bytes())
	a.done = len(openAIDone)
	b.Reset()
	thought := HeartbeatThought
	sseData(&b, chunk(oaDelta{ReasoningContent: &thought}, nil))
	a.thought = bytes.Clone(b.Bytes())
	return a
}

// openAIDone is the frame ending an OpenAI stream.
const openAIDone = "data: [DONE]\n\n"

type anUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// anDeltaUsage is the usage of message_delta: output tokens only, as
// Anthropic sends it (input tokens are in message_start).
type anDeltaUsage struct {
	OutputTokens int `json:"output_tokens"`
}

type anText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anThinking struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anToolUse struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anMessage struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []any   `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        anUsage `json:"usage"`
}

type anEvent struct {
	Type         string     `json:"type"`
	Message      *anMessage `json:"message,omitempty"`
	Index        *int       `json:"index,omitempty"`
	ContentBlock any        `json:"content_block,omitempty"`
	Delta        any        `json:"delta,omitempty"`
	Usage        any        `json:"usage,omitempty"` // *anDeltaUsage in message_delta
}

type anTextDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anThinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type anSignatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

type anInputJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type anStopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

// anthropicPing is Anthropic's ping event, byte for byte.
const anthropicPing = "event: ping\ndata: {\"type\": \"ping\"}\n\n"

// buildAnthropic renders an Anthropic answer. Streams: message_start, the
// first block's content_block_start and ping; one content_block_delta per
// content event (thinking_delta, text_delta or input_json_delta), the first
// delta of a later block preceded by the previous block's signature_delta
// (thinking) and content_block_stop and its own content_block_start; then
// content_block_stop, message_delta and message_stop.
func buildAnthropic(model string, s shape, blocks []block) *answer {
	all, _ := events(blocks)
	stop := "end_turn"
	content := make([]any, 0, len(blocks))
	for _, b := range blocks {
		switch b.kind {
		case blockReasoning:
			content = append(content, anThinking{Type: "thinking", Thinking: b.text, Signature: ThinkingSignature})
		case blockText:
			content = append(content, anText{Type: "text", Text: b.text})
		case blockTool:
			stop = "tool_use"
			content = append(content, anToolUse{Type: "tool_use", ID: ToolCallIDAnthropic, Name: s.tool, Input: json.RawMessage(b.text)})
		}
	}
	a := &answer{body: mustJSON(anMessage{
		ID: fakeMessageID, Type: "message", Role: "assistant", Model: model,
		Content: content, StopReason: &stop,
		Usage: anUsage{InputTokens: fakePromptTokens, OutputTokens: all},
	})}

	start := func(b *bytes.Buffer, i int) {
		var cb any
		switch blocks[i].kind {
		case blockReasoning:
			cb = anThinking{Type: "thinking"}
		case blockText:
			cb = anText{Type: "text"}
		case blockTool:
			cb = anToolUse{Type: "tool_use", ID: ToolCallIDAnthropic, Name: s.tool, Input: json.RawMessage("{}")}
		}
		sseEvent(b, "content_block_start", anEvent{Type: "content_block_start", Index: &i, ContentBlock: cb})
	}
	stopBlock := func(b *bytes.Buffer, i int) {
		if blocks[i].kind == blockReasoning {
			sseEvent(b, "content_block_delta", anEvent{Type: "content_block_delta", Index: &i,
				Delta: anSignatureDelta{Type: "signature_delta", Signature: ThinkingSignature}})
		}
		sseEvent(b, "content_block_stop", anEvent{Type: "content_block_stop", Index: &i})
	}
	var b bytes.Buffer
	sseEvent(&b, "message_start", anEvent{Type: "message_start", Message: &anMessage{
		ID: fakeMessageID, Type: "message", Role: "assistant", Model: model,
		Content: []any{}, Usage: anUsage{InputTokens: fakePromptTokens, OutputTokens: 1},
	}})
	start(&b, 0)
	b.WriteString(anthropicPing)
	a.head = bytes.Clone(b.Bytes())
	for bi := range blocks {
		for pi, p := range blocks[bi].pieces {
			b.Reset()
			if bi > 0 && pi == 0 {
				stopBlock(&b, bi-1)
				start(&b, bi)
			}
			var d any
			switch blocks[bi].kind {
			case blockReasoning:
				d = anThinkingDelta{Type: "thinking_delta", Thinking: p}
			case blockText:
				d = anTextDelta{Type: "text_delta", Text: p}
			case blockTool:
				d = anInputJSONDelta{Type: "input_json_delta", PartialJSON: p}
			}
			sseEvent(&b, "content_block_delta", anEvent{Type: "content_block_delta", Index: &bi, Delta: d})
			a.chunks = append(a.chunks, bytes.Clone(b.Bytes()))
		}
	}
	b.Reset()
	stopBlock(&b, len(blocks)-1)
	sseEvent(&b, "message_delta", anEvent{Type: "message_delta", Delta: anStopDelta{StopReason: stop}, Usage: &anDeltaUsage{OutputTokens: all}})
	mark := b.Len()
	sseEvent(&b, "message_stop", anEvent{Type: "message_stop"})
	a.tail = bytes.Clone(b.Bytes())
	a.done = len(a.tail) - mark
	b.Reset()
	zero := 0
	sseEvent(&b, "content_block_delta", anEvent{Type: "content_block_delta", Index: &zero,
		Delta: anThinkingDelta{Type: "thinking_delta", Thinking: HeartbeatThought}})
	a.thought = bytes.Clone(b.Bytes())
	return a
}
