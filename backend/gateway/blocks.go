package gateway

import (
	"bytes"
	"strings"
	"unsafe"

	"omniroute/backend/jsonwalk"
)

// clientBlocks is what an Anthropic Messages client was sent of an answer's
// content blocks, which a continuation needs to go on in the right one: the
// blocks started (their indices are 0, 1, … in order, one open at a time),
// whether the last is a text block and whether it is still open.
type clientBlocks struct {
	started  int
	lastText bool
	open     bool
}

// note records one Messages event sent to the client: its name (the SSE
// event, else the data's "type") and data.
func (b *clientBlocks) note(name string, data []byte) {
	switch name {
	case "content_block_start":
		b.started++
		json := unsafe.String(unsafe.SliceData(data), len(data))
		b.lastText = jsonwalk.Str(jsonwalk.Path(json, "content_block", "type")) == "text"
		b.open = true
	case "content_block_stop":
		b.open = false
	}
}

// noteEvent records an upstream event relayed as it is.
func (b *clientBlocks) noteEvent(event string, data []byte) {
	if name := messagesEventName(event, data); strings.HasPrefix(name, "content_block_st") {
		b.note(name, data)
	}
}

// messagesEventName names a Messages event: its SSE event, else its data's
// "type" (a view of data).
func messagesEventName(event string, data []byte) string {
	if event != "" {
		return event
	}
	return jsonwalk.Str(jsonwalk.Member(unsafe.String(unsafe.SliceData(data), len(data)), "type"))
}

// noteWire records the block events in out, SSE bytes a translator wrote
// (each event with its event line).
func (b *clientBlocks) noteWire(out []byte) {
	const mark = "event: content_block_st"
	for {
		i := bytes.Index(out, []byte(mark))
		if i < 0 {
			return
		}
		out = out[i+len("event: "):]
		line, rest, found := bytes.Cut(out, []byte("\n"))
		if !found {
			return
		}
		name := "content_block_stop"
		if string(line) == "content_block_start" {
			name = "content_block_start"
		}
		out = rest
		data, _, _ := bytes.Cut(out, []byte("\n"))
		b.note(name, bytes.TrimPrefix(data, []byte("data: ")))
	}
}

// continuation is where a continuation's text goes: in the open text block
// (its own text block start dropped, its blocks numbered from that block's
// index) or, after a closed one, in a new block after it (its start kept,
// numbered from there). ok is false when the client's last block is not
// text (reasoning came after the text): no continuation can go on there.
func (b *clientBlocks) continuation() (offset int, keepStart, ok bool) {
	switch {
	case b == nil || !b.lastText:
		return 0, false, false
	case b.open:
		return b.started - 1, false, true
	}
	return b.started, true, true
}
