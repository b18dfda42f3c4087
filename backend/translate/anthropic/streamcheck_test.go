package anthropic

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// anthBlockSum is one reconstructed Anthropic content block.
type anthBlockSum struct {
	Type, Text, ID, Name, Args string
}

// anthSum is an Anthropic event stream reconstructed by a client.
type anthSum struct {
	ID, Model string
	Blocks    []anthBlockSum
	Stop      string
	Usage     tokens
	Stopped   bool // message_stop seen
}

func (s anthSum) text(typ string) string {
	var b strings.Builder
	for _, blk := range s.Blocks {
		if blk.Type == typ {
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}

func (s anthSum) tools() []anthBlockSum {
	var out []anthBlockSum
	for _, blk := range s.Blocks {
		if blk.Type == "tool_use" {
			out = append(out, anthBlockSum{Type: blk.Type, ID: blk.ID, Name: blk.Name, Args: blk.Args})
		}
	}
	return out
}

// summarizeAnthropic parses an Anthropic stream as a strict client would,
// failing on any protocol violation: events before message_start, a block
// started twice or never stopped, deltas outside the open block, anything
// after message_stop, an event name that differs from its data type.
func summarizeAnthropic(t testing.TB, evs []ev) (s anthSum) {
	t.Helper()
	var text, args []*strings.Builder // per block, joined at the end (inputs can be large)
	defer func() {
		for i := range s.Blocks {
			s.Blocks[i].Text += text[i].String()
			s.Blocks[i].Args += args[i].String()
		}
	}()
	open := -1
	started := false
	for i, e := range evs {
		if !gjson.Valid(e.Data) {
			t.Fatalf("event %d: invalid JSON %q", i, e.Data)
		}
		d := gjson.Parse(e.Data)
		typ := d.Get("type").String()
		if typ != e.Event {
			t.Fatalf("event %d: name %q but type %q", i, e.Event, typ)
		}
		if s.Stopped {
			t.Fatalf("event %d (%s) after message_stop", i, typ)
		}
		if !started && typ != "message_start" {
			t.Fatalf("event %d: %s before message_start", i, typ)
		}
		switch typ {
		case "message_start":
			if started {
				t.Fatalf("event %d: second message_start", i)
			}
			started = true
			m := d.Get("message")
			s.ID, s.Model = m.Get("id").String(), m.Get("model").String()
			if m.Get("type").String() != "message" || m.Get("role").String() != "assistant" || !m.Get("content").IsArray() {
				t.Fatalf("event %d: bad message_start %s", i, e.Data)
			}
			s.Usage.readAnthropic(m.Get("usage"))
		case "ping":
		case "content_block_start":
			idx := int(d.Get("index").Int())
			if open >= 0 {
				t.Fatalf("event %d: block %d started while %d open", i, idx, open)
			}
			if idx != len(s.Blocks) {
				t.Fatalf("event %d: block index %d, want %d", i, idx, len(s.Blocks))
			}
			cb := d.Get("content_block")
			b := anthBlockSum{Type: cb.Get("type").String(), ID: cb.Get("id").String(), Name: cb.Get("name").String()}
			switch b.Type {
			case "text":
				b.Text = cb.Get("text").String()
			case "thinking":
				b.Text = cb.Get("thinking").String()
			case "tool_use":
				if b.ID == "" || !cb.Get("input").IsObject() {
					t.Fatalf("event %d: tool_use without id or input: %s", i, e.Data)
				}
			default:
				t.Fatalf("event %d: unexpected block type %q", i, b.Type)
			}
			s.Blocks = append(s.Blocks, b)
			text, args = append(text, &strings.Builder{}), append(args, &strings.Builder{})
			open = idx
		case "content_block_delta":
			idx := int(d.Get("index").Int())
			if idx != open {
				t.Fatalf("event %d: delta for block %d, open %d", i, idx, open)
			}
			b := &s.Blocks[idx]
			dl := d.Get("delta")
			switch dt := dl.Get("type").String(); {
			case dt == "text_delta" && b.Type == "text":
				text[idx].WriteString(dl.Get("text").String())
			case dt == "thinking_delta" && b.Type == "thinking":
				text[idx].WriteString(dl.Get("thinking").String())
			case dt == "signature_delta" && b.Type == "thinking":
			case dt == "input_json_delta" && b.Type == "tool_use":
				args[idx].WriteString(dl.Get("partial_json").String())
			default:
				t.Fatalf("event %d: delta %q in a %s block", i, dt, b.Type)
			}
		case "content_block_stop":
			idx := int(d.Get("index").Int())
			if idx != open {
				t.Fatalf("event %d: stop for block %d, open %d", i, idx, open)
			}
			open = -1
		case "message_delta":
			if open >= 0 {
				t.Fatalf("event %d: message_delta with block %d open", i, open)
			}
			s.Stop = d.Get("delta.stop_reason").String()
			s.Usage.readAnthropic(d.Get("usage"))
		case "message_stop":
			if s.Stop == "" {
				t.Fatalf("event %d: message_stop without a stop_reason", i)
			}
			s.Stopped = true
		default:
			t.Fatalf("event %d: unknown event %q", i, typ)
		}
	}
	return s
}

// chatToolSum is one reconstructed OpenAI tool call.
type chatToolSum struct {
	ID, Name, Args string
}

// chatSum is a Chat chunk stream reconstructed by a client.
type chatSum struct {
	ID, Model          string
	Content, Reasoning string
	Tools              []chatToolSum
	Finish             string
	Usage              string // raw usage of the usage chunk
	Done               bool
}

// summarizeChat parses a Chat chunk stream as a strict client would, failing
// on invalid chunks, tool_calls indexes that skip, a second finish, chunks
// after [DONE], or a tool call delta before its id.
func summarizeChat(t testing.TB, evs []ev) (s chatSum) {
	t.Helper()
	var content, reasoning strings.Builder
	var args []*strings.Builder
	defer func() {
		s.Content, s.Reasoning = content.String(), reasoning.String()
		for i := range s.Tools {
			s.Tools[i].Args = args[i].String()
		}
	}()
	for i, e := range evs {
		if s.Done {
			t.Fatalf("event %d after [DONE]", i)
		}
		if e.Event != "" {
			t.Fatalf("event %d: Chat streams have no event names, got %q", i, e.Event)
		}
		if e.Data == "[DONE]" {
			s.Done = true
			continue
		}
		if !gjson.Valid(e.Data) {
			t.Fatalf("event %d: invalid JSON %q", i, e.Data)
		}
		d := gjson.Parse(e.Data)
		if d.Get("object").String() != "chat.completion.chunk" || !d.Get("created").Exists() {
			t.Fatalf("event %d: not a chunk: %s", i, e.Data)
		}
		s.ID, s.Model = d.Get("id").String(), d.Get("model").String()
		if u := d.Get("usage"); u.IsObject() {
			if d.Get("choices.#").Int() != 0 {
				t.Fatalf("event %d: usage chunk with choices", i)
			}
			s.Usage = u.Raw
		}
		d.Get("choices").ForEach(func(_, c gjson.Result) bool {
			if s.Finish != "" {
				t.Fatalf("event %d: chunk after finish_reason: %s", i, e.Data)
			}
			dl := c.Get("delta")
			content.WriteString(dl.Get("content").String())
			reasoning.WriteString(dl.Get("reasoning_content").String())
			dl.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
				idx := int(tc.Get("index").Int())
				switch {
				case idx == len(s.Tools):
					if tc.Get("id").String() == "" || tc.Get("type").String() != "function" {
						t.Fatalf("event %d: first delta of tool %d lacks id/type: %s", i, idx, e.Data)
					}
					s.Tools = append(s.Tools, chatToolSum{ID: tc.Get("id").String(), Name: tc.Get("function.name").String()})
					args = append(args, &strings.Builder{})
				case idx > len(s.Tools) || idx < 0:
					t.Fatalf("event %d: tool index %d skips", i, idx)
				}
				args[idx].WriteString(tc.Get("function.arguments").String())
				return true
			})
			if f := c.Get("finish_reason"); f.Type == gjson.String {
				s.Finish = f.Str
			}
			return true
		})
	}
	return s
}
