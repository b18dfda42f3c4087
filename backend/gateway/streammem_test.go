package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/translate"
)

// eventReader hands out an upstream stream as a slow upstream does: a Read
// returns at most the rest of one SSE event, and a Read that starts the next
// event (after the first) is where the relay waits for the upstream: waiting
// is called then, and waits counts those Reads.
type eventReader struct {
	events  [][]byte
	waiting func()
	reads   int
	waits   int
	between bool  // the last Read ended an event
	sizes   []int // the buffer size of each Read
}

func (r *eventReader) Read(p []byte) (int, error) {
	if r.between {
		r.waits++
		if r.waiting != nil {
			r.waiting()
		}
	}
	r.reads++
	r.sizes = append(r.sizes, len(p))
	if len(r.events) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.events[0])
	r.events[0] = r.events[0][n:]
	if r.between = len(r.events[0]) == 0; r.between {
		r.events = r.events[1:]
	}
	return n, nil
}

// recordingWriter is a client that keeps what it was sent.
type recordingWriter struct {
	h   http.Header
	got bytes.Buffer
}

func (w *recordingWriter) Header() http.Header         { return w.h }
func (w *recordingWriter) Write(p []byte) (int, error) { return w.got.Write(p) }
func (w *recordingWriter) WriteHeader(int)             {}
func (w *recordingWriter) Flush()                      {}

// committedRelay is a streamed attempt of a client of format client to an
// OpenAI-format upstream, its client stream already committed: the relay
// state pump runs on, and the client that records what it is sent.
func committedRelay(client translate.Format) (*streamState, *attemptCtx, *recordingWriter) {
	conn := &routing.Conn{ID: "c1", Provider: providers.Provider{ID: "openai-compatible", Format: providers.FormatOpenAI},
		BreakerKey: "openai-compatible"}
	w := &recordingWriter{h: http.Header{}}
	req := &request{format: client, model: "openai-compatible/gpt-4o-mini", stream: true, body: chatBody, tools: -1}
	a := &attemptCtx{g: benchGateway(), w: w, req: req, cand: routing.Candidate{Conn: conn, Model: "gpt-4o-mini"},
		codec: newCodec(client, conn.Provider.Format)}
	s := a.newStreamState()
	s.rc, s.committed = http.NewResponseController(w), true
	return s, a, w
}

// An open stream waiting for its upstream holds no pooled client buffer and
// no read buffer (with many slow streams open, they would be paid per
// stream), and what reaches the client is still exactly what the upstream
// sent, for a same-format and a translated relay alike.
func TestStreamHoldsNoBufferWhileWaiting(t *testing.T) {
	for _, client := range []translate.Format{translate.Chat, translate.Messages} {
		t.Run(string(client), func(t *testing.T) {
			up := chatStream(5)
			var events [][]byte
			for ev := range bytes.SplitAfterSeq(up, []byte("\n\n")) {
				events = append(events, bytes.Clone(ev))
			}
			s, a, w := committedRelay(client)
			held, heldRead := 0, 0
			body := &eventReader{events: events, waiting: func() {
				if s.pendingBuf != nil || s.pending != nil {
					held++
				}
				if s.readBuf != nil {
					heldRead++
				}
			}}
			err, gone := s.pump(&http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(body)})
			if err != io.EOF || gone || s.streamErr != nil {
				t.Fatalf("relay: err %v gone %v stream %v", err, gone, s.streamErr)
			}
			if s.tr != nil {
				s.pending = s.tr.End(s.pending)
				_ = a.send(s.rc, s.pending)
			}
			s.release()
			if body.waits != len(events) {
				t.Fatalf("%d waits for the upstream for %d events", body.waits, len(events))
			}
			if held != 0 {
				t.Fatalf("a client buffer was held during %d of %d waits for the upstream", held, body.waits)
			}
			if heldRead != 0 {
				t.Fatalf("a read buffer was held during %d of %d waits for the upstream", heldRead, body.waits)
			}
			if client == translate.Chat && !bytes.Equal(w.got.Bytes(), up) {
				t.Fatalf("client got\n%s\nwant the upstream's bytes\n%s", w.got.Bytes(), up)
			}
			if client == translate.Messages && !bytes.Contains(w.got.Bytes(), []byte("event: message_stop")) {
				t.Fatalf("translated stream incomplete:\n%s", w.got.Bytes())
			}
		})
	}
}

// A slow stream waits for each event on a one-byte read and takes the small
// buffer for the rest of it, for its whole life (1,000 open streams hold no
// read buffer while they wait, not 32 KiB each); a read that fills the small
// buffer moves the stream to the large one, and the bytes still arrive whole.
func TestStreamReadBufferGrowsOnlyForAFastUpstream(t *testing.T) {
	big := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` +
		string(bytes.Repeat([]byte("x"), 2*streamSmallBufSize)) + `"},"finish_reason":null}]}` + "\n\n"
	cases := []struct {
		name   string
		first  string // an event before the usual five
		sizes  []int  // the buffer size of the first reads
		resize int    // the read from which the large buffer is used (0: never)
	}{
		{"slow events", "", []int{1, streamSmallBufSize - 1, 1, streamSmallBufSize - 1, 1, streamSmallBufSize - 1}, 0},
		{"one event larger than the small buffer", big, []int{1, streamSmallBufSize - 1, streamBufSize}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := append([]byte(c.first), chatStream(5)...)
			var events [][]byte
			for ev := range bytes.SplitAfterSeq(up, []byte("\n\n")) {
				events = append(events, bytes.Clone(ev))
			}
			s, _, w := committedRelay(translate.Chat)
			body := &eventReader{events: events}
			if err, gone := s.pump(&http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(body)}); err != io.EOF || gone {
				t.Fatalf("relay: err %v gone %v", err, gone)
			}
			s.release()
			for i, want := range c.sizes {
				if body.sizes[i] != want {
					t.Fatalf("read %d used a %d-byte buffer, want %d (all: %v)", i, body.sizes[i], want, body.sizes)
				}
			}
			for i, n := range body.sizes {
				if large := c.resize > 0 && i >= c.resize; large != (n == streamBufSize) {
					t.Fatalf("read %d used a %d-byte buffer (all: %v)", i, n, body.sizes)
				}
			}
			if !bytes.Equal(w.got.Bytes(), up) {
				t.Fatalf("client got %d bytes, want the upstream's %d", w.got.Len(), len(up))
			}
		})
	}
}

// An event whose last bytes arrive on their own is relayed as soon as they
// arrive, before the relay waits for the upstream again: the one-byte wait
// of a slow stream must not hold a line end back until more comes.
func TestStreamRelaysAnEventCompletedByItsLastByte(t *testing.T) {
	up := chatStream(2)
	first := bytes.Index(up, []byte("\n\n")) + 2
	for _, split := range []int{1, 2} { // the blank line alone; the data line's end and the blank line
		t.Run(fmt.Sprintf("last %d bytes alone", split), func(t *testing.T) {
			segs := [][]byte{bytes.Clone(up[:first-split]), bytes.Clone(up[first-split : first]), bytes.Clone(up[first:])}
			s, _, w := committedRelay(translate.Chat)
			var body *eventReader // each segment is one Read's worth, as the network delivered it
			body = &eventReader{events: segs, waiting: func() {
				if body.waits == 2 && !bytes.Equal(w.got.Bytes(), up[:first]) { // waiting for the second event
					t.Errorf("while waiting for the next event the client has %q, want the first event", w.got.Bytes())
				}
			}}
			if err, gone := s.pump(&http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(body)}); err != io.EOF || gone {
				t.Fatalf("relay: err %v gone %v", err, gone)
			}
			s.release()
			if !bytes.Equal(w.got.Bytes(), up) {
				t.Fatalf("client got %d bytes, want the upstream's %d", w.got.Len(), len(up))
			}
		})
	}
}
