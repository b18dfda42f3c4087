package gateway

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/translate/sse"
)

// A Responses client (Codex) reads a stateful event sequence: one response
// id, items with ids and output indexes, content parts, and sequence numbers
// that only grow; the *.done events and response.completed carry the whole
// text. A continuation is a second response from another upstream, so its
// events are rewritten into the client's: its opening events dropped, its
// ids, indexes and sequence numbers replaced by the client's, and its done
// events given the delivered text plus its own.

// clientResponse is what a Responses client was sent of its response.
type clientResponse struct {
	id, model    string
	seq          int64 // the next sequence number
	msgID        string
	msgIndex     int64
	contentIndex int64
	// other: an item other than the one message (reasoning, a function
	// call), whose place in response.completed a splice cannot rebuild.
	other bool
	parts int // content parts of the message
}

// noteEvent records one event the client was sent.
func (c *clientResponse) noteEvent(data []byte) {
	r := gjson.ParseBytes(data)
	if n := r.Get("sequence_number"); n.Type == gjson.Number {
		c.seq = max(c.seq, n.Int()+1)
	}
	switch r.Get("type").String() {
	case "response.created", "response.in_progress":
		c.id, c.model = r.Get("response.id").String(), r.Get("response.model").String()
	case "response.output_item.added":
		if r.Get("item.type").String() == "message" && c.msgID == "" {
			c.msgID, c.msgIndex = r.Get("item.id").String(), r.Get("output_index").Int()
		} else {
			c.other = true
		}
	case "response.content_part.added":
		c.contentIndex = r.Get("content_index").Int()
		c.parts++
	}
}

// noteWire records the events in out, SSE bytes a translator wrote.
func (c *clientResponse) noteWire(out []byte) {
	var p sse.Parser
	_ = p.Feed(out, func(ev sse.Event) bool {
		if !ev.Comment && len(ev.Data) > 0 && ev.Data[0] == '{' {
			c.noteEvent(ev.Data)
		}
		return true
	})
}

// continuable reports whether a continuation can be spliced in: one message
// item with one text part was open, nothing else.
func (c *clientResponse) continuable() bool {
	return c.id != "" && c.msgID != "" && !c.other && c.parts == 1
}

// responsesSplice returns the filter that rewrites a continuation's Responses
// events into the client's response (see clientResponse): delivered is the
// text the client has; trimLead drops the white space the continuation starts
// with (the prefill left out the delivered text's trailing white space).
func responsesSplice(c *clientResponse, delivered string, trimLead bool) func([]byte) []byte {
	var parser sse.Parser
	var out []byte
	var text strings.Builder // the continuation's text, as the client gets it
	full := func() string { return delivered + text.String() }
	return func(in []byte) []byte {
		out = out[:0]
		_ = parser.Feed(in, func(ev sse.Event) bool {
			if ev.Comment || len(ev.Data) == 0 || ev.Data[0] != '{' {
				return true
			}
			data := ev.Data
			r := gjson.ParseBytes(data)
			typ := r.Get("type").String()
			switch {
			case typ == "response.created" || typ == "response.in_progress" || typ == "response.content_part.added" ||
				strings.HasPrefix(typ, "response.reasoning") || strings.HasPrefix(typ, "response.function_call"):
				return true // the client's response is already open; no reasoning or call is spliced
			case typ == "response.output_item.added" || typ == "response.output_item.done":
				if r.Get("item.type").String() != "message" || typ == "response.output_item.added" {
					return true
				}
			}
			set := func(path string, v any) {
				if d, err := sjson.SetBytes(data, path, v); err == nil {
					data = d
				}
			}
			set("sequence_number", c.seq)
			c.seq++
			if r.Get("item_id").Exists() {
				set("item_id", c.msgID)
			}
			if r.Get("output_index").Exists() {
				set("output_index", c.msgIndex)
			}
			if r.Get("content_index").Exists() {
				set("content_index", c.contentIndex)
			}
			switch typ {
			case "response.output_text.delta":
				d := r.Get("delta").String()
				if trimLead {
					t := strings.TrimLeftFunc(d, isSpace)
					if t == "" {
						return true // white space only: dropped, still trimming
					}
					trimLead, d = false, t
				}
				text.WriteString(d)
				set("delta", d)
			case "response.output_text.done":
				set("text", full())
			case "response.content_part.done":
				set("part.text", full())
			case "response.output_item.done":
				set("item", messageItem(c.msgID, r.Get("item.status").String(), full()))
			case "response.completed", "response.incomplete", "response.failed":
				set("response.id", c.id)
				if c.model != "" {
					set("response.model", c.model)
				}
				set("response.output", []any{messageItem(c.msgID, "completed", full())})
			}
			out = sse.Append(out, ev.Event, data)
			return true
		})
		return append(in[:0], out...)
	}
}

// messageItem is the client's message item with its whole text.
func messageItem(id, status, text string) map[string]any {
	if status == "" {
		status = "completed"
	}
	return map[string]any{"id": id, "type": "message", "status": status, "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}}}
}

// responsesInputWithPrefill turns a Responses request's input into an item
// list ending with the delivered text as an assistant message.
func responsesInputWithPrefill(body []byte, text string) ([]byte, error) {
	in := gjson.GetBytes(body, "input")
	items := []byte("[")
	if in.Type == gjson.String {
		user, _ := sjson.SetBytes([]byte(`{"role":"user"}`), "content", in.Str)
		items = append(items, user...)
	} else if in.IsArray() {
		items = append(items, bytes.TrimSpace([]byte(in.Raw))[1:]...)
		items = bytes.TrimRight(items, "] \n\r\t")
	}
	if len(items) > 1 {
		items = append(items, ',')
	}
	msg, _ := sjson.SetBytes([]byte(`{"type":"message","role":"assistant","content":[{"type":"output_text"}]}`), "content.0.text", text)
	items = append(append(items, msg...), ']')
	return sjson.SetRawBytes(body, "input", items)
}
