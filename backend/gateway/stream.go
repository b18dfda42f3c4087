package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/resilience/watchdog"
	"omniroute/backend/translate"
	"omniroute/backend/translate/frames"
	tgemini "omniroute/backend/translate/gemini"
	"omniroute/backend/translate/sse"
)

// A stream is read into a small buffer first (streamSmallBufSize), and a
// model's events come a few hundred bytes at a time. While it is small the
// relay waits for the upstream on a one-byte read into the stream state and
// takes the buffer from its pool only for what arrived, so 1,000 open slow
// streams hold no read buffer (readSmall). A read that fills it shows a
// faster upstream: the stream moves to the large buffer (streamBufSize),
// held for the rest of its life. Both are pooled.
const (
	streamSmallBufSize = 2 << 10
	streamBufSize      = 32 << 10
)

// pendingInitSize is the client buffer a stream takes from a pool when an
// upstream read brings frames: sized for the frames of one read, so a typical
// stream never grows it; pendingPoolMax is the largest buffer given back to
// the pool. Once its bytes are written the buffer goes back to the pool, so
// an open stream waiting for the upstream holds none.
const (
	pendingInitSize = 4 << 10
	pendingPoolMax  = 64 << 10
)

// maxPrecommit bounds the client bytes held back before a stream is committed:
// an upstream that sends only heartbeats, role chunks or bookkeeping cannot
// grow memory while the gateway waits for the first real output.
const maxPrecommit = 4 << 20

// errPrecommit ends an attempt whose upstream sent too much without progress.
var errPrecommit = errors.New("the upstream sent more than 4 MiB of stream without any model output")

// Causes that end an attempt from the watchdog.
var (
	errStalled     = fmt.Errorf("%w: no model output within the stall budget", verdict.ErrStall)
	errSlow        = fmt.Errorf("%w: model output below the minimum throughput", verdict.ErrStall)
	errFirstToken  = errors.New("no first token before the time-to-first-token limit")
	errDeadline    = errors.New("the attempt reached its hard deadline")
	errTruncated   = errors.New("the upstream stream ended before the answer was complete")
	errEmptyStream = errors.New("the upstream stream ended without an answer")
	// errInvalidEvent ends an attempt whose upstream sent an event whose
	// data is not a valid JSON object.
	errInvalidEvent = errors.New("the upstream sent a stream event that is not valid JSON")
)

// upstreamStreamError is an error the upstream reported inside its stream.
type upstreamStreamError struct {
	msg  string
	data []byte // the error event's JSON, for the provider error rules
}

func (e *upstreamStreamError) Error() string { return "upstream stream error: " + e.msg }

// streamState is what one relay knows while events flow.
type streamState struct {
	parser    sse.Parser // the upstream's events (here, not on the relay's stack)
	readBuf   *[]byte    // the upstream read buffer (pump), from a pool
	readLarge bool       // readBuf is a large one
	probe     [1]byte    // a slow stream's wait for its next byte (readSmall)
	a         *attemptCtx
	tr        translate.StreamTranslator
	watchMu   sync.Mutex
	watch     *watchdog.Watch
	// watchVal backs watch: it lives in the stream state, not in an
	// allocation of its own.
	// The watchdog's timer is the attempt's one timer (attemptTimer).
	watchVal watchdog.Watch
	// rcVal backs rc once this relay commits the client stream.
	rcVal   http.ResponseController
	pending []byte // client bytes not yet written
	// pendingBuf is the pooled buffer pending started in; release returns it.
	pendingBuf *[]byte
	ready      bool                     // a progress frame arrived: the stream may be committed
	committed  bool                     // the response headers were written
	rc         *http.ResponseController // the client's, once committed
	sawEnd     bool
	// refused: the upstream ended the answer as a refusal or a safety
	// block (refusalEnd): an answer, never EMPTY_RESPONSE.
	refused   bool
	streamErr error
	usage     streamUsage
	// startUsage is an Anthropic message_start's message.usage: the input
	// counts, which a message_delta's usage may leave out.
	startUsage streamUsage
	// text is the assistant text relayed so far (the prefill a continuation
	// sends), in textBuf until it outgrows it; sawToolCall is set once a tool
	// call was relayed, which no prefill can carry (see continuable). (Not a
	// pooled buffer: a slow stream holds no more than it has relayed.)
	text        []byte
	textBuf     [textInitSize]byte
	sawToolCall bool
	keepText    bool // only when a continuation could use it
	// sent is the bytes of content and tool-call text the upstream's
	// events carried (each frame's Bytes): what the key is charged for
	// when no usage arrives.
	sent int
	// blocks is what a Messages client was sent of its content blocks (when
	// keepText), for a continuation to go on in the right one.
	blocks clientBlocks
	// resp is what a Responses client was sent of its response (when its
	// stream may be continued): the ids a continuation is spliced into.
	resp clientResponse

	// filter, when set, rewrites client bytes before they are written (a
	// continuation drops the opening frames the client already has).
	filter func([]byte) []byte
}

// relayStream relays an SSE answer event by event through the stall and
// throughput watchdog, translating to the client's format. Until the first
// progress frame nothing reaches the client, so any failure fails over; once
// bytes are committed the stream ends either complete or with an error event
// the client can see, never with a clean end after a truncated answer.
func (a *attemptCtx) relayStream(resp *http.Response) (*failure, bool) {
	s := a.newStreamState()
	defer s.release()
	s.armWatchdog()
	defer s.stopWatchdog()
	readErr, gone := s.pump(resp)
	if gone {
		return s.left()
	}
	return s.ended(readErr)
}

// left ends a relay whose client stopped reading and charges what was
// relayed. ended ends it at the stream's end or failure, then charges. Both
// out of line: relayStream's frame sits under every open stream, and the
// first flush of the client's headers (net/http sorts them) is this
// goroutine's deepest point (TestStreamStackFitsEightKiB).
//
//go:noinline
func (s *streamState) left() (*failure, bool) {
	f := s.a.clientLeft()
	if s.committed {
		s.relayed()
	}
	return f, true
}

//go:noinline
func (s *streamState) ended(readErr error) (*failure, bool) {
	f, done := s.end(readErr)
	if s.committed {
		s.relayed()
	}
	return f, done
}

// relayed adds the text this relay sent the client to the request's, and
// keeps what usage had arrived when the stream stopped before its end (the
// client left, the upstream broke): the key is charged for what it got.
//
//go:noinline
func (s *streamState) relayed() {
	req := s.a.req
	req.relayed += s.sent
	if !req.round.bill.ok {
		s.recordUsage()
		req.round.bill.cut = req.round.bill.ok
	}
}

// clientLeft ends an attempt whose client stopped reading.
//
//go:noinline
func (a *attemptCtx) clientLeft() *failure {
	a.finish(verdict.Verdict{Kind: verdict.KindClientCanceled, Code: verdict.CodeClientCanceled})
	return &failure{clientGone: true}
}

// newStreamState starts the attempt's relay state (a part of the attempt,
// not an allocation of its own).
//
//go:noinline
func (a *attemptCtx) newStreamState() *streamState {
	s := &a.stream
	tr := a.codec.stream(a.cand.Model, a.req.body)
	if a.req.hideUsage {
		tr = hidingUsage(tr) // a translation's usage chunk, as a passthrough's
	}
	*s = streamState{a: a, tr: tr, keepText: a.g.continuationOn(a.req)}
	cfg := a.g.watchConfig()
	cfg.FirstTokenQuiet = a.firstTokenQuiet()
	s.watchVal.Init(cfg, a.g.wall.Now())
	s.watch = &s.watchVal
	s.hold()
	return s
}

// hold takes a client buffer from the pool unless the stream has one.
func (s *streamState) hold() {
	if s.pendingBuf == nil {
		s.pendingBuf = s.a.g.pendings.Get().(*[]byte)
		s.pending = (*s.pendingBuf)[:0]
	}
}

// release gives the client buffer back to the pool when nothing will read it
// any more: the relay is over, or everything in it was written (the last write
// has returned) and the stream waits for the upstream. A buffer that grew
// past pendingPoolMax is left to the collector.
func (s *streamState) release() {
	if s.pendingBuf == nil {
		return
	}
	if b := s.pending; cap(b) >= cap(*s.pendingBuf) && cap(b) <= pendingPoolMax {
		*s.pendingBuf = b[:0] // it grew: keep the larger buffer
	}
	s.a.g.pendings.Put(s.pendingBuf)
	s.pendingBuf, s.pending = nil, nil
}

// pump reads the upstream stream event by event, committing the client
// stream at the first progress frame (unless it is already committed, as for
// a continuation) and writing translated bytes as they come. gone reports a
// client that stopped reading.
func (s *streamState) pump(resp *http.Response) (readErr error, gone bool) {
	a := s.a
	var buf []byte
	parser := &s.parser
	for {
		var got []byte
		var err error
		if s.readLarge {
			var n int
			n, err = resp.Body.Read(buf)
			got = buf[:n]
		} else {
			got, err = s.readSmall(resp.Body)
		}
		s.hold()
		if len(got) > 0 {
			if perr := parser.Feed(got, s.handle); perr != nil && s.streamErr == nil {
				s.streamErr = perr
			}
		}
		if err == io.EOF && s.streamErr == nil {
			// Not after a failed event: the parser kept what followed it,
			// which must never reach the client (it arrived with the EOF).
			parser.Flush(s.handle)
		}
		if s.ready && s.streamErr == nil {
			a.firstByteDone()
			if !s.committed {
				s.commit()
			}
		}
		if s.committed && len(s.pending) > 0 {
			if s.filter != nil {
				s.pending = s.filter(s.pending)
			}
			if werr := a.send(s.rc, s.pending); werr != nil {
				s.putReadBuf()
				return werr, true
			}
			s.pending = s.pending[:0]
		}
		if err != nil {
			s.putReadBuf()
			return err, false
		}
		if s.streamErr != nil {
			s.putReadBuf()
			return nil, false
		}
		if len(s.pending) == 0 {
			s.release() // nothing held while the upstream is silent
		}
		switch {
		case s.readLarge:
		case s.readBuf != nil && len(got) == len(*s.readBuf): // a fast upstream: read more at a time from now on
			buf = s.growReadBuf()
		default:
			s.putReadBuf() // the parser keeps no view of it
		}
	}
}

// readSmall is a read of a slow stream: it waits for the upstream's next byte
// in the stream state, then takes the small buffer from its pool and reads
// into it the rest of what has arrived. A stream waiting for its upstream
// thus holds no read buffer. The second read returns what the transport
// has, but waits when it has nothing: so a byte that ends a line (which may
// end an event) is returned alone, at once, and never waits for more.
func (s *streamState) readSmall(body io.Reader) ([]byte, error) {
	n, err := body.Read(s.probe[:])
	if n == 0 {
		return nil, err
	}
	if err != nil || s.probe[0] == '\n' || s.probe[0] == '\r' {
		return s.probe[:1], err
	}
	s.readBuf = s.a.g.smallBufs.Get().(*[]byte)
	buf := *s.readBuf
	buf[0] = s.probe[0]
	m, err := body.Read(buf[1:])
	return buf[:1+m], err
}

// growReadBuf swaps the small read buffer for a large one.
func (s *streamState) growReadBuf() []byte {
	s.a.g.smallBufs.Put(s.readBuf)
	s.readBuf, s.readLarge = s.a.g.bufs.Get().(*[]byte), true
	return *s.readBuf
}

// putReadBuf gives the read buffer, if the stream holds one, back to its
// pool (the relay needs none after pump returns; a panic leaves it to the
// collector).
func (s *streamState) putReadBuf() {
	switch {
	case s.readBuf == nil:
	case s.readLarge:
		s.a.g.bufs.Put(s.readBuf)
	default:
		s.a.g.smallBufs.Put(s.readBuf)
	}
	s.readBuf = nil
}

// upstreamErrorEvent is the stream error an upstream's error event reports.
// The relay's helpers that scan an event are out of line: they run on top of
// every frame of the request, and a streaming request's stack stays small.
//
//go:noinline
func upstreamErrorEvent(data []byte) error {
	var msg string
	if jsonv.Valid(data) { // an "event: error" is not validated by Classify
		if msg = gjson.GetBytes(data, "error.message").String(); msg == "" {
			msg = gjson.GetBytes(data, "message").String()
		}
	}
	if msg == "" {
		msg = "the upstream reported an error"
	}
	return &upstreamStreamError{msg: msg, data: bytes.Clone(data)}
}

// noteUsage reads the event's usage object, if it has one, when it arrives:
// through a view of the event's bytes (which the parser reuses), keeping
// only its counts, so neither the usage chunk nor the "usage":null every
// chunk of an OpenAI stream asked for usage carries allocates.
//
//go:noinline
func (s *streamState) noteUsage(data []byte) {
	if u := gjson.Get(view(data), "usage"); u.IsObject() {
		s.usage = readStreamUsage(u)
	} else if u := gjson.Get(view(data), "message.usage"); u.IsObject() {
		s.startUsage = readStreamUsage(u) // Anthropic's message_start
	}
}

// streamUsage is a stream event's usage object as read on arrival: what the
// log and the bill take of it (readUsageBill's counts, billUsage's extras).
type streamUsage struct {
	c         usageCounts
	write     int // cache_creation_input_tokens
	reasoning int
	hasWrite  bool // cache_creation_input_tokens was there
	cacheRead bool // cache_read_input_tokens was there
	ok        bool // a usage object was read
}

func readStreamUsage(u gjson.Result) streamUsage {
	c, x := readUsageBill(u)
	return streamUsage{c: c, write: tokensOf(x.write), reasoning: reasoningOf(x), hasWrite: x.write.Exists(),
		cacheRead: x.cacheRead, ok: true}
}

// handle takes one upstream event: watchdog, end/error detection, translation.
func (s *streamState) handle(ev sse.Event) bool {
	upFmt := s.a.codec.upstream
	// The continuation's text is read in the same pass as the frame.
	var f watchdog.Frame
	var text string
	if s.keepText {
		f, text = frames.ClassifyText(upFmt, ev) // text views ev.Data: copied below
	} else {
		f = frames.Classify(upFmt, ev)
	}
	s.watchMu.Lock()
	s.watch.Observe(f, s.a.g.wall.Now())
	s.watchMu.Unlock()
	s.sent += f.Bytes
	if f.Kind == watchdog.End || f.Kind == watchdog.Metadata || f.Kind == watchdog.Heartbeat || f.Kind == watchdog.Content {
		s.refused = s.refused || refusalEnd(ev.Data)
	}
	switch f.Kind {
	case watchdog.Content:
		s.ready = true
		if text != "" {
			if s.text == nil {
				s.text = s.textBuf[:0] // a short answer's text allocates nothing
			}
			s.text = append(s.text, text...) // copies out of the event's bytes
		}
	case watchdog.ToolCall:
		s.ready, s.sawToolCall = true, true
	case watchdog.Reasoning:
		s.ready = true
	case watchdog.End:
		s.ready, s.sawEnd = true, true
	case watchdog.Error:
		s.streamErr = upstreamErrorEvent(ev.Data)
		return false
	case watchdog.Unknown:
		if !ev.Comment && !ev.IsDone() {
			// Data that fails validation (not a JSON object: malformed,
			// invalid UTF-8, a raw NUL) fails the attempt: never forwarded,
			// and never skipped into an empty success.
			s.streamErr = errInvalidEvent
			return false
		}
	}
	if bytes.Contains(ev.Data, []byte(`"usage"`)) {
		s.noteUsage(ev.Data)
	}
	if s.tr == nil {
		if ev.Comment {
			s.pending = append(s.pending, ":\n\n"...)
		} else {
			if s.a.req.hideUsage {
				s.appendHidingUsage(ev.Event, ev.Data)
			} else {
				s.pending = sse.Append(s.pending, ev.Event, ev.Data)
			}
			if s.keepText && s.a.req.format == translate.Messages {
				s.blocks.noteEvent(ev.Event, ev.Data)
			} else if s.keepText && s.a.req.format == translate.Responses {
				s.resp.noteEvent(ev.Data)
			}
		}
		return s.withinPrecommit()
	}
	before := len(s.pending)
	var err error
	s.pending, err = s.tr.Event(s.pending, ev)
	if err != nil {
		s.streamErr = err
		return false
	}
	if s.keepText && s.a.req.format == translate.Messages {
		s.blocks.noteWire(s.pending[before:])
	} else if s.keepText && s.a.req.format == translate.Responses {
		s.resp.noteWire(s.pending[before:])
	}
	return s.withinPrecommit()
}

// withinPrecommit fails the attempt when too much is held back uncommitted.
func (s *streamState) withinPrecommit() bool {
	if !s.committed && len(s.pending) > maxPrecommit {
		s.streamErr = errPrecommit
		return false
	}
	return true
}

// textInitSize is the continuation text's first buffer, part of the stream
// state: small, so a slow stream holds little more than the text it relayed.
const textInitSize = 128

// armWatchdog gives the attempt's timer the watchdog's duty: it is kept at
// the watchdog's next decision point (or the first-byte deadline, when that
// comes first); when the watchdog says stop, the attempt is cancelled with
// the reason as its cause. stopWatchdog ends it.
func (s *streamState) armWatchdog() {
	s.a.watchOn()
	s.rearmWatchdog(s.a.g.wall.Now())
}

func (s *streamState) rearmWatchdog(now time.Time) {
	s.watchMu.Lock()
	next := s.watch.NextCheck(now)
	s.watchMu.Unlock()
	s.a.rearm(now, next)
}

func (s *streamState) fireWatchdog() {
	now := s.a.g.wall.Now()
	s.watchMu.Lock()
	v := s.watch.Check(now)
	s.watchMu.Unlock()
	switch v {
	case watchdog.OK:
		s.rearmWatchdog(now)
	case watchdog.Stalled:
		s.a.cancel(errStalled)
	case watchdog.SlowThroughput:
		s.a.cancel(errSlow)
	case watchdog.FirstTokenTimeout:
		s.a.cancel(errFirstToken)
	default:
		s.a.cancel(errDeadline)
	}
}

// stopWatchdog stops the attempt's timer for good.
func (s *streamState) stopWatchdog() { s.a.stopTimer() }

// commit writes the response headers: from here on the client has bytes.
func (s *streamState) commit() {
	a := s.a
	ct := "text/event-stream"
	if translate.IsOllama(a.req.format) {
		ct = "application/x-ndjson" // Ollama streams JSON lines
	} else if a.req.format == translate.Gemini && a.req.gemini.framing == tgemini.FramingJSONArray {
		ct = "application/json" // streamGenerateContent without alt=sse: one JSON array
	}
	setServedHeaders(a.w.Header(), &a.served, a.cand, a.req.earlierAttempts+len(a.req.attempts)+1, "",
		"Content-Type", ct, "Cache-Control", "no-cache", "X-Accel-Buffering", "no", "Date", a.g.httpDate())
	a.w.WriteHeader(http.StatusOK)
	a.req.log.Status = http.StatusOK
	a.req.log.ConnectionID = a.cand.Conn.ID
	a.req.log.Provider = a.cand.Conn.BreakerKey
	s.rcVal = *http.NewResponseController(a.w)
	s.rc, s.committed = &s.rcVal, true
}

// end decides how the stream finished and tells the client and the layers.
func (s *streamState) end(readErr error) (*failure, bool) {
	a, committed := s.a, s.committed
	complete := s.streamErr == nil && readErr == io.EOF && (s.tr == nil && s.sawEnd || s.tr != nil && s.tr.Complete())
	if complete {
		if s.tr != nil {
			s.pending = s.tr.End(s.pending)
		}
		if !committed {
			s.commit()
		}
		_ = a.send(s.rc, s.pending)
		s.recordUsage()
		s.watchMu.Lock()
		empty := !s.watch.SawContent()
		s.watchMu.Unlock()
		if empty && !s.refused {
			// A turn with only reasoning (or nothing) is reported empty: the
			// client got what the upstream sent, the layers hear it failed.
			// A refusal or a safety block is an answer (issue 40 D).
			a.req.log.ErrorCode = "EMPTY_RESPONSE"
			a.finish(verdict.Verdict{Kind: verdict.KindServer, Scope: verdict.ScopeExact, Code: "EMPTY_RESPONSE",
				Message: errEmptyStream.Error()})
			return nil, true
		}
		s.learnFirstToken()
		a.finish(verdict.Verdict{Kind: verdict.KindSuccess, Status: http.StatusOK})
		return nil, true
	}
	v := s.failureVerdict(readErr)
	if v.Kind == verdict.KindClientCanceled {
		a.finish(v)
		return &failure{v: v, clientGone: true}, committed
	}
	a.finish(v)
	if !committed {
		return &failure{v: v}, false
	}
	if len(s.pending) > 0 { // what arrived before the break is the client's
		if s.filter != nil {
			s.pending = s.filter(s.pending)
		}
		_ = a.send(s.rc, s.pending)
		s.pending = s.pending[:0]
	}
	if a.g.continueStream(s, v) {
		return nil, true
	}
	a.req.log.ErrorCode = v.Code
	s.pending = s.errorEvent(s.pending, v.Code, "stream interrupted: "+v.Message)
	_ = a.send(s.rc, s.pending)
	return nil, true
}

// failer is a translator that ends its stream with a format-native failure
// (Responses' response.failed, the only ending Codex reads a reason from).
type failer interface {
	Fail(dst []byte, code, message string) []byte
}

func (s *streamState) errorEvent(dst []byte, code, message string) []byte {
	if f, ok := s.tr.(failer); ok {
		return f.Fail(dst, code, message)
	}
	if c, ok := s.tr.(*chain); ok {
		if f, ok := c.second.(failer); ok {
			return f.Fail(dst, code, message)
		}
		if ew, ok := c.second.(tgemini.ErrorWriter); ok {
			return ew.AppendError(dst, http.StatusInternalServerError, "", code+": "+message)
		}
	}
	if ew, ok := s.tr.(tgemini.ErrorWriter); ok {
		// Google's error object in the client's framing (the JSON array closed).
		return ew.AppendError(dst, http.StatusInternalServerError, "", code+": "+message)
	}
	return translate.ErrorEventTyped(dst, s.a.req.format, s.upstreamErrorType(), code, message)
}

// upstreamErrorType is the Anthropic error type of the upstream's error
// event, if it reported one (an Anthropic upstream's overloaded_error
// reaches a Messages client as overloaded_error, not api_error).
func (s *streamState) upstreamErrorType() string {
	var ue *upstreamStreamError
	if !errors.As(s.streamErr, &ue) {
		return ""
	}
	return translate.AnthropicErrorType(gjson.GetBytes(ue.data, "error.type").String())
}

// failureVerdict classifies why the stream did not complete.
func (s *streamState) failureVerdict(readErr error) verdict.Verdict {
	a := s.a
	var ue *upstreamStreamError
	if errors.As(s.streamErr, &ue) {
		if v, ok := a.g.streamErrorVerdict(ue.data, a.r, a.cand); ok {
			return v
		}
	}
	if s.streamErr != nil {
		code := "UPSTREAM_STREAM_ERROR"
		if s.streamErr == errInvalidEvent {
			code = "UPSTREAM_BAD_RESPONSE" // as an unreadable non-stream answer
		}
		return redacted(verdict.Verdict{Kind: verdict.KindServer, Scope: verdict.ScopeExact, Failover: true, CountsForBreaker: false,
			Code: code, Message: s.streamErr.Error()}, a.r, a.cand)
	}
	err := readErr
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
		v := a.g.classifyErr(a.ctx, a.r, err, a.cand)
		if v.Kind == verdict.KindTransport {
			v.Message = errTruncated.Error()
			v.Code = "STREAM_TRUNCATED"
		}
		return v
	}
	return a.g.classifyErr(a.ctx, a.r, err, a.cand)
}

func (s *streamState) recordUsage() {
	req := s.a.req
	if s.tr != nil {
		u := usageOf(s.tr.Usage())
		req.log.PromptTokens, req.log.CompletionTokens, req.log.CachedTokens = u.Prompt, u.Output, u.CacheRead
		if s.a.g.spend != nil {
			req.round.bill = bill{model: s.a.cand.Model, usage: u, ok: true}
		}
		return
	}
	if s.usage.ok || s.startUsage.ok {
		u := s.usage
		if s.startUsage.ok {
			u = withStartUsage(u, s.startUsage)
		}
		req.log.PromptTokens, req.log.CompletionTokens, req.log.CachedTokens = u.c.in, u.c.out, u.c.cached
		if s.a.g.spend != nil {
			req.round.bill = bill{model: s.a.cand.Model, usage: billOf(u.c, u.write, u.reasoning, u.cacheRead), ok: true}
		}
	}
}

// withStartUsage completes an Anthropic stream's final usage (its
// message_delta's, which may count output only) with the input counts of its
// message_start: a passthrough stream, or a continuation whose message_start
// never reached the client, is not logged and billed as 0 input tokens.
func withStartUsage(u, start streamUsage) streamUsage {
	if u.c.in == 0 {
		u.c.in = start.c.in
	}
	if u.c.cached == 0 {
		u.c.cached = start.c.cached
	}
	if u.c.out == 0 {
		u.c.out = start.c.out
	}
	if !u.hasWrite {
		u.write, u.hasWrite = start.write, start.hasWrite
	}
	u.cacheRead = u.cacheRead || start.cacheRead
	return u
}

// refusalEnd reports an upstream event that makes the answer a refusal or
// a safety block: Anthropic's stop_reason "refusal", OpenAI's finish_reason
// "content_filter", an OpenAI delta's (or message's, or content part's)
// non-empty "refusal" — such a stream ends with finish_reason "stop" —, a
// Responses response.refusal.delta/done, Gemini's finishReason SAFETY (or
// another block reason) and a Gemini prompt's blockReason. Read on content,
// ending, metadata and heartbeat events, over a view of the event's bytes:
// nothing is allocated.
func refusalEnd(data []byte) bool {
	json := unsafe.String(unsafe.SliceData(data), len(data))
	if strings.Contains(json, "refusal") && (valueIs(json, `"refusal"`, "") ||
		valueIs(json, `"type"`, "response.refusal.delta", "response.refusal.done")) {
		return true
	}
	if !strings.Contains(json, "eason") { // stop_reason, finish_reason, finishReason, blockReason
		return false
	}
	return valueIs(json, `"stop_reason"`, "refusal") || valueIs(json, `"finish_reason"`, "content_filter") ||
		valueIs(json, `"finishReason"`, "SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY") ||
		valueIs(json, `"blockReason"`, "")
}

// valueIs reports whether some member named key (quoted) of the JSON text
// has one of the string values (any non-empty string when vals is [""]).
func valueIs(json, key string, vals ...string) bool {
	for rest := json; ; {
		i := strings.Index(rest, key)
		if i < 0 {
			return false
		}
		rest = strings.TrimLeft(rest[i+len(key):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) == 0 || rest[0] != '"' {
			continue
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return false
		}
		v := rest[1 : 1+end]
		for _, want := range vals {
			if want == "" && v != "" || want != "" && v == want {
				return true
			}
		}
	}
}
