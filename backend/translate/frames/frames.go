// Package frames tells what kind of progress one upstream SSE event represents, in
// each wire format the gateway speaks, so the stream watchdog can tell model output
// from reasoning, tool calls, heartbeats and bookkeeping.
//
// Classification validates the data with jsonv (bounded depth, no recursion) and then looks up only the fields
// it needs in one pass, skipping the rest without decoding it: a few hundred ns
// per event, one copy of the data, and no panics on any input.
//
// Bytes is the UTF-8 length of the user-visible text (Content) or tool-argument
// delta (ToolCall) the event carries, after JSON unescaping: the throughput proxy
// of guide §6. It is 0 for every other kind, except an OpenAI chunk that carries
// text and a finish_reason at once: End, with the text's bytes, so the last words
// still count as output.
//
// Rules common to every format, checked first:
//   - an SSE comment is a Heartbeat;
//   - an "event: error" event is an Error, whatever its data;
//   - "[DONE]" is End;
//   - data that is not a JSON object (malformed, truncated, or a bare value) is
//     Unknown, which never counts as progress;
//   - an empty data field is a Heartbeat in Chat and Gemini; in Messages and Responses the
//     event name alone is classified (so "event: ping" is a Heartbeat).
//
// Within an event, output outranks tool calls, which outrank reasoning, which
// outranks heartbeats and metadata; an OpenAI finish_reason (a Gemini
// finishReason) makes the chunk End.
// Responses "response.failed" is an Error rather than End (both end the stream;
// Error says how). Valid JSON of a shape this package does not know is Metadata:
// bookkeeping, not progress. The doc comments of classifyChat, classifyMessages,
// classifyResponses and classifyGemini hold each format's full table.
package frames

import (
	"bytes"
	"strings"
	"unsafe"

	"omniroute/backend/jsonv"
	"omniroute/backend/jsonwalk"
	"omniroute/backend/resilience/watchdog"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// Classify returns the watchdog Frame for one upstream SSE event in format f. An
// unrecognized format is read as Chat, the hub format.
func Classify(f translate.Format, ev sse.Event) watchdog.Frame {
	fr, _ := classify(f, ev, false)
	return fr
}

// ClassifyText is Classify and, for a Content frame, the text DeltaText reads
// from the event ("" for every other kind), found in the same pass over the
// event: a relay that keeps the text it forwarded does not walk each event
// twice (DeltaText costs ≈ 70 % of a Chat chunk's Classify).
func ClassifyText(f translate.Format, ev sse.Event) (watchdog.Frame, string) {
	return classify(f, ev, true)
}

// classify is Classify, and ClassifyText when wantText.
func classify(f translate.Format, ev sse.Event, wantText bool) (watchdog.Frame, string) {
	if ev.Comment {
		return frame(watchdog.Heartbeat, 0), ""
	}
	if ev.Event == "error" {
		return frame(watchdog.Error, 0), ""
	}
	data := bytes.TrimSpace(ev.Data)
	if string(data) == "[DONE]" {
		return frame(watchdog.End, 0), ""
	}
	var json string
	if len(data) > 0 {
		if data[0] != '{' || !jsonv.Valid(data) {
			return frame(watchdog.Unknown, 0), ""
		}
		// A view of the event's bytes, not a copy: the classifiers only
		// compare and measure, and the Frame they return holds no string.
		json = unsafe.String(unsafe.SliceData(data), len(data))
		if wantText {
			// DeltaText reads the untrimmed data, where only JSON's own white
			// space may come before the object: after any other (a \v, a
			// no-break space, which TrimSpace also cut) it reads no text.
			raw := unsafe.String(unsafe.SliceData(ev.Data), len(ev.Data))
			i := jsonwalk.SkipSpace(raw, 0)
			wantText = i < len(raw) && raw[i] == '{'
		}
	}
	switch f {
	case translate.Messages:
		return classifyMessages(ev.Event, json, wantText)
	case translate.Responses:
		return classifyResponses(ev.Event, json, wantText)
	case translate.Gemini:
		if json == "" {
			return frame(watchdog.Heartbeat, 0), ""
		}
		return classifyGemini(json, wantText)
	default:
		if json == "" {
			return frame(watchdog.Heartbeat, 0), ""
		}
		return classifyChat(json, wantText)
	}
}

// frame builds a Frame.
func frame(k watchdog.Kind, n int) watchdog.Frame { return watchdog.Frame{Kind: k, Bytes: n} }

// textOrHeartbeat is k with n bytes, or a Heartbeat for an empty delta.
func textOrHeartbeat(k watchdog.Kind, n int) watchdog.Frame {
	if n <= 0 {
		return frame(watchdog.Heartbeat, 0)
	}
	return frame(k, n)
}

// chatDelta is what one OpenAI chat chunk carries, summed over its choices.
type chatDelta struct {
	text      int  // content + refusal bytes
	toolBytes int  // tool-call argument bytes
	tool      bool // a tool call (or legacy function_call) is streaming
	reasoning bool // reasoning_content / reasoning / reasoning_details present
	finished  bool // some choice has a finish_reason

	// What DeltaText reads, recorded when wantText: the raw first "content"
	// of the first "delta" of the first element of the first "choices".
	wantText    bool
	choicesSeen bool // a "choices" member was walked
	firstChoice bool // the next element begun is the first of the first "choices"
	deltaSeen   bool // the first choice's first "delta" was walked
	capture     bool // walking that "delta"
	contentSeen bool // its first "content" was met
	content     string
}

// progress reports whether the chunk carried anything but bookkeeping.
func (d *chatDelta) progress() bool {
	return d.finished || d.text > 0 || d.tool || d.reasoning
}

// classifyChat classifies an OpenAI Chat Completions chunk:
//
//	choices[].finish_reason set                        End (Bytes = text in the chunk)
//	choices[].delta.content / refusal non-empty        Content
//	choices[].delta.tool_calls non-empty, function_call ToolCall (Bytes = arguments)
//	choices[].delta.reasoning_content / reasoning      Reasoning, even when "" (the Kiro
//	  (string), reasoning_details, thinking_blocks      executor's signed-reasoning marker;
//	  (non-empty)                                        a signature or redacted reasoning)
//	top-level "error" (not null), nothing above        Error
//	usage, nothing above                               Metadata
//	role-only, empty delta, no choices                 Heartbeat
//
// A content array (content parts) counts its "text" parts as Content and its
// "thinking" parts as Reasoning.
func classifyChat(json string, wantText bool) (watchdog.Frame, string) {
	d := chatDelta{wantText: wantText}
	var errField, usage string
	jsonwalk.Members(json, func(key, tail string) int {
		switch key {
		case "choices":
			d.firstChoice = d.wantText && !d.choicesSeen
			d.choicesSeen = true
			n := jsonwalk.Elements(tail, d.addChoice)
			d.firstChoice = false // an empty first "choices" has none
			return n
		case "error":
			errField = jsonwalk.Value(tail)
			return len(errField)
		case "usage":
			usage = jsonwalk.Value(tail)
			return len(usage)
		}
		return 0
	})
	fr := d.frame(errField, usage)
	if wantText && fr.Kind == watchdog.Content {
		return fr, jsonwalk.Str(d.content)
	}
	return fr, ""
}

// frame is the Frame of a chunk that carried d, and the raw values of its
// top-level "error" and "usage" members.
func (d *chatDelta) frame(errField, usage string) watchdog.Frame {
	switch {
	case !d.progress() && jsonwalk.Present(errField):
		return frame(watchdog.Error, 0)
	case d.finished:
		return frame(watchdog.End, d.text+d.toolBytes)
	case d.text > 0:
		return frame(watchdog.Content, d.text)
	case d.tool:
		return frame(watchdog.ToolCall, d.toolBytes)
	case d.reasoning:
		return frame(watchdog.Reasoning, 0)
	case jsonwalk.IsObject(usage):
		return frame(watchdog.Metadata, 0)
	}
	return frame(watchdog.Heartbeat, 0)
}

// addChoice folds the element of "choices" at the start of tail into d and
// returns its length.
func (d *chatDelta) addChoice(tail string) int {
	first := d.firstChoice
	d.firstChoice = false
	return jsonwalk.Members(tail, func(key, tail string) int {
		switch key {
		case "finish_reason":
			v := jsonwalk.Value(tail)
			if jsonwalk.StrLen(v) > 0 {
				d.finished = true
			}
			return len(v)
		case "text":
			// A legacy text completion's chunk (POST /v1/completions) carries
			// its text here; a chat chunk has no such member.
			v := jsonwalk.Value(tail)
			d.text += jsonwalk.StrLen(v)
			return len(v)
		case "delta":
			d.capture = first && !d.deltaSeen
			d.deltaSeen = d.deltaSeen || first
			n := jsonwalk.Members(tail, d.addDeltaField)
			d.capture = false
			return n
		}
		return 0
	})
}

// addDeltaField folds the delta field key, whose value starts tail, into d and
// returns the value's length (0: skip it).
func (d *chatDelta) addDeltaField(key, tail string) int {
	switch key {
	case "content":
		first := d.capture && !d.contentSeen
		d.contentSeen = d.contentSeen || d.capture
		if jsonwalk.IsArray(tail) {
			return jsonwalk.Elements(tail, d.addContentPart) // DeltaText reads no text from parts
		}
		v := jsonwalk.Value(tail)
		if first {
			d.content = v
		}
		d.text += jsonwalk.StrLen(v)
		return len(v)
	case "refusal":
		v := jsonwalk.Value(tail)
		d.text += jsonwalk.StrLen(v)
		return len(v)
	case "tool_calls":
		return jsonwalk.Elements(tail, func(call string) int {
			d.tool = true
			v := jsonwalk.Value(call)
			d.toolBytes += jsonwalk.StrLen(jsonwalk.Path(v, "function", "arguments"))
			return len(v)
		})
	case "function_call":
		if jsonwalk.IsObject(tail) {
			v := jsonwalk.Value(tail)
			d.tool = true
			d.toolBytes += jsonwalk.StrLen(jsonwalk.Member(v, "arguments"))
			return len(v)
		}
	case "reasoning_content", "reasoning":
		if jsonwalk.IsString(tail) {
			d.reasoning = true
		}
	case "reasoning_details", "thinking_blocks":
		if jsonwalk.IsArray(tail) && jsonwalk.SkipSpace(tail, 1) < len(tail) && tail[jsonwalk.SkipSpace(tail, 1)] != ']' {
			d.reasoning = true
		}
	}
	return 0
}

// addContentPart folds the content part at the start of tail into d and returns
// its length.
func (d *chatDelta) addContentPart(tail string) int {
	part := jsonwalk.Value(tail)
	switch jsonwalk.Str(jsonwalk.Member(part, "type")) {
	case "thinking", "reasoning":
		d.reasoning = true
	default:
		d.text += jsonwalk.StrLen(jsonwalk.Member(part, "text"))
	}
	return len(part)
}

// classifyMessages classifies an Anthropic Messages event by its "type" (or, without
// one, its SSE event name):
//
//	ping                                               Heartbeat
//	message_start, content_block_stop, message_delta   Metadata
//	content_block_start: text                          Metadata (Content if it has text)
//	content_block_start: thinking, redacted_thinking   Reasoning
//	content_block_start: tool_use, server_tool_use,    ToolCall
//	  mcp_tool_use
//	content_block_delta: text_delta                    Content (Heartbeat if empty)
//	content_block_delta: input_json_delta              ToolCall (Heartbeat if empty)
//	content_block_delta: thinking_delta                Reasoning, even with empty text
//	content_block_delta: signature_delta               Reasoning if the signature is
//	                                                     non-empty, else Heartbeat
//	message_stop                                       End
//	error                                              Error
func classifyMessages(event, json string, wantText bool) (watchdog.Frame, string) {
	// One pass: the nested "delta" / "content_block" object is walked in place.
	var typ, sub, text, partial, signature string
	// What DeltaText reads: the first "type", and the first "text" of the
	// first "delta".
	var firstType, deltaText string
	var typeSeen, deltaSeen bool
	jsonwalk.Members(json, func(key, tail string) int {
		switch key {
		case "type":
			v := jsonwalk.Value(tail)
			typ = jsonwalk.Str(v)
			if !typeSeen {
				typeSeen, firstType = true, typ
			}
			return len(v)
		case "delta", "content_block":
			firstDelta := key == "delta" && !deltaSeen
			deltaSeen = deltaSeen || key == "delta"
			return jsonwalk.Members(tail, func(key, tail string) int {
				v := jsonwalk.Value(tail)
				switch key {
				case "type":
					sub = jsonwalk.Str(v)
				case "text":
					text = v
					if firstDelta && deltaText == "" { // a raw value is never empty
						deltaText = v
					}
				case "partial_json":
					partial = v
				case "signature":
					signature = v
				}
				return len(v)
			})
		}
		return 0
	})
	if typ == "" {
		typ = event
	}
	fr := messagesFrame(typ, sub, text, partial, signature)
	if wantText && fr.Kind == watchdog.Content && (event == "content_block_delta" || firstType == "content_block_delta") {
		return fr, jsonwalk.Str(deltaText)
	}
	return fr, ""
}

// messagesFrame is the Frame of a Messages event of type typ whose "delta" or
// "content_block" had the type sub and the raw text, partial_json and
// signature values given.
func messagesFrame(typ, sub, text, partial, signature string) watchdog.Frame {
	switch typ {
	case "ping":
		return frame(watchdog.Heartbeat, 0)
	case "content_block_start":
		switch sub {
		case "thinking", "redacted_thinking":
			return frame(watchdog.Reasoning, 0)
		case "tool_use", "server_tool_use", "mcp_tool_use":
			return frame(watchdog.ToolCall, 0)
		case "text":
			if n := jsonwalk.StrLen(text); n > 0 {
				return frame(watchdog.Content, n)
			}
		}
		return frame(watchdog.Metadata, 0)
	case "content_block_delta":
		switch sub {
		case "text_delta":
			return textOrHeartbeat(watchdog.Content, jsonwalk.StrLen(text))
		case "input_json_delta":
			return textOrHeartbeat(watchdog.ToolCall, jsonwalk.StrLen(partial))
		case "thinking_delta":
			return frame(watchdog.Reasoning, 0)
		case "signature_delta":
			if jsonwalk.StrLen(signature) > 0 {
				return frame(watchdog.Reasoning, 0)
			}
			return frame(watchdog.Heartbeat, 0)
		}
		return frame(watchdog.Metadata, 0)
	case "message_stop":
		return frame(watchdog.End, 0)
	case "error":
		return frame(watchdog.Error, 0)
	}
	return frame(watchdog.Metadata, 0)
}

// classifyResponses classifies an OpenAI Responses event by its "type" (or, without
// one, its SSE event name):
//
//	response.output_text.delta, response.refusal.delta Content (Heartbeat if empty)
//	response.*_call_*.delta (function_call_arguments,   ToolCall (Bytes = delta;
//	  custom_tool_call_input, mcp_call_arguments,        Heartbeat if empty)
//	  code_interpreter_call_code)
//	response.output_item.added / .done                 by item.type: reasoning → Reasoning,
//	                                                     *_call, mcp_* → ToolCall,
//	                                                     message and others → Metadata
//	response.reasoning*                                Reasoning (summary/text deltas,
//	                                                     parts, even when empty)
//	response.<tool>_call.<phase> (web_search_call.      ToolCall (hosted tool progress)
//	  searching, mcp_call.in_progress, …), mcp_list_tools.*
//	response.completed, response.incomplete            End
//	response.failed, error                             Error
//	response.created, in_progress, queued, content     Metadata
//	  parts, *.done, annotations, anything else
func classifyResponses(event, json string, wantText bool) (watchdog.Frame, string) {
	// One pass over the event for the members read; "item" is walked for its
	// type only on the item events.
	typ, delta, item := responsesMembers(event, json)
	switch typ {
	case "response.output_text.delta":
		text := jsonwalk.Str(delta)
		fr := textOrHeartbeat(watchdog.Content, len(text))
		if !wantText || fr.Kind != watchdog.Content {
			text = ""
		}
		return fr, text
	case "response.refusal.delta":
		return textOrHeartbeat(watchdog.Content, jsonwalk.StrLen(delta)), ""
	case "response.output_item.added", "response.output_item.done":
		switch item := jsonwalk.Str(field(item, "type")); {
		case item == "reasoning":
			return frame(watchdog.Reasoning, 0), ""
		case strings.HasSuffix(item, "_call") || strings.HasPrefix(item, "mcp_"):
			return frame(watchdog.ToolCall, 0), ""
		}
		return frame(watchdog.Metadata, 0), ""
	}
	return classifyResponsesType(typ, delta), ""
}

// field is the raw value of obj's first member named key, keys compared
// unescaped (as Fields compares them).
func field(obj, key string) string {
	keys := [1]string{key}
	var vals [1]string
	jsonwalk.Fields(obj, keys[:], vals[:])
	return vals[0]
}

// responsesMembers reads a Responses event's type (its "type" member, else
// the SSE event name) and the raw values of its "delta" and "item" members,
// the first of each as gjson reads them, in one walk.
func responsesMembers(event, json string) (typ, delta, item string) {
	// jsonwalk.Fields with a switch for its loop over the keys: this runs
	// on every event of a Responses stream. A raw value is never empty, so
	// "" means not seen yet.
	var rawType string
	jsonwalk.Members(json, func(key, tail string) int {
		var dst *string
		switch jsonwalk.Key(key) {
		case "type":
			dst = &rawType
		case "delta":
			dst = &delta
		case "item":
			dst = &item
		default:
			return 0
		}
		if *dst != "" {
			return 0
		}
		*dst = jsonwalk.Value(tail)
		return len(*dst)
	})
	if typ = jsonwalk.Str(rawType); typ == "" {
		typ = event
	}
	return typ, delta, item
}

// classifyResponsesType is classifyResponses for the event types that are
// not text or output items.
func classifyResponsesType(typ, delta string) watchdog.Frame {
	switch typ {
	case "response.completed", "response.incomplete":
		return frame(watchdog.End, 0)
	case "response.failed", "error":
		return frame(watchdog.Error, 0)
	}
	rest, ok := strings.CutPrefix(typ, "response.")
	if !ok {
		return frame(watchdog.Metadata, 0)
	}
	if strings.HasPrefix(rest, "reasoning") {
		return frame(watchdog.Reasoning, 0)
	}
	name, phase, _ := strings.Cut(rest, ".")
	switch {
	case strings.Contains(name, "_call_") && phase == "delta":
		return textOrHeartbeat(watchdog.ToolCall, jsonwalk.StrLen(delta))
	case strings.HasSuffix(name, "_call") || name == "mcp_list_tools":
		return frame(watchdog.ToolCall, 0)
	}
	return frame(watchdog.Metadata, 0)
}

// DeltaText is the assistant text one content event of an upstream stream in
// format f carries: choices[0].delta.content of a Chat chunk, delta.text of a
// Messages content_block_delta, delta of a Responses output_text delta (not
// a refusal's: a prefill would not hold it), the non-thought text parts of a
// Gemini chunk's first candidate, and "" otherwise. It reads data with this
// package's scanner: no parse by a general JSON library, and a shallow stack
// under the relay's frames. The text is a view of data unless it had escapes:
// the caller copies what it keeps.
func DeltaText(f translate.Format, event string, data []byte) string {
	json := unsafe.String(unsafe.SliceData(data), len(data))
	if f == translate.Responses {
		if typ, delta, _ := responsesMembers(event, json); typ == "response.output_text.delta" {
			return jsonwalk.Str(delta)
		}
		return ""
	}
	if f == translate.Messages {
		if event != "content_block_delta" && jsonwalk.Str(jsonwalk.Member(json, "type")) != "content_block_delta" {
			return ""
		}
		return jsonwalk.Str(jsonwalk.Path(json, "delta", "text"))
	}
	if f == translate.Gemini {
		var c geminiChunk
		jsonwalk.Elements(jsonwalk.Member(json, "candidates"), func(tail string) int {
			return c.addCandidate(tail)
		})
		var b strings.Builder
		for _, v := range c.first {
			b.WriteString(jsonwalk.Str(v))
		}
		return b.String()
	}
	var first string
	jsonwalk.Elements(jsonwalk.Member(json, "choices"), func(tail string) int {
		first = jsonwalk.Value(tail)
		return -1
	})
	return jsonwalk.Str(jsonwalk.Path(first, "delta", "content"))
}
