package openrouter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/providers"
)

// OpenRouter's reasoning_details (its reference, "Reasoning Tokens": the
// "Reasoning Details API Shape" and "Preserving Reasoning" sections) is an
// array on an answer's message (choices[].message.reasoning_details) and on
// stream deltas (choices[].delta.reasoning_details, the whole sequence being
// the chunks' entries in order). Each entry has a type and the common fields
// id, format ("anthropic-claude-v1" the default, "openai-responses-v1",
// "google-gemini-v1", …) and index:
//
//	reasoning.text       text, with an optional signature
//	reasoning.summary    summary: a summary of the reasoning
//	reasoning.encrypted  data: encrypted or redacted reasoning
//
// To keep reasoning across a tool-calling turn a client gives the array back
// unmodified on the assistant message (reasoning_details), or the plain text
// as reasoning (reasoning_content is its alias). The gateway's Chat pivot
// holds signed reasoning as thinking_blocks (LiteLLM's form of Anthropic's
// blocks), so the mapping is:
//
//	reasoning.text + signature   thinking {thinking, signature}
//	reasoning.encrypted          redacted_thinking {data}
//	reasoning.text / .summary    their text is the reasoning text
//	  without signature          (reasoning_content when the answer has no
//	                             reasoning string of its own)
//
// and back on replay: thinking → reasoning.text, redacted_thinking →
// reasoning.encrypted, in the blocks' order. An entry in Anthropic's format
// (the default) keeps its signature or data verbatim, so a client's block is
// Anthropic's own; an entry of another format, whose id and format the next
// request needs, travels sealed in the block's opaque value (sealPrefix and
// the base64 JSON of the entry without its text) and is given back as it came.

// formatAnthropic is the entries' default format: Anthropic's blocks.
const formatAnthropic = "anthropic-claude-v1"

// Entry types.
const (
	typeText      = "reasoning.text"
	typeSummary   = "reasoning.summary"
	typeEncrypted = "reasoning.encrypted"
)

// sealPrefix starts a signature or data that carries a whole entry (an
// entry the gateway cannot give back from the block's own fields).
const sealPrefix = "omniroute.openrouter.v1:"

// keyDetails is the member's JSON key, for a cheap look before parsing.
var keyDetails = []byte(`"reasoning_details"`)

// verbatim reports an entry that a thinking block holds as it is: Anthropic's
// format (named or the default), whose signature and data are Anthropic's
// own. Its id, which Anthropic's blocks have none of, is not kept.
func verbatim(e gjson.Result) bool {
	f := e.Get("format").String()
	return f == "" || f == formatAnthropic
}

// seal is the opaque value carrying entry e, without its text (the block's
// own thinking text) and index (its place, given back by position).
func seal(e gjson.Result) string {
	raw := []byte(e.Raw)
	raw, _ = sjson.DeleteBytes(raw, "text")
	raw, _ = sjson.DeleteBytes(raw, "index")
	return sealPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

// unseal is the entry a sealed value carries (ok false: not one of ours).
func unseal(v string) (gjson.Result, bool) {
	rest, ok := strings.CutPrefix(v, sealPrefix)
	if !ok {
		return gjson.Result{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || !gjson.ValidBytes(raw) {
		return gjson.Result{}, false
	}
	e := gjson.ParseBytes(raw)
	return e, e.IsObject()
}

// opaque is the signature or data a block carries for entry e: the entry's
// own value when verbatim, else the sealed entry.
func opaque(e gjson.Result, member string) string {
	if verbatim(e) {
		return e.Get(member).String()
	}
	return seal(e)
}

// pivot is what an answer's reasoning_details give the Chat pivot: the
// thinking_blocks (JSON array, nil for none) and the reasoning text (text and
// summaries, in order). full says a message (thinking blocks carry their
// text) rather than a stream delta (their text comes as reasoning text).
func pivot(details gjson.Result, full bool) (blocks []byte, text string) {
	var sb strings.Builder
	details.ForEach(func(_, e gjson.Result) bool {
		switch e.Get("type").String() {
		case typeText:
			t := e.Get("text").String()
			sb.WriteString(t)
			if sig := e.Get("signature"); sig.Type == gjson.String && sig.Str != "" {
				blocks = appendBlock(blocks, `{"type":"thinking"`)
				if full {
					blocks = append(blocks, `,"thinking":`...)
					blocks = appendJSON(blocks, t)
				}
				blocks = append(blocks, `,"signature":`...)
				blocks = appendJSON(blocks, opaque(e, "signature"))
				blocks = append(blocks, '}')
			}
		case typeSummary:
			sb.WriteString(e.Get("summary").String())
		case typeEncrypted:
			if d := e.Get("data"); d.Type == gjson.String && d.Str != "" {
				blocks = appendBlock(blocks, `{"type":"redacted_thinking","data":`)
				blocks = appendJSON(blocks, opaque(e, "data"))
				blocks = append(blocks, '}')
			}
		}
		return true
	})
	if blocks != nil {
		blocks = append(blocks, ']')
	}
	return blocks, sb.String()
}

// appendBlock opens the array or adds a comma, then the block's start.
func appendBlock(blocks []byte, start string) []byte {
	if blocks == nil {
		blocks = append(blocks, '[')
	} else {
		blocks = append(blocks, ',')
	}
	return append(blocks, start...)
}

// withPivot adds the pivot's members to the object at path of doc (an
// answer's message or a chunk's delta) from its reasoning_details:
// thinking_blocks, and reasoning_content when the object has no reasoning
// text of its own. The object's own members stay, reasoning_details
// included (a Chat client of OpenRouter reads them as before).
func withPivot(doc []byte, path string, obj gjson.Result, full bool) []byte {
	details := obj.Get("reasoning_details")
	if !details.IsArray() {
		return doc
	}
	blocks, text := pivot(details, full)
	if blocks != nil && !obj.Get("thinking_blocks").Exists() {
		if out, err := sjson.SetRawBytes(doc, path+".thinking_blocks", blocks); err == nil {
			doc = out
		}
	}
	if text != "" && obj.Get("reasoning_content").String() == "" && obj.Get("reasoning").String() == "" {
		if out, err := sjson.SetBytes(doc, path+".reasoning_content", text); err == nil {
			doc = out
		}
	}
	return doc
}

// Answer is a Chat Completions answer of OpenRouter in the pivot's form:
// each choice's message gains thinking_blocks (and reasoning_content) from
// its reasoning_details. An answer without them is returned as it is.
func Answer(body []byte) []byte {
	if !bytes.Contains(body, keyDetails) {
		return body
	}
	out := body
	gjson.GetBytes(body, "choices").ForEach(func(i, c gjson.Result) bool {
		out = withPivot(out, "choices."+i.String()+".message", c.Get("message"), true)
		return true
	})
	return out
}

// Chunk is a chat.completion.chunk's JSON in the pivot's form: each
// choice's delta gains thinking_blocks (a signed entry's signature, an
// encrypted entry's data) and reasoning_content from its reasoning_details.
func Chunk(data []byte) []byte {
	if !bytes.Contains(data, keyDetails) {
		return data
	}
	out := data
	gjson.GetBytes(data, "choices").ForEach(func(i, c gjson.Result) bool {
		out = withPivot(out, "choices."+i.String()+".delta", c.Get("delta"), false)
		return true
	})
	return out
}

// Replay is the Chat body as OpenRouter takes an assistant turn's signed
// reasoning back: each message's thinking_blocks become its
// reasoning_details (verbatim blocks as Anthropic-format entries, sealed ones
// as the entries they carry), in order, and the message's reasoning text is
// dropped (the entries carry it); a message that already has
// reasoning_details (a Chat client giving OpenRouter's own back) keeps them.
// thinking_blocks are removed everywhere; what remains of the pivot's
// members is the row's ReasoningReplay's.
func Replay(body []byte) ([]byte, error) {
	return providers.ReplayThinking(body, "reasoning_details", giveDetails)
}

// giveDetails writes message m's reasoning_details from its thinking blocks
// tb and drops its reasoning text.
func giveDetails(out []byte, at string, m, tb gjson.Result) ([]byte, error) {
	details := replayDetails(tb)
	if details == nil {
		return out, nil
	}
	out, err := sjson.SetRawBytes(out, at+"reasoning_details", details)
	if err != nil || !m.Get("reasoning_content").Exists() {
		return out, err
	}
	return sjson.DeleteBytes(out, at+"reasoning_content")
}

// replayDetails is the reasoning_details array of a message's thinking
// blocks (nil: none to give back).
func replayDetails(tb gjson.Result) []byte {
	var out []byte
	n := 0
	tb.ForEach(func(_, b gjson.Result) bool {
		var e []byte
		switch b.Get("type").String() {
		case "thinking":
			sig := b.Get("signature").String()
			if sig == "" {
				return true
			}
			text := b.Get("thinking").String()
			if sealed, ok := unseal(sig); ok {
				e = []byte(sealed.Raw)
				e, _ = sjson.SetBytes(e, "text", text)
			} else {
				e = []byte(`{"type":"` + typeText + `","text":`)
				e = appendJSON(e, text)
				e = append(e, `,"signature":`...)
				e = appendJSON(e, sig)
				e = append(e, `,"format":"`+formatAnthropic+`"}`...)
			}
		case "redacted_thinking":
			data := b.Get("data").String()
			if data == "" {
				return true
			}
			if sealed, ok := unseal(data); ok {
				e = []byte(sealed.Raw)
			} else {
				e = []byte(`{"type":"` + typeEncrypted + `","data":`)
				e = appendJSON(e, data)
				e = append(e, `,"format":"`+formatAnthropic+`"}`...)
			}
		default:
			return true
		}
		e, _ = sjson.SetBytes(e, "index", n)
		n++
		if out == nil {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, e...)
		return true
	})
	if out != nil {
		out = append(out, ']')
	}
	return out
}

// appendJSON appends s as a JSON string.
func appendJSON(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}
