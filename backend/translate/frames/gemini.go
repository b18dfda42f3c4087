package frames

import (
	"strings"

	"omniroute/backend/jsonwalk"
	"omniroute/backend/resilience/watchdog"
)

// geminiChunk is what one Gemini GenerateContentResponse chunk carries,
// summed over its candidates' parts.
type geminiChunk struct {
	text      int  // bytes of non-thought text parts
	toolBytes int  // bytes of functionCall args
	tool      bool // a functionCall part
	reasoning bool // a thought part (or a signature-only part)
	finished  bool // a candidate has a finishReason, or the prompt was blocked
	hasCands  bool
	blocked   bool
	// first is the text DeltaText reads: the non-thought text parts of the
	// first candidate, in order (raw values).
	first     []string
	firstDone bool
}

// classifyGemini classifies a Gemini streamGenerateContent (alt=sse) chunk:
//
//	candidates[].finishReason set (not FINISH_REASON_UNSPECIFIED),  End (Bytes = text in the chunk)
//	  or promptFeedback.blockReason without candidates
//	candidates[].content.parts[].text (not thought) non-empty       Content
//	candidates[].content.parts[].functionCall                       ToolCall (Bytes = args JSON)
//	parts[] with thought: true, or only a thoughtSignature          Reasoning
//	top-level "error" (not null), nothing above                     Error
//	usageMetadata, nothing above                                    Metadata
//	anything else                                                   Heartbeat
//
// The text DeltaText reads is the first candidate's non-thought text parts.
func classifyGemini(json string, wantText bool) (watchdog.Frame, string) {
	var c geminiChunk
	var errField, usage, feedback string
	jsonwalk.Members(json, func(key, tail string) int {
		switch key {
		case "candidates":
			return jsonwalk.Elements(tail, c.addCandidate)
		case "error":
			errField = jsonwalk.Value(tail)
			return len(errField)
		case "usageMetadata", "usage_metadata":
			usage = jsonwalk.Value(tail)
			return len(usage)
		case "promptFeedback", "prompt_feedback":
			feedback = jsonwalk.Value(tail)
			return len(feedback)
		}
		return 0
	})
	if !c.hasCands && jsonwalk.IsObject(feedback) {
		r := jsonwalk.Member(feedback, "blockReason")
		if r == "" {
			r = jsonwalk.Member(feedback, "block_reason")
		}
		if jsonwalk.StrLen(r) > 0 {
			c.finished = true
		}
	}
	var fr watchdog.Frame
	switch {
	case !c.finished && c.text == 0 && !c.tool && !c.reasoning && jsonwalk.Present(errField):
		fr = frame(watchdog.Error, 0)
	case c.finished:
		fr = frame(watchdog.End, c.text+c.toolBytes)
	case c.text > 0:
		fr = frame(watchdog.Content, c.text)
	case c.tool:
		fr = frame(watchdog.ToolCall, c.toolBytes)
	case c.reasoning:
		fr = frame(watchdog.Reasoning, 0)
	case jsonwalk.IsObject(usage):
		fr = frame(watchdog.Metadata, 0)
	default:
		fr = frame(watchdog.Heartbeat, 0)
	}
	if !wantText || fr.Kind != watchdog.Content || len(c.first) == 0 {
		return fr, ""
	}
	if len(c.first) == 1 {
		return fr, jsonwalk.Str(c.first[0])
	}
	var b strings.Builder
	for _, v := range c.first {
		b.WriteString(jsonwalk.Str(v))
	}
	return fr, b.String()
}

// addCandidate folds the candidate at the start of tail into c.
func (c *geminiChunk) addCandidate(tail string) int {
	first := !c.hasCands
	c.hasCands = true
	return jsonwalk.Members(tail, func(key, tail string) int {
		switch key {
		case "finishReason", "finish_reason":
			v := jsonwalk.Value(tail)
			if s := jsonwalk.Str(v); s != "" && s != "FINISH_REASON_UNSPECIFIED" {
				c.finished = true
			}
			return len(v)
		case "content":
			return jsonwalk.Members(tail, func(key, tail string) int {
				if key != "parts" {
					return 0
				}
				return jsonwalk.Elements(tail, func(tail string) int { return c.addPart(tail, first) })
			})
		}
		return 0
	})
}

// addPart folds one Part into c.
func (c *geminiChunk) addPart(tail string, first bool) int {
	part := jsonwalk.Value(tail)
	var text, thought, call, sig string
	jsonwalk.Members(part, func(key, tail string) int {
		v := jsonwalk.Value(tail)
		switch key {
		case "text":
			text = v
		case "thought":
			thought = v
		case "functionCall", "function_call":
			call = v
		case "thoughtSignature", "thought_signature":
			sig = v
		}
		return len(v)
	})
	switch {
	case jsonwalk.IsObject(call):
		c.tool = true
		c.toolBytes += len(jsonwalk.Member(call, "args"))
	case thought == "true":
		c.reasoning = true
	case jsonwalk.IsString(text):
		n := jsonwalk.StrLen(text)
		c.text += n
		if first && n > 0 {
			c.first = append(c.first, text)
		}
		if n == 0 && jsonwalk.IsString(sig) {
			c.reasoning = true
		}
	case jsonwalk.IsString(sig):
		c.reasoning = true
	}
	return len(part)
}
