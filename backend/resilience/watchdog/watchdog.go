// Package watchdog decides, for one upstream streaming attempt, whether the stream
// has stalled, is producing useful output too slowly, has waited too long for its
// first token, or has run past its hard deadline.
//
// Everything here is a pure function of the times the caller passes in: there are no
// timers or goroutines. The caller feeds every upstream frame to Observe, asks Check
// for the verdict, and arms a single timer at NextCheck, the earliest instant at which
// Check could answer differently. The package knows nothing of wire formats; the
// translate/frames package turns SSE events into Frames.
//
// # Timers
//
// Every limit fires when it is reached, not after: a verdict for a limit L measured
// from instant a is given for every now with now−a ≥ L (so at exactly a+L, not only
// at a+L+1ns). That is what lets a caller arm one timer at NextCheck and find the
// verdict changed when it fires.
//
//   - Content stall (StallBudget, always on): Stalled once no Content, ToolCall or
//     Reasoning frame has arrived for the budget, counted from the attempt start or
//     the latest such frame. Reasoning frames reset the budget (a reasoning model may
//     think for minutes before its first visible token) but are not output: a turn
//     with only reasoning still reports SawContent false. Heartbeats, metadata and
//     unknown frames never reset it, so a stream that stops reasoning and only sends
//     heartbeats still stalls.
//   - First token (FirstTokenTimeout, optional): FirstTokenTimeout once the attempt is
//     that old without any Content or ToolCall frame (reasoning does not count).
//   - Quiet first token (FirstTokenQuiet, optional): FirstTokenTimeout once, before
//     the first Content, ToolCall or Reasoning frame, no frame of any kind has arrived
//     for that long, counted from the start or the latest frame: every heartbeat, SSE
//     comment or metadata frame extends it, and the first reasoning frame ends it
//     (reasoning is then judged by the stall budget only), so it never cuts a long
//     reasoning turn or an upstream that says it is still working.
//   - Hard deadline (HardDeadline, optional, guide §6 / #9153): DeadlineExceeded once
//     the attempt is that old, whatever the quality of the output. It is an absolute
//     ceiling and wins over every other verdict.
//   - Throughput (Throughput, opt-in, guide §6 / #9709): see below.
//
// When several verdicts hold at once, Check reports the first of DeadlineExceeded,
// FirstTokenTimeout, Stalled, SlowThroughput. Once an End or Error frame has been
// observed the stream is over: Check returns OK and later frames are ignored.
//
// # Throughput (reading of guide §6)
//
// The throughput watchdog catches an upstream that keeps sending chunks but produces
// assistant output below a useful rate. It is distinct from the stall timer:
// heartbeats and metadata count for neither. This package encodes §6 as follows,
// matching the reference OmniRoute implementation except where marked:
//
//   - Only Content frames count, by their Bytes (the UTF-8 length of the visible text
//     delta, the §6 "conservative UTF-8 byte proxy"). Usage-only, empty, heartbeat,
//     metadata, tool-call and reasoning frames add nothing. A Content frame with no
//     bytes is an empty delta and is treated as a heartbeat.
//   - Rolling window: at now, the window holds the Content bytes observed at instants
//     in [now−Window, now], both ends included; rate = bytes ÷ Window (in seconds),
//     always divided by the full window length.
//   - Warm-up then a full window: no SlowThroughput before start+Warmup+Window, so the
//     window judged lies entirely after the warm-up.
//   - Suspension: while a tool call or reasoning is in progress (the most recent
//     progress frame was ToolCall or Reasoning) there is no SlowThroughput verdict.
//     The phase ends with the next Content frame. Our reading of "suspends the
//     evaluation" is that the suspended time is not judged at all: after the phase
//     ends the watchdog again needs a full window, now measured from the Content
//     frame that ended it (readiness = max(start+Warmup, resumedAt) + Window). The
//     reference implementation instead judges the first text token after a long
//     reasoning phase against a window of silence, which aborts nearly every
//     reasoning turn; we deliberately do not.
//   - Minimum rate vs minimum measurable output: SlowThroughput needs rate <
//     MinBytesPerSecond (strictly below, so a window exactly at the minimum passes;
//     evaluated as bytes < ⌈MinBytesPerSecond × Window in seconds⌉) and a measurable
//     window. The guide only names the "minimum measurable output"; the reference
//     settings define it as "the minimum amount required before a non-zero sample is
//     considered measurable". So a window holding some bytes but fewer than
//     MinMeasurableBytes is too small to judge and never aborts, while a window
//     holding zero bytes is measurable (no useful output at all) and aborts. With the
//     default MinMeasurableBytes of 1 every window is measurable. A trickle below
//     MinMeasurableBytes per window is thus left to the stall and deadline timers.
//
// A Watch is safe for concurrent use. Times should come from one monotonic clock; an
// instant earlier than the latest one already seen is treated as that latest one.
package watchdog

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Kind is what sort of progress one upstream frame represents. The zero Kind is
// Unknown, so a zero Frame never counts as progress.
type Kind int

// Frame kinds.
const (
	// Unknown is a frame that could not be understood (malformed JSON); never progress.
	Unknown Kind = iota
	// Content is model output the user sees: text deltas, refusal text.
	Content
	// ToolCall is a tool call starting or streaming its arguments.
	ToolCall
	// Reasoning is a reasoning model thinking: progress, but not output.
	Reasoning
	// Heartbeat is a keep-alive: comments, pings, empty deltas, role-only chunks.
	Heartbeat
	// Metadata is stream bookkeeping: message/response start, block boundaries, usage.
	Metadata
	// End is the upstream's proper end of stream.
	End
	// Error is an in-band upstream error; it ends the stream too.
	Error
)

// String returns the kind's snake_case name ("tool_call"), or "kind(N)" for an
// undefined value.
func (k Kind) String() string {
	switch k {
	case Unknown:
		return "unknown"
	case Content:
		return "content"
	case ToolCall:
		return "tool_call"
	case Reasoning:
		return "reasoning"
	case Heartbeat:
		return "heartbeat"
	case Metadata:
		return "metadata"
	case End:
		return "end"
	case Error:
		return "error"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Frame is one upstream frame as the watchdog sees it.
type Frame struct {
	Kind Kind
	// Bytes is the UTF-8 length of the user-visible text (Content) or tool-argument
	// delta (ToolCall) the frame carries; 0 for every other kind, except that an End
	// frame may carry the final text of a chunk that also ended the stream.
	Bytes int
}

// Verdict is the watchdog's decision at one instant.
type Verdict int

// Verdicts.
const (
	// OK means keep streaming.
	OK Verdict = iota
	// Stalled means no Content, ToolCall or Reasoning frame within the stall budget.
	Stalled
	// SlowThroughput means a full window of useful output below the minimum rate.
	SlowThroughput
	// FirstTokenTimeout means no Content or ToolCall frame within FirstTokenTimeout.
	FirstTokenTimeout
	// DeadlineExceeded means the attempt reached its hard deadline.
	DeadlineExceeded
)

// String returns the verdict's snake_case name ("slow_throughput"), or "verdict(N)"
// for an undefined value.
func (v Verdict) String() string {
	switch v {
	case OK:
		return "ok"
	case Stalled:
		return "stalled"
	case SlowThroughput:
		return "slow_throughput"
	case FirstTokenTimeout:
		return "first_token_timeout"
	case DeadlineExceeded:
		return "deadline_exceeded"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Defaults, as in the reference implementation.
const (
	// DefaultStallBudget is the content-stall budget.
	DefaultStallBudget = 120 * time.Second
	// DefaultThroughputWarmup is the throughput warm-up.
	DefaultThroughputWarmup = 30 * time.Second
	// DefaultThroughputWindow is the throughput rolling window.
	DefaultThroughputWindow = 30 * time.Second
	// DefaultMinBytesPerSecond is the minimum useful-output rate.
	DefaultMinBytesPerSecond = 4
	// DefaultMinMeasurableBytes is the minimum non-zero window that can be judged.
	DefaultMinMeasurableBytes = 1
)

// Normalize bounds for Config, so a typo in settings can never wedge or disable the
// content-stall watchdog. The throughput bounds follow the reference settings layer
// (warm-up 0–10 min, window ≥ 1 s, rate ≥ 1 B/s, measurable bytes ≥ 1); the window
// and rate ceilings are ours.
const (
	minStallBudget      = time.Second
	maxThroughputWarmup = 10 * time.Minute
	minThroughputWindow = time.Second
	maxThroughputWindow = 10 * time.Minute
	minBytesPerSecond   = 1
	maxBytesPerSecond   = 1 << 30
	minMeasurableBytes  = 1
)

// Config tunes one Watch. The zero Config is usable: New normalizes it.
type Config struct {
	// StallBudget is the content-stall budget: no Content, ToolCall or Reasoning frame
	// for this long means Stalled (heartbeats and metadata do not reset it). ≤ 0 means
	// DefaultStallBudget; positive values below 1 s are raised to 1 s.
	StallBudget time.Duration
	// FirstTokenTimeout optionally limits the time to the first Content or ToolCall
	// frame, from the attempt start. 0 (or negative) turns it off.
	FirstTokenTimeout time.Duration
	// FirstTokenQuiet optionally limits the quiet before the first progress frame:
	// no frame of any kind for this long, from the start or the latest frame,
	// before any Content, ToolCall or Reasoning frame, means FirstTokenTimeout.
	// 0 (or negative) turns it off.
	FirstTokenQuiet time.Duration
	// HardDeadline is the absolute per-attempt ceiling, from the attempt start.
	// 0 (or negative) turns it off.
	HardDeadline time.Duration
	// Throughput is the opt-in slow-output watchdog.
	Throughput Throughput
}

// Throughput tunes the opt-in slow-output watchdog (guide §6); see the package
// documentation for the exact rule.
type Throughput struct {
	// Enabled turns the throughput watchdog on (off by default).
	Enabled bool
	// Warmup is the grace period from the attempt start before the rolling window
	// starts participating; clamped to [0, 10 min].
	Warmup time.Duration
	// Window is the rolling window that must be complete before an abort; clamped
	// to [1 s, 10 min].
	Window time.Duration
	// MinBytesPerSecond is the minimum useful-output rate; a window strictly below it
	// is slow. Values below 1 (and NaN) become 1.
	MinBytesPerSecond float64
	// MinMeasurableBytes is the smallest non-zero window byte count that can be
	// judged; fewer (but not zero) bytes never abort. Values below 1 become 1.
	MinMeasurableBytes int
}

// DefaultConfig returns the built-in configuration: a 120 s stall budget, no
// first-token limit, no hard deadline, and the throughput watchdog disabled with
// its reference tuning (30 s warm-up, 30 s window, 4 B/s, 1 byte).
func DefaultConfig() Config {
	return Config{
		StallBudget: DefaultStallBudget,
		Throughput: Throughput{
			Warmup:             DefaultThroughputWarmup,
			Window:             DefaultThroughputWindow,
			MinBytesPerSecond:  DefaultMinBytesPerSecond,
			MinMeasurableBytes: DefaultMinMeasurableBytes,
		},
	}
}

// Normalize returns c with every field brought within its documented bounds.
func (c Config) Normalize() Config {
	switch {
	case c.StallBudget <= 0:
		c.StallBudget = DefaultStallBudget
	case c.StallBudget < minStallBudget:
		c.StallBudget = minStallBudget
	}
	c.FirstTokenTimeout = max(c.FirstTokenTimeout, 0)
	c.FirstTokenQuiet = max(c.FirstTokenQuiet, 0)
	c.HardDeadline = max(c.HardDeadline, 0)
	t := &c.Throughput
	t.Warmup = min(max(t.Warmup, 0), maxThroughputWarmup)
	t.Window = min(max(t.Window, minThroughputWindow), maxThroughputWindow)
	if math.IsNaN(t.MinBytesPerSecond) || t.MinBytesPerSecond < minBytesPerSecond {
		t.MinBytesPerSecond = minBytesPerSecond
	}
	t.MinBytesPerSecond = min(t.MinBytesPerSecond, maxBytesPerSecond)
	t.MinMeasurableBytes = max(t.MinMeasurableBytes, minMeasurableBytes)
	return c
}

// sample is the Content bytes observed at one instant, kept as a running total.
type sample struct {
	at  time.Duration // offset from the attempt start
	cum int64         // total Content bytes observed up to and including at
}

// Watch is the watchdog of one streaming attempt. Create it with New, or
// Init one that is part of the caller's own state.
type Watch struct {
	mu    sync.Mutex
	cfg   Config
	start time.Time

	// Thresholds derived from cfg at New.
	slowBelow    int64 // a window with fewer bytes than this is below MinBytesPerSecond
	measurableAt int64 // a non-zero window needs at least this many bytes to be judged

	// Offsets from start.
	lastSeen     time.Duration // latest instant passed to Observe
	lastProgress time.Duration // latest Content, ToolCall or Reasoning frame (0 = start)
	resumedAt    time.Duration // Content frame that ended the latest suspension (0 = none)
	lastFrame    time.Duration // latest frame of any kind (0 = start)
	firstContent time.Duration // first Content or ToolCall frame (when sawContent)

	sawContent   bool
	sawReasoning bool
	suspended    bool // the latest progress frame was ToolCall or Reasoning
	ended        bool // an End or Error frame was observed

	// Content samples in time order, pruned to those that can still be in a window.
	samples []sample
	pruned  int64 // cum of the last pruned sample (bytes before samples[0])
}

// New starts watching an attempt that began at start, with cfg normalized.
func New(cfg Config, start time.Time) *Watch {
	w := new(Watch)
	w.Init(cfg, start)
	return w
}

// Init starts w (a zero Watch, not yet in use) watching an attempt that began
// at start, as New does without allocating one.
func (w *Watch) Init(cfg Config, start time.Time) {
	cfg = cfg.Normalize()
	t := cfg.Throughput
	// ceil(MinBytesPerSecond × Window): bytes < slowBelow ⇔ bytes/Window < MinBytesPerSecond.
	w.cfg, w.start = cfg, start
	w.slowBelow = int64(math.Ceil(t.MinBytesPerSecond * t.Window.Seconds()))
	w.measurableAt = int64(t.MinMeasurableBytes)
}

// Config returns the normalized configuration in force.
func (w *Watch) Config() Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cfg
}

// Observe records one upstream frame received at now.
func (w *Watch) Observe(f Frame, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.offset(now)
	w.lastSeen, w.lastFrame = t, t
	if w.ended {
		return
	}
	if !w.sawContent && (f.Kind == ToolCall || f.Kind == Content && f.Bytes > 0) {
		w.firstContent = t
	}
	switch f.Kind {
	case Content:
		if f.Bytes <= 0 {
			break // an empty delta is a heartbeat
		}
		w.lastProgress = t
		w.sawContent = true
		if w.suspended {
			w.suspended = false
			w.resumedAt = t
		}
		if w.cfg.Throughput.Enabled {
			w.record(t, int64(f.Bytes))
		}
	case ToolCall:
		w.lastProgress = t
		w.sawContent = true
		w.suspended = true
	case Reasoning:
		w.lastProgress = t
		w.sawReasoning = true
		w.suspended = true
	case End, Error:
		w.ended = true
		if f.Bytes > 0 && !w.sawContent {
			w.firstContent = t
			w.sawContent = true // final text riding on the terminal chunk
		}
		w.samples, w.pruned = nil, 0
		return
	}
	w.prune(t)
}

// Check returns the verdict at now. It does not change the Watch.
func (w *Watch) Check(now time.Time) Verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.verdictAt(w.offset(now))
}

// NextCheck returns the earliest instant, not before now, at which Check could give
// a different answer than Check(now) if no frame is observed in between: Check is
// constant on [now, NextCheck) and differs at NextCheck itself. When nothing can
// change any more (the stream ended) it returns a time centuries away.
// Observe can move the answer earlier (for example, text ending a suspension starts
// a new throughput window), so call NextCheck again after observing frames.
func (w *Watch) NextCheck(now time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.offset(now)
	v := w.verdictAt(t)
	// The loop skips change points that a higher-priority verdict masks (for
	// example the stall budget expiring while FirstTokenTimeout is reported). Each
	// component changes a bounded number of times (deadlines once, the throughput
	// test at most four), so it ends well within the bound; hitting the bound
	// would return the last change point, which is early but never wrong.
	for range 64 {
		next, ok := w.nextChange(t)
		if !ok {
			return w.at(math.MaxInt64, now)
		}
		t = next
		if w.verdictAt(t) != v {
			break
		}
	}
	return w.at(t, now)
}

// SawContent reports whether any Content or ToolCall frame was observed. A turn that
// only reasoned is still empty.
func (w *Watch) SawContent() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sawContent
}

// FirstContent reports when the first Content or ToolCall frame was observed,
// as a duration since the start (ok false when none was).
func (w *Watch) FirstContent() (d time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstContent, w.sawContent
}

// SawReasoning reports whether any Reasoning frame was observed.
func (w *Watch) SawReasoning() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sawReasoning
}

// Ended reports whether an End or Error frame was observed: the caller can stop
// watching.
func (w *Watch) Ended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// offset converts now to a duration since the attempt start, never before the
// latest observed instant.
func (w *Watch) offset(now time.Time) time.Duration {
	return max(now.Sub(w.start), w.lastSeen)
}

// at converts an offset back to a time, never before now.
func (w *Watch) at(t time.Duration, now time.Time) time.Time {
	if t == math.MaxInt64 {
		return now.Add(math.MaxInt64 - 1)
	}
	if abs := w.start.Add(t); abs.After(now) {
		return abs
	}
	return now
}

// verdictAt is Check at offset t (t ≥ lastSeen).
func (w *Watch) verdictAt(t time.Duration) Verdict {
	if w.ended {
		return OK
	}
	if d := w.cfg.HardDeadline; d > 0 && t >= d {
		return DeadlineExceeded
	}
	if d := w.cfg.FirstTokenTimeout; d > 0 && !w.sawContent && t >= d {
		return FirstTokenTimeout
	}
	if q := w.cfg.FirstTokenQuiet; q > 0 && !w.sawContent && !w.sawReasoning && t-w.lastFrame >= q {
		return FirstTokenTimeout
	}
	if t-w.lastProgress >= w.cfg.StallBudget {
		return Stalled
	}
	if w.judging(t) && w.slow(w.windowBytes(t)) {
		return SlowThroughput
	}
	return OK
}

// readyAt is the first offset at which a throughput verdict is possible: a full
// window after both the warm-up and the end of the latest suspension.
func (w *Watch) readyAt() time.Duration {
	return max(w.cfg.Throughput.Warmup, w.resumedAt) + w.cfg.Throughput.Window
}

// judging reports whether the throughput watchdog may give a verdict at t.
func (w *Watch) judging(t time.Duration) bool {
	return w.cfg.Throughput.Enabled && !w.suspended && t >= w.readyAt()
}

// slow reports whether a full window holding bytes is a SlowThroughput verdict:
// measurable (zero, or at least MinMeasurableBytes) and below the minimum rate.
func (w *Watch) slow(bytes int64) bool {
	return bytes < w.slowBelow && (bytes == 0 || bytes >= w.measurableAt)
}

// firstInWindow is the index of the oldest sample inside the window at t.
func (w *Watch) firstInWindow(t time.Duration) int {
	from := t - w.cfg.Throughput.Window
	return sort.Search(len(w.samples), func(i int) bool { return w.samples[i].at >= from })
}

// windowBytes is the Content bytes observed in [t−Window, t].
func (w *Watch) windowBytes(t time.Duration) int64 {
	return w.remainingAfter(w.firstInWindow(t) - 1)
}

// remainingAfter is the bytes of the samples after index i (i = −1: all of them).
func (w *Watch) remainingAfter(i int) int64 {
	if len(w.samples) == 0 {
		return 0
	}
	before := w.pruned
	if i >= 0 {
		before = w.samples[i].cum
	}
	return w.samples[len(w.samples)-1].cum - before
}

// record appends bytes observed at t, merging samples of the same instant.
func (w *Watch) record(t time.Duration, bytes int64) {
	total := w.pruned
	if n := len(w.samples); n > 0 {
		total = w.samples[n-1].cum
		if w.samples[n-1].at == t {
			w.samples[n-1].cum += bytes
			return
		}
	}
	w.samples = append(w.samples, sample{at: t, cum: total + bytes})
}

// prune drops samples that can no longer be in the window at t or later.
func (w *Watch) prune(t time.Duration) {
	i := w.firstInWindow(t)
	if i == 0 {
		return
	}
	w.pruned = w.samples[i-1].cum
	if i == len(w.samples) {
		w.samples = w.samples[:0]
		return
	}
	w.samples = w.samples[i:]
}

// nextChange returns the earliest offset after t at which some component of the
// verdict (a deadline, the stall budget, throughput readiness or the slow test on
// the shrinking window) changes, if any.
func (w *Watch) nextChange(t time.Duration) (time.Duration, bool) {
	if w.ended {
		return 0, false
	}
	best, found := time.Duration(math.MaxInt64), false
	consider := func(c time.Duration) {
		if c > t && c < best {
			best, found = c, true
		}
	}
	if d := w.cfg.HardDeadline; d > 0 {
		consider(d)
	}
	if d := w.cfg.FirstTokenTimeout; d > 0 && !w.sawContent {
		consider(d)
	}
	if q := w.cfg.FirstTokenQuiet; q > 0 && !w.sawContent && !w.sawReasoning {
		consider(w.lastFrame + q)
	}
	consider(w.lastProgress + w.cfg.StallBudget)
	if w.cfg.Throughput.Enabled && !w.suspended {
		if ready := w.readyAt(); ready > t {
			consider(ready)
		} else if c, ok := w.nextSlowFlip(t); ok {
			consider(c)
		}
	}
	return best, found
}

// nextSlowFlip returns the first offset after t at which slow(windowBytes) changes
// value as samples leave the window (none arrive without Observe). A sample observed
// at a is in the window while t ≤ a+Window and leaves at a+Window+1ns.
func (w *Watch) nextSlowFlip(t time.Duration) (time.Duration, bool) {
	i := w.firstInWindow(t)
	if i == len(w.samples) {
		return 0, false // empty window: nothing can leave
	}
	cur := w.slow(w.remainingAfter(i - 1))
	// The window shrinks monotonically; slow can only change where the remaining
	// bytes cross slowBelow, measurableAt or 1. Jump boundary to boundary.
	for j := i - 1; ; {
		left := w.remainingAfter(j)
		var below int64 // next boundary strictly below left
		switch {
		case left >= w.slowBelow && w.slowBelow > 0:
			below = w.slowBelow
		case left >= w.measurableAt && w.measurableAt > 1:
			below = w.measurableAt
		default:
			below = 1
		}
		below = min(below, left)
		// First k > j with remainingAfter(k) < below.
		k := j + 1 + sort.Search(len(w.samples)-j-1, func(n int) bool {
			return w.remainingAfter(j+1+n) < below
		})
		if k >= len(w.samples) {
			return 0, false
		}
		if w.slow(w.remainingAfter(k)) != cur {
			return w.samples[k].at + w.cfg.Throughput.Window + 1, true
		}
		j = k
	}
}
