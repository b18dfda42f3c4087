package gateway

import (
	"slices"
	"sync"
	"time"
)

// The learned first-token limit (issue 40): a streaming attempt whose
// upstream, once its headers came, sends nothing at all — no text, no
// reasoning, no keep-alive, no SSE comment — for longer than its model
// usually takes to its first token fails over like a first-byte timeout.
// "Usually" is learned per (connection, model) from its recent successful
// streams: firstTokenMultiple × their p95 time to the first text or tool
// call, never under firstTokenFloor, and nothing until firstTokenMinSamples
// streams were seen (the first-byte limit alone holds until then). Any frame
// starts the quiet over and the first reasoning frame ends the limit
// (watchdog.Config.FirstTokenQuiet), so a long reasoning turn, or an
// upstream that keeps saying it is working, is never cut by it.
const (
	firstTokenSamples    = 20               // the rolling window, per (connection, model)
	firstTokenMinSamples = 5                // streams seen before a limit applies
	firstTokenFloor      = 30 * time.Second // the least limit
	firstTokenMultiple   = 3                // × the learned p95
)

// firstTokenMemory holds, per (connection, model), the recent times to the
// first token of its successful streams and the limit they give. In
// memory: a restart learns again. The zero value is ready.
type firstTokenMemory struct {
	mu    sync.Mutex
	known map[prefillKey]*firstTokenTimes
}

// firstTokenTimes is one target's rolling window and its limit.
type firstTokenTimes struct {
	d     [firstTokenSamples]time.Duration
	n     int // samples held (up to firstTokenSamples)
	next  int // where the next sample goes
	limit time.Duration
}

// limit is the learned first-token quiet limit of model on conn (0: not
// learned yet).
func (m *firstTokenMemory) limit(conn, model string) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.known[prefillKey{conn, model}]; t != nil {
		return t.limit
	}
	return 0
}

// observe records one stream's time to its first token and recomputes the
// limit: max(firstTokenFloor, firstTokenMultiple × p95) once
// firstTokenMinSamples are held.
func (m *firstTokenMemory) observe(conn, model string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known == nil {
		m.known = make(map[prefillKey]*firstTokenTimes)
	}
	k := prefillKey{conn, model}
	t := m.known[k]
	if t == nil {
		t = new(firstTokenTimes)
		m.known[k] = t
	}
	t.d[t.next] = d
	t.next = (t.next + 1) % firstTokenSamples
	t.n = min(t.n+1, firstTokenSamples)
	if t.n < firstTokenMinSamples {
		return
	}
	sorted := t.d // a copy, on the stack
	s := sorted[:t.n]
	slices.Sort(s)
	p95 := s[(95*t.n+99)/100-1] // nearest rank
	t.limit = max(firstTokenFloor, firstTokenMultiple*p95)
}

// firstTokenQuiet is the quiet first-token limit of a's stream: learned, for
// a streaming request to a remote connection (a local server may load the
// model after its headers, as the header limit allows for).
func (a *attemptCtx) firstTokenQuiet() time.Duration {
	if !a.req.stream || a.cand.Conn == nil || a.cand.Conn.Category() == "local" {
		return 0
	}
	return a.g.firstTokens.limit(a.cand.Conn.ID, a.cand.Model)
}

// learnFirstToken records the time to the first token of a stream that
// completed with an answer.
//
//go:noinline
func (s *streamState) learnFirstToken() {
	s.watchMu.Lock()
	d, ok := s.watch.FirstContent()
	s.watchMu.Unlock()
	if ok && s.a.cand.Conn != nil {
		s.a.g.firstTokens.observe(s.a.cand.Conn.ID, s.a.cand.Model, d)
	}
}
