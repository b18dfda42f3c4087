package watchdog_test

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/resilience/watchdog"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	ms  = time.Millisecond
	sec = time.Second
	ns  = time.Nanosecond
)

// t0 is the attempt start in every test.
func t0() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

// step is one scripted action: observe a frame, or check the verdict.
type step struct {
	at    time.Duration
	frame watchdog.Frame
	check bool
	want  watchdog.Verdict
}

// obs observes a frame of kind k carrying n bytes at offset at.
func obs(at time.Duration, k watchdog.Kind, n int) step {
	return step{at: at, frame: watchdog.Frame{Kind: k, Bytes: n}}
}

// chk expects verdict want at offset at.
func chk(at time.Duration, want watchdog.Verdict) step {
	return step{at: at, check: true, want: want}
}

// every observes frame k (n bytes) at from, from+period, … up to and including to.
func every(from, to, period time.Duration, k watchdog.Kind, n int) []step {
	var s []step
	for at := from; at <= to; at += period {
		s = append(s, obs(at, k, n))
	}
	return s
}

// checks expects want at from, from+period, … up to and including to.
func checks(from, to, period time.Duration, want watchdog.Verdict) []step {
	var s []step
	for at := from; at <= to; at += period {
		s = append(s, chk(at, want))
	}
	return s
}

// script merges step lists into time order (observations before checks at the
// same instant, so a check sees the frame observed then).
func script(parts ...[]step) []step {
	var all []step
	for _, p := range parts {
		all = append(all, p...)
	}
	slices.SortStableFunc(all, func(a, b step) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		switch {
		case a.check == b.check:
			return 0
		case a.check:
			return 1
		}
		return -1
	})
	return all
}

// run plays steps against a Watch with cfg and also checks the NextCheck contract
// at every check: never in the past, Check constant up to it, different at it.
func run(t *testing.T, cfg watchdog.Config, steps []step) *watchdog.Watch {
	t.Helper()
	start := t0()
	w := watchdog.New(cfg, start)
	for _, s := range steps {
		now := start.Add(s.at)
		if !s.check {
			w.Observe(s.frame, now)
			continue
		}
		if got := w.Check(now); got != s.want {
			t.Fatalf("Check(+%v) = %s, want %s", s.at, got, s.want)
		}
		assertNextCheck(t, w, now)
	}
	return w
}

// farFuture is the horizon beyond which NextCheck means "never".
const farFuture = 100 * 365 * 24 * time.Hour

// assertNextCheck checks the NextCheck contract at now.
func assertNextCheck(t *testing.T, w *watchdog.Watch, now time.Time) {
	t.Helper()
	next := w.NextCheck(now)
	if next.Before(now) {
		t.Fatalf("NextCheck(%v) = %v is in the past", now, next)
	}
	v := w.Check(now)
	if next.Sub(now) > farFuture {
		return
	}
	if next.Sub(now) > ms {
		if got := w.Check(next.Add(-ms)); got != v {
			t.Fatalf("Check(NextCheck−1ms) = %s, Check(now) = %s", got, v)
		}
	}
	if next.After(now) {
		if got := w.Check(next.Add(-ns)); got != v {
			t.Fatalf("Check(NextCheck−1ns) = %s, Check(now) = %s", got, v)
		}
	}
	if got := w.Check(next); got == v {
		t.Fatalf("Check(NextCheck = now+%v) = %s, unchanged", next.Sub(now), got)
	}
}

// stallOnly is a config with only the default stall budget.
func stallOnly() watchdog.Config { return watchdog.DefaultConfig() }

// withThroughput is the default config with the reference throughput tuning on:
// 30 s warm-up, 30 s window, 4 B/s (120 bytes per window), 1 measurable byte.
func withThroughput() watchdog.Config {
	c := watchdog.DefaultConfig()
	c.Throughput.Enabled = true
	return c
}

// TestTimerBoundaries pins every timer at limit −1 ms, exactly at the limit, and
// +1 ms. The choice: a limit fires when it is reached (now − from ≥ limit).
func TestTimerBoundaries(t *testing.T) {
	ftt := stallOnly()
	ftt.FirstTokenTimeout = 30 * sec
	hard := stallOnly()
	hard.HardDeadline = 90 * sec
	tp := withThroughput()
	tests := []struct {
		name  string
		cfg   watchdog.Config
		steps []step
		limit time.Duration
		fires watchdog.Verdict
	}{
		{"stall from start", stallOnly(), nil, 120 * sec, watchdog.Stalled},
		{"stall from last content", stallOnly(), []step{obs(50*sec, watchdog.Content, 3)}, 170 * sec, watchdog.Stalled},
		{"stall from last tool call", stallOnly(), []step{obs(70*sec, watchdog.ToolCall, 0)}, 190 * sec, watchdog.Stalled},
		{"stall from last reasoning", stallOnly(), []step{obs(99*sec, watchdog.Reasoning, 0)}, 219 * sec, watchdog.Stalled},
		{"first token", ftt, every(0, 25*sec, 5*sec, watchdog.Reasoning, 0), 30 * sec, watchdog.FirstTokenTimeout},
		{"hard deadline", hard, every(0, 95*sec, 100*ms, watchdog.Content, 10), 90 * sec, watchdog.DeadlineExceeded},
		{"throughput full window", tp, every(0, 70*sec, sec, watchdog.Heartbeat, 0), 60 * sec, watchdog.SlowThroughput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run(t, tc.cfg, script(tc.steps, []step{
				chk(tc.limit-ms, watchdog.OK),
				chk(tc.limit, tc.fires),
				chk(tc.limit+ms, tc.fires),
			}))
		})
	}
}

// TestStall covers what does and does not reset the content-stall budget.
func TestStall(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"heartbeats every second for 10 min still stall at the budget", script(
			every(0, 10*time.Minute, sec, watchdog.Heartbeat, 0),
			[]step{chk(120*sec-ms, watchdog.OK), chk(120*sec, watchdog.Stalled), chk(10*time.Minute, watchdog.Stalled)},
		)},
		{"metadata, unknown and empty content do not reset", script(
			every(0, 200*sec, 3*sec, watchdog.Metadata, 0),
			every(sec, 200*sec, 3*sec, watchdog.Unknown, 0),
			every(2*sec, 200*sec, 3*sec, watchdog.Content, 0),
			[]step{chk(120*sec-ms, watchdog.OK), chk(120*sec, watchdog.Stalled)},
		)},
		{"reasoning every 30 s for 10 min never stalls", script(
			every(30*sec, 10*time.Minute, 30*sec, watchdog.Reasoning, 0),
			every(0, 10*time.Minute, sec, watchdog.Heartbeat, 0),
			checks(0, 10*time.Minute, sec, watchdog.OK),
		)},
		{"reasoning that stops and only heartbeats stalls", script(
			every(0, 60*sec, 10*sec, watchdog.Reasoning, 0),
			every(61*sec, 300*sec, sec, watchdog.Heartbeat, 0),
			[]step{chk(180*sec-ms, watchdog.OK), chk(180*sec, watchdog.Stalled)},
		)},
		{"tool-call argument streaming keeps it alive", script(
			every(0, 5*time.Minute, 10*sec, watchdog.ToolCall, 20),
			checks(0, 5*time.Minute, 7*sec, watchdog.OK),
		)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, stallOnly(), tc.steps) })
	}
}

// TestSawContent covers the empty-turn signals.
func TestSawContent(t *testing.T) {
	tests := []struct {
		name                    string
		frames                  []watchdog.Frame
		wantContent, wantReason bool
	}{
		{"nothing", nil, false, false},
		{"reasoning only", []watchdog.Frame{{Kind: watchdog.Reasoning}, {Kind: watchdog.Reasoning}, {Kind: watchdog.End}}, false, true},
		{"heartbeats and metadata", []watchdog.Frame{{Kind: watchdog.Heartbeat}, {Kind: watchdog.Metadata}, {Kind: watchdog.Unknown}}, false, false},
		{"empty content delta", []watchdog.Frame{{Kind: watchdog.Content, Bytes: 0}}, false, false},
		{"reasoning then text", []watchdog.Frame{{Kind: watchdog.Reasoning}, {Kind: watchdog.Content, Bytes: 4}}, true, true},
		{"tool call", []watchdog.Frame{{Kind: watchdog.ToolCall}}, true, false},
		{"text on the final chunk", []watchdog.Frame{{Kind: watchdog.End, Bytes: 3}}, true, false},
		{"frames after end are ignored", []watchdog.Frame{{Kind: watchdog.End}, {Kind: watchdog.Content, Bytes: 3}}, false, false},
		{"error ends too", []watchdog.Frame{{Kind: watchdog.Error}, {Kind: watchdog.ToolCall}}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := watchdog.New(stallOnly(), t0())
			for i, f := range tc.frames {
				w.Observe(f, t0().Add(time.Duration(i)*sec))
			}
			if w.SawContent() != tc.wantContent || w.SawReasoning() != tc.wantReason {
				t.Fatalf("SawContent, SawReasoning = %v, %v; want %v, %v",
					w.SawContent(), w.SawReasoning(), tc.wantContent, tc.wantReason)
			}
		})
	}
}

// TestThroughput covers the §6 slow-output watchdog with the reference tuning:
// 30 s warm-up, 30 s window, 4 B/s (a window below 120 bytes is slow).
func TestThroughput(t *testing.T) {
	noWarmup := withThroughput()
	noWarmup.Throughput.Warmup = 0
	measurable := withThroughput()
	measurable.Throughput.MinMeasurableBytes = 100
	disabled := withThroughput()
	disabled.Throughput.Enabled = false
	tests := []struct {
		name  string
		cfg   watchdog.Config
		steps []step
	}{
		{"no abort during warm-up", withThroughput(), script(
			every(0, 100*sec, sec, watchdog.Heartbeat, 0),
			checks(0, 30*sec, sec, watchdog.OK),
		)},
		{"no abort before a full window after warm-up", withThroughput(), script(
			every(0, 100*sec, sec, watchdog.Heartbeat, 0),
			checks(30*sec, 59*sec, sec, watchdog.OK),
			[]step{chk(60*sec-ms, watchdog.OK), chk(60*sec, watchdog.SlowThroughput)},
		)},
		{"without warm-up the first full window decides", noWarmup, script(
			[]step{chk(30*sec-ms, watchdog.OK), chk(30*sec, watchdog.SlowThroughput)},
		)},
		{"rate below the minimum aborts", withThroughput(), script(
			[]step{obs(45*sec, watchdog.Content, 119)},
			[]step{chk(60*sec-ms, watchdog.OK), chk(60*sec, watchdog.SlowThroughput)},
		)},
		{"rate exactly at the minimum passes", withThroughput(), script(
			[]step{obs(45*sec, watchdog.Content, 120)},
			[]step{chk(60*sec, watchdog.OK), chk(75*sec, watchdog.OK)},
			// The sample is in [now−30 s, now] through 75 s and leaves 1 ns later.
			[]step{chk(75*sec+ns, watchdog.SlowThroughput)},
		)},
		{"bytes before the window do not count", withThroughput(), script(
			[]step{obs(29*sec, watchdog.Content, 10_000), obs(50*sec, watchdog.Content, 100)},
			[]step{chk(59*sec, watchdog.OK), chk(60*sec, watchdog.SlowThroughput)},
		)},
		{"slow trickle aborts", withThroughput(), script(
			every(0, 100*sec, sec, watchdog.Content, 3), // 3 B/s: 93 bytes in a closed 30 s window
			[]step{chk(60*sec-ms, watchdog.OK), chk(60*sec, watchdog.SlowThroughput)},
		)},
		{"healthy stream never aborts", withThroughput(), script(
			every(0, 10*time.Minute, 250*ms, watchdog.Content, 2), // 8 B/s
			checks(0, 10*time.Minute, 3*sec, watchdog.OK),
		)},
		{"no abort while a tool call is streaming", withThroughput(), script(
			every(0, 40*sec, sec, watchdog.Content, 10),
			every(41*sec, 200*sec, sec, watchdog.ToolCall, 1),
			checks(0, 200*sec, sec, watchdog.OK),
		)},
		{"text after a tool call gets a full window again", withThroughput(), script(
			every(0, 40*sec, sec, watchdog.Content, 10),
			every(41*sec, 200*sec, sec, watchdog.ToolCall, 1),
			[]step{obs(201*sec, watchdog.Content, 5)},
			every(202*sec, 300*sec, sec, watchdog.Heartbeat, 0),
			checks(201*sec, 230*sec, sec, watchdog.OK),
			[]step{chk(231*sec-ms, watchdog.OK), chk(231*sec, watchdog.SlowThroughput)},
		)},
		{"no abort while reasoning, first text gets a full window", withThroughput(), script(
			every(0, 90*sec, 10*sec, watchdog.Reasoning, 0),
			checks(0, 90*sec, sec, watchdog.OK),
			[]step{obs(95*sec, watchdog.Content, 5)},
			[]step{chk(125*sec-ms, watchdog.OK), chk(125*sec, watchdog.SlowThroughput)},
		)},
		{"heartbeats after reasoning keep the suspension", withThroughput(), script(
			[]step{obs(10*sec, watchdog.Reasoning, 0)},
			every(11*sec, 129*sec, sec, watchdog.Heartbeat, 0),
			checks(11*sec, 129*sec, sec, watchdog.OK),
			[]step{chk(130*sec, watchdog.Stalled)},
		)},
		{"too little measurable output does not abort", measurable, script(
			[]step{obs(40*sec, watchdog.Content, 50)},
			[]step{chk(60*sec, watchdog.OK), chk(70*sec, watchdog.OK)},
			// Once the 50 bytes leave the window it holds nothing: measurable, slow.
			[]step{chk(70*sec+ns, watchdog.SlowThroughput)},
		)},
		{"measurable but slow output aborts", measurable, script(
			[]step{obs(40*sec, watchdog.Content, 100)},
			[]step{chk(60*sec-ms, watchdog.OK), chk(60*sec, watchdog.SlowThroughput)},
		)},
		{"empty window is measurable", measurable, script(
			[]step{chk(60*sec-ms, watchdog.OK), chk(60*sec, watchdog.SlowThroughput)},
		)},
		{"fast enough output passes whatever the measurable minimum", measurable, script(
			[]step{obs(40*sec, watchdog.Content, 120)},
			[]step{chk(60*sec, watchdog.OK)},
		)},
		{"disabled watchdog never aborts", disabled, script(
			every(0, 119*sec, sec, watchdog.Heartbeat, 0),
			checks(0, 119*sec, sec, watchdog.OK),
			[]step{chk(120*sec, watchdog.Stalled)},
		)},
		{"stall outranks slow throughput", withThroughput(), script(
			[]step{chk(119*sec, watchdog.SlowThroughput), chk(120*sec, watchdog.Stalled)},
		)},
		{"end stops the watchdog", withThroughput(), script(
			[]step{obs(10*sec, watchdog.End, 0), obs(11*sec, watchdog.Content, 1)},
			checks(10*sec, 20*time.Minute, 30*sec, watchdog.OK),
		)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc.cfg, tc.steps) })
	}
}

// TestDeadlineCeiling: the hard deadline wins over every other verdict and over
// healthy output alike.
func TestDeadlineCeiling(t *testing.T) {
	all := withThroughput()
	all.Throughput.Warmup = 0
	all.Throughput.Window = 60 * sec
	all.StallBudget = 60 * sec
	all.FirstTokenTimeout = 60 * sec
	all.HardDeadline = 60 * sec
	healthy := withThroughput()
	healthy.HardDeadline = 5 * time.Minute
	ftt := stallOnly()
	ftt.StallBudget = 45 * sec
	ftt.FirstTokenTimeout = 45 * sec
	ftt.HardDeadline = 90 * sec
	tests := []struct {
		name  string
		cfg   watchdog.Config
		steps []step
	}{
		{"everything due at once", all, []step{chk(60*sec-ms, watchdog.OK), chk(60*sec, watchdog.DeadlineExceeded)}},
		{"healthy output", healthy, script(
			every(0, 6*time.Minute, 100*ms, watchdog.Content, 5),
			checks(0, 5*time.Minute-sec, sec, watchdog.OK),
			[]step{chk(5*time.Minute-ms, watchdog.OK), chk(5*time.Minute, watchdog.DeadlineExceeded), chk(6*time.Minute, watchdog.DeadlineExceeded)},
		)},
		{"first token outranks stall, deadline outranks both", ftt, []step{
			chk(45*sec-ms, watchdog.OK), chk(45*sec, watchdog.FirstTokenTimeout),
			chk(90*sec-ms, watchdog.FirstTokenTimeout), chk(90*sec, watchdog.DeadlineExceeded),
		}},
		{"ended streams are past caring", all, []step{obs(sec, watchdog.End, 0), chk(time.Hour, watchdog.OK)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc.cfg, tc.steps) })
	}
}

// TestNextCheckValues pins NextCheck where the answer is known.
func TestNextCheckValues(t *testing.T) {
	hard := stallOnly()
	hard.HardDeadline = 90 * sec
	ftt := stallOnly()
	ftt.FirstTokenTimeout = 30 * sec
	ftt.StallBudget = 45 * sec
	ftt.HardDeadline = 90 * sec
	tests := []struct {
		name  string
		cfg   watchdog.Config
		steps []step
		now   time.Duration
		want  time.Duration // offset of NextCheck; −1 means "never"
	}{
		{"stall budget from start", stallOnly(), nil, 0, 120 * sec},
		{"heartbeats do not move it", stallOnly(), every(0, 50*sec, sec, watchdog.Heartbeat, 0), 50 * sec, 120 * sec},
		{"reasoning moves it", stallOnly(), []step{obs(50*sec, watchdog.Reasoning, 0)}, 50 * sec, 170 * sec},
		{"hard deadline first", hard, []step{obs(80*sec, watchdog.Content, 1)}, 80 * sec, 90 * sec},
		{"stall masked by first token is skipped", ftt, nil, 30 * sec, 90 * sec},
		{"throughput readiness", withThroughput(), []step{obs(10*sec, watchdog.Content, 500)}, 10 * sec, 60 * sec},
		{"window edge", withThroughput(), []step{obs(45*sec, watchdog.Content, 120)}, 60 * sec, 75*sec + ns},
		{"suspended: only the stall", withThroughput(), []step{obs(50*sec, watchdog.Content, 500), obs(55*sec, watchdog.ToolCall, 0)}, 70 * sec, 175 * sec},
		{"stalled and nothing else", stallOnly(), nil, 200 * sec, -1},
		{"ended", stallOnly(), []step{obs(sec, watchdog.End, 0)}, sec, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := run(t, tc.cfg, tc.steps)
			now := t0().Add(tc.now)
			got := w.NextCheck(now)
			if tc.want < 0 {
				if got.Sub(now) < farFuture {
					t.Fatalf("NextCheck = now+%v, want never", got.Sub(now))
				}
				return
			}
			if want := t0().Add(tc.want); !got.Equal(want) {
				t.Fatalf("NextCheck = +%v, want +%v", got.Sub(t0()), tc.want)
			}
			assertNextCheck(t, w, now)
		})
	}
}

// TestNextCheckNeverInThePast asks with instants before the start and before the
// latest observation.
func TestNextCheckNeverInThePast(t *testing.T) {
	w := watchdog.New(withThroughput(), t0())
	w.Observe(watchdog.Frame{Kind: watchdog.Content, Bytes: 5}, t0().Add(100*sec))
	for _, at := range []time.Duration{-time.Hour, -ns, 0, 50 * sec, 100 * sec} {
		now := t0().Add(at)
		if next := w.NextCheck(now); next.Before(now) {
			t.Errorf("NextCheck(+%v) = +%v, in the past", at, next.Sub(t0()))
		}
		// Earlier instants read as the latest observation.
		if got, want := w.Check(now), w.Check(t0().Add(100*sec)); got != want {
			t.Errorf("Check(+%v) = %s, want %s", at, got, want)
		}
	}
}

// TestNextCheckProperty drives random streams and configurations and checks the
// NextCheck contract at random instants between frames.
func TestNextCheckProperty(t *testing.T) {
	kinds := []watchdog.Kind{watchdog.Content, watchdog.Content, watchdog.Content, watchdog.ToolCall,
		watchdog.Reasoning, watchdog.Heartbeat, watchdog.Metadata, watchdog.Unknown}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 9709))
		cfg := watchdog.Config{
			StallBudget:       time.Duration(1+rng.IntN(60)) * sec,
			FirstTokenTimeout: time.Duration(rng.IntN(3)) * time.Duration(rng.IntN(40)) * sec,
			HardDeadline:      time.Duration(rng.IntN(2)) * time.Duration(30+rng.IntN(300)) * sec,
			Throughput: watchdog.Throughput{
				Enabled:            rng.IntN(4) > 0,
				Warmup:             time.Duration(rng.IntN(20)) * sec,
				Window:             time.Duration(1+rng.IntN(20)) * sec,
				MinBytesPerSecond:  1 + rng.Float64()*20,
				MinMeasurableBytes: 1 + rng.IntN(3)*rng.IntN(50),
			},
		}
		w := watchdog.New(cfg, t0())
		at := time.Duration(0)
		for range 300 {
			at += time.Duration(rng.IntN(3000)) * ms
			if rng.IntN(200) == 0 {
				w.Observe(watchdog.Frame{Kind: watchdog.End}, t0().Add(at))
			}
			k := kinds[rng.IntN(len(kinds))]
			n := 0
			if k == watchdog.Content || k == watchdog.ToolCall {
				n = rng.IntN(40)
			}
			w.Observe(watchdog.Frame{Kind: k, Bytes: n}, t0().Add(at))
			probe := t0().Add(at + time.Duration(rng.IntN(5000))*ms)
			assertNextCheck(t, w, probe)
			// Check is constant on [probe, NextCheck).
			next := w.NextCheck(probe)
			if span := next.Sub(probe); span > 0 && span < farFuture {
				v := w.Check(probe)
				for range 5 {
					x := probe.Add(time.Duration(rng.Int64N(int64(span))))
					if got := w.Check(x); got != v {
						t.Fatalf("seed %d: Check(+%v) = %s inside [now, NextCheck), Check(now) = %s",
							seed, x.Sub(t0()), got, v)
					}
				}
			}
		}
	}
}

// TestNormalize pins the configuration bounds.
func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   watchdog.Config
		want watchdog.Config
	}{
		{"zero config", watchdog.Config{}, watchdog.Config{
			StallBudget: 120 * sec,
			Throughput:  watchdog.Throughput{Window: sec, MinBytesPerSecond: 1, MinMeasurableBytes: 1},
		}},
		{"defaults unchanged", watchdog.DefaultConfig(), watchdog.DefaultConfig()},
		{"negative and tiny values", watchdog.Config{
			StallBudget: ms, FirstTokenTimeout: -sec, HardDeadline: -sec,
			Throughput: watchdog.Throughput{Enabled: true, Warmup: -sec, Window: 10 * ms, MinBytesPerSecond: 0, MinMeasurableBytes: -5},
		}, watchdog.Config{
			StallBudget: sec,
			Throughput:  watchdog.Throughput{Enabled: true, Window: sec, MinBytesPerSecond: 1, MinMeasurableBytes: 1},
		}},
		{"huge values", watchdog.Config{
			StallBudget: time.Hour, FirstTokenTimeout: time.Hour, HardDeadline: 2 * time.Hour,
			Throughput: watchdog.Throughput{Warmup: time.Hour, Window: time.Hour, MinBytesPerSecond: math.Inf(1), MinMeasurableBytes: 1 << 20},
		}, watchdog.Config{
			StallBudget: time.Hour, FirstTokenTimeout: time.Hour, HardDeadline: 2 * time.Hour,
			Throughput: watchdog.Throughput{Warmup: 10 * time.Minute, Window: 10 * time.Minute, MinBytesPerSecond: 1 << 30, MinMeasurableBytes: 1 << 20},
		}},
		{"NaN rate", watchdog.Config{Throughput: watchdog.Throughput{MinBytesPerSecond: math.NaN()}}, watchdog.Config{
			StallBudget: 120 * sec,
			Throughput:  watchdog.Throughput{Window: sec, MinBytesPerSecond: 1, MinMeasurableBytes: 1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Normalize(); got != tc.want {
				t.Fatalf("Normalize() = %+v, want %+v", got, tc.want)
			}
			if got := watchdog.New(tc.in, t0()).Config(); got != tc.want {
				t.Fatalf("New().Config() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestStrings pins the names used in logs.
func TestStrings(t *testing.T) {
	kinds := []struct {
		k    watchdog.Kind
		want string
	}{
		{watchdog.Unknown, "unknown"}, {watchdog.Content, "content"}, {watchdog.ToolCall, "tool_call"},
		{watchdog.Reasoning, "reasoning"}, {watchdog.Heartbeat, "heartbeat"}, {watchdog.Metadata, "metadata"},
		{watchdog.End, "end"}, {watchdog.Error, "error"}, {watchdog.Kind(42), "kind(42)"},
	}
	for _, tc := range kinds {
		if got := tc.k.String(); got != tc.want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(tc.k), got, tc.want)
		}
	}
	verdicts := []struct {
		v    watchdog.Verdict
		want string
	}{
		{watchdog.OK, "ok"}, {watchdog.Stalled, "stalled"}, {watchdog.SlowThroughput, "slow_throughput"},
		{watchdog.FirstTokenTimeout, "first_token_timeout"}, {watchdog.DeadlineExceeded, "deadline_exceeded"},
		{watchdog.Verdict(-1), "verdict(-1)"},
	}
	for _, tc := range verdicts {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("Verdict(%d).String() = %q, want %q", int(tc.v), got, tc.want)
		}
	}
	if (watchdog.Frame{}).Kind != watchdog.Unknown {
		t.Error("the zero Frame must be Unknown, never progress")
	}
}

// TestConcurrentUse runs Observe, Check and NextCheck from several goroutines (for
// the race detector); the goroutines finish before the test returns.
func TestConcurrentUse(t *testing.T) {
	w := watchdog.New(withThroughput(), t0())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				now := t0().Add(time.Duration(i) * 100 * ms)
				switch g {
				case 0:
					w.Observe(watchdog.Frame{Kind: watchdog.Content, Bytes: 3}, now)
				case 1:
					w.Observe(watchdog.Frame{Kind: watchdog.Heartbeat}, now)
				case 2:
					_ = w.Check(now)
				default:
					_ = w.NextCheck(now)
					_ = w.SawContent()
				}
			}
		})
	}
	wg.Wait()
	if !w.SawContent() {
		t.Fatal("content observed concurrently was lost")
	}
}

// BenchmarkObserveCheck is the per-frame cost for a streaming caller.
func BenchmarkObserveCheck(b *testing.B) {
	w := watchdog.New(withThroughput(), t0())
	now := t0()
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(10 * ms)
		w.Observe(watchdog.Frame{Kind: watchdog.Content, Bytes: 4}, now)
		_ = w.Check(now)
		_ = w.NextCheck(now)
	}
}

// TestFirstTokenQuiet: the quiet first-token limit fires when no frame of
// any kind has come for the limit before the first progress frame (limit −
// 1 ms OK, the limit and + 1 ms FirstTokenTimeout), counted from the latest
// heartbeat, comment or metadata frame; reasoning every few seconds for far
// longer than the limit is never cut by it, and text ends it.
func TestFirstTokenQuiet(t *testing.T) {
	q := stallOnly()
	q.FirstTokenQuiet = 30 * sec
	tests := []struct {
		name  string
		steps []step
	}{
		{"from the start", []step{chk(30*sec-ms, watchdog.OK), chk(30*sec, watchdog.FirstTokenTimeout), chk(30*sec+ms, watchdog.FirstTokenTimeout)}},
		{"from the latest heartbeat", script(
			every(0, 50*sec, 10*sec, watchdog.Heartbeat, 0),
			[]step{chk(80*sec-ms, watchdog.OK), chk(80*sec, watchdog.FirstTokenTimeout), chk(80*sec+ms, watchdog.FirstTokenTimeout)},
		)},
		{"from the latest metadata", script(
			[]step{obs(12*sec, watchdog.Metadata, 0)},
			[]step{chk(42*sec-ms, watchdog.OK), chk(42*sec+ms, watchdog.FirstTokenTimeout)},
		)},
		{"thinking every 4 s for 100 s is never cut", script(
			every(4*sec, 100*sec, 4*sec, watchdog.Reasoning, 0),
			checks(0, 100*sec, 500*ms, watchdog.OK),
			[]step{obs(101*sec, watchdog.Content, 5), chk(200*sec, watchdog.OK)},
		)},
		{"text ends it", script(
			[]step{obs(29*sec, watchdog.Content, 5)},
			checks(29*sec, 100*sec, sec, watchdog.OK),
		)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, q, tc.steps) })
	}
	w := run(t, q, script([]step{obs(5*sec, watchdog.Heartbeat, 0), obs(7*sec, watchdog.Content, 3), obs(8*sec, watchdog.Content, 3)}))
	if d, ok := w.FirstContent(); !ok || d != 7*sec {
		t.Fatalf("FirstContent = %v, %v; want 7s", d, ok)
	}
}
