// Package sse parses and writes Server-Sent Events incrementally. The parser is
// split-invariant: however the byte stream is cut into reads, it yields the
// same events, so it can sit directly on an upstream response body.
package sse

import (
	"bytes"
	"errors"
)

// Event is one SSE event. Data joins multiple data lines with "\n".
type Event struct {
	Event string // the "event:" field; "" means "message"
	Data  []byte
	ID    string
	// Comment is true for a comment-only block (": keep-alive"), which carries no data.
	Comment bool
}

// IsDone reports whether the event is OpenAI's "[DONE]" terminator.
func (e Event) IsDone() bool { return bytes.Equal(bytes.TrimSpace(e.Data), []byte("[DONE]")) }

// maxLine bounds one line so a hostile upstream cannot grow memory without end.
const maxLine = 8 << 20

// MaxEventData bounds one event's data, all its data lines together: without
// it an upstream could send endless short "data:" lines with no blank line and
// grow one event without end (each line under maxLine).
const MaxEventData = 8 << 20

// Parser accumulates bytes and emits complete events.
type Parser struct {
	buf     []byte
	cur     Event
	hasData bool
	hasAny  bool
	// data is the current event's data: a view of its one data line inside
	// the bytes being parsed (the common case, no copy), or dataBuf once the
	// event has several data lines or outlives the Feed that read its line.
	data    []byte
	view    bool // data is a view, not dataBuf
	dataBuf []byte
	tooBig  bool
}

// ErrLineTooLong is returned when a single line exceeds the bound (its
// message is what a client reads when a stream fails on it).
var ErrLineTooLong = errors.New("the stream has a line longer than the 8 MiB limit")

// ErrEventTooLarge is returned when one event's data exceeds MaxEventData.
var ErrEventTooLarge = errors.New("the stream has an event whose data exceeds the 8 MiB limit")

// Feed parses chunk and calls emit for each complete event. The Event's Data
// is only valid during the callback. Returning false from emit stops parsing.
// Complete lines are read in place; only an unfinished line is copied (kept
// for the next Feed), and an event's single data line is emitted as a view of
// the bytes parsed, so relaying a stream costs no copy of its bytes here.
func (p *Parser) Feed(chunk []byte, emit func(Event) bool) error {
	src := chunk
	if len(p.buf) > 0 {
		p.buf = append(p.buf, chunk...)
		src = p.buf
	}
	start := 0
	for {
		i := bytes.IndexAny(src[start:], "\r\n")
		if i < 0 {
			break
		}
		end := start + i
		// A lone '\r' at the end of the buffer may be the first half of "\r\n":
		// wait for more bytes before deciding.
		if src[end] == '\r' && end+1 == len(src) {
			break
		}
		line := src[start:end]
		next := end + 1
		if src[end] == '\r' && next < len(src) && src[next] == '\n' {
			next++
		}
		start = next
		if !p.line(line, emit) {
			p.own()
			p.buf = append(p.buf[:0], src[start:]...)
			if p.tooBig {
				return ErrEventTooLarge
			}
			return nil
		}
	}
	// An event still open keeps its data, which src will not hold after this
	// call; then the unfinished tail is moved to the front of buf, or copied
	// from chunk.
	p.own()
	p.buf = append(p.buf[:0], src[start:]...)
	if len(p.buf) > maxLine {
		return ErrLineTooLong
	}
	return nil
}

// Flush emits a final event not terminated by a blank line (at end of stream).
func (p *Parser) Flush(emit func(Event) bool) {
	if len(p.buf) > 0 {
		stopped := false
		_ = p.Feed([]byte{'\n'}, func(e Event) bool {
			if !emit(e) {
				stopped = true
				return false
			}
			return true
		})
		if stopped {
			return
		}
	}
	p.dispatch(emit)
}

func (p *Parser) line(line []byte, emit func(Event) bool) bool {
	if len(line) == 0 {
		return p.dispatch(emit)
	}
	if line[0] == ':' {
		p.hasAny = true
		return true
	}
	field, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	p.hasAny = true
	switch string(field) {
	case "data":
		if len(p.data)+len(value)+1 > MaxEventData {
			p.tooBig = true
			return false
		}
		if !p.hasData {
			// A view, its capacity cut so an append by the receiver cannot
			// overwrite the lines that follow.
			p.data, p.view = value[:len(value):len(value)], true
			p.hasData = true
			return true
		}
		p.own()
		p.dataBuf = append(p.dataBuf, '\n')
		p.dataBuf = append(p.dataBuf, value...)
		p.data = p.dataBuf
	case "event":
		p.cur.Event = string(value)
	case "id":
		p.cur.ID = string(value)
	}
	return true
}

func (p *Parser) dispatch(emit func(Event) bool) bool {
	if !p.hasAny {
		return true
	}
	ev := p.cur
	ev.Data = p.data
	ev.Comment = !p.hasData && ev.Event == ""
	p.cur, p.hasData, p.hasAny = Event{}, false, false
	ok := emit(ev)
	p.data, p.view, p.dataBuf = nil, false, p.dataBuf[:0]
	return ok
}

// own copies the current event's data into dataBuf unless it is there
// already: before a second data line is added, and before the bytes a view
// points into are reused.
func (p *Parser) own() {
	if p.view {
		p.dataBuf = append(p.dataBuf[:0], p.data...)
		p.data, p.view = p.dataBuf, false
	}
}

// Append writes an event in wire form to dst.
func Append(dst []byte, event string, data []byte) []byte {
	if event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		dst = append(dst, "data: "...)
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		data = data[i+1:]
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}
