package sse

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

type got struct {
	event, data, id string
	comment         bool
}

func parseAll(chunks [][]byte) []got {
	var p Parser
	var out []got
	emit := func(e Event) bool {
		out = append(out, got{e.Event, string(e.Data), e.ID, e.Comment})
		return true
	}
	for _, c := range chunks {
		if err := p.Feed(c, emit); err != nil {
			panic(err)
		}
	}
	p.Flush(emit)
	return out
}

func TestParse(t *testing.T) {
	in := "event: message_start\ndata: {\"a\":1}\n\n: ping\n\ndata: line1\ndata: line2\nid: 7\n\ndata: [DONE]\r\n\r\ndata:no-space\n\ndata: tail-without-blank"
	want := []got{
		{"message_start", `{"a":1}`, "", false},
		{"", "", "", true},
		{"", "line1\nline2", "7", false},
		{"", "[DONE]", "", false},
		{"", "no-space", "", false},
		{"", "tail-without-blank", "", false},
	}
	out := parseAll([][]byte{[]byte(in)})
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", out, want)
	}
}

// TestSplitInvariance: every way of cutting the stream in two yields the same events.
func TestSplitInvariance(t *testing.T) {
	in := []byte("event: a\ndata: x\r\n\r\n: c\n\ndata: y\ndata: z\n\nevent: b\r\ndata: {}\r\n\r\n")
	whole := fmt.Sprint(parseAll([][]byte{in}))
	for i := 0; i <= len(in); i++ {
		if got := fmt.Sprint(parseAll([][]byte{in[:i], in[i:]})); got != whole {
			t.Fatalf("cut at %d: %s\nwant %s", i, got, whole)
		}
	}
	bytewise := make([][]byte, len(in))
	for i := range in {
		bytewise[i] = in[i : i+1]
	}
	if got := fmt.Sprint(parseAll(bytewise)); got != whole {
		t.Fatalf("byte by byte: %s", got)
	}
}

func FuzzSplitInvariance(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: b\r\n\r\n"), uint16(3), uint16(9))
	f.Add([]byte("event: x\rdata: y\r\r"), uint16(1), uint16(2))
	f.Fuzz(func(t *testing.T, in []byte, a, b uint16) {
		if len(in) > 4096 {
			return
		}
		i, j := int(a)%(len(in)+1), int(b)%(len(in)+1)
		if i > j {
			i, j = j, i
		}
		whole := fmt.Sprint(parseAll([][]byte{in}))
		if got := fmt.Sprint(parseAll([][]byte{in[:i], in[i:j], in[j:]})); got != whole {
			t.Fatalf("split %d/%d changes events:\n%s\n%s", i, j, got, whole)
		}
	})
}

func TestAppendRoundTrip(t *testing.T) {
	b := Append(nil, "content_block_delta", []byte("{\"x\":1}\nsecond"))
	out := parseAll([][]byte{b})
	if len(out) != 1 || out[0].event != "content_block_delta" || out[0].data != "{\"x\":1}\nsecond" {
		t.Fatalf("%q → %v", b, out)
	}
	if !bytes.HasSuffix(b, []byte("\n\n")) {
		t.Fatal("no blank line")
	}
}

func TestStopEarly(t *testing.T) {
	var p Parser
	n := 0
	_ = p.Feed([]byte("data: 1\n\ndata: 2\n\ndata: 3\n\n"), func(Event) bool { n++; return n < 2 })
	if n != 2 {
		t.Fatalf("emitted %d", n)
	}
}

// TestEventDataBounded: endless short data lines with no blank line (each far
// under the line limit) stop at MaxEventData instead of growing one event.
func TestEventDataBounded(t *testing.T) {
	var p Parser
	line := bytes.Repeat([]byte("data: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"), 1024) // ~37 KiB per read
	emitted := 0
	var err error
	fed := 0
	for fed <= 2*MaxEventData && err == nil {
		err = p.Feed(line, func(Event) bool { emitted++; return true })
		fed += len(line)
	}
	if err != ErrEventTooLarge {
		t.Fatalf("after %d bytes without a blank line: err = %v, want ErrEventTooLarge", fed, err)
	}
	// Each 37-byte line adds 31 bytes of data (30 + the joining newline).
	if fed > MaxEventData/31*37+2*len(line) {
		t.Fatalf("the bound tripped only after %d bytes (limit %d)", fed, MaxEventData)
	}
	if cap(p.dataBuf) > 2*MaxEventData {
		t.Fatalf("event buffer grew to %d bytes", cap(p.dataBuf))
	}
	if emitted != 0 {
		t.Fatalf("%d events emitted, want none", emitted)
	}

	// Exactly at the limit is still one event.
	var q Parser
	data := bytes.Repeat([]byte("x"), MaxEventData-1)
	var n int
	if err := q.Feed(append(append([]byte("data: "), data...), "\n\n"...), func(e Event) bool { n = len(e.Data); return true }); err != nil || n != len(data) {
		t.Fatalf("an event of %d bytes: err %v, got %d bytes", len(data), err, n)
	}
}

// TestDataViewOutlivesNothing: an event's single data line is emitted as a
// view of the bytes parsed, so an event whose blank line comes in a later
// Feed must keep its data before the caller reuses its buffer; a receiver
// appending to Data must not overwrite the lines that follow; several data
// lines are joined.
func TestDataViewOutlivesNothing(t *testing.T) {
	var p Parser
	var out []string
	emit := func(e Event) bool {
		out = append(out, string(e.Data))
		_ = append(e.Data, "XXXXXXXX"...) // must not reach the next line
		return true
	}
	buf := []byte("data: hello\n")
	if err := p.Feed(buf, emit); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXXXXXX") // the caller's read buffer, reused
	if err := p.Feed([]byte("\ndata: a\ndata: b\n\ndata: c\n\ndata: d\n\n"), emit); err != nil {
		t.Fatal(err)
	}
	want := []string{"hello", "a\nb", "c", "d"}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("events %q, want %q", out, want)
	}
}

// TestLineTooLongSaysSo: a line past the limit (one byte over maxLine
// without its end) fails with ErrLineTooLong, whose message says what
// happened ("short buffer" used to be all a client read); maxLine itself does
// not fail.
func TestLineTooLongSaysSo(t *testing.T) {
	for _, tc := range []struct {
		n    int
		fail bool
	}{{maxLine, false}, {maxLine + 1, true}, {maxLine + 4096, true}} {
		var p Parser
		err := p.Feed(bytes.Repeat([]byte("a"), tc.n), func(Event) bool { return true })
		if tc.fail != (err != nil) {
			t.Fatalf("%d bytes without a line end: err = %v, want failure %v", tc.n, err, tc.fail)
		}
		if err != nil && (err != ErrLineTooLong || strings.Contains(err.Error(), "short buffer") || !strings.Contains(err.Error(), "8 MiB")) {
			t.Fatalf("%d bytes: err = %q, want ErrLineTooLong with a plain message", tc.n, err)
		}
	}
}
