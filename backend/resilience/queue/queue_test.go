package queue

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/config"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "other:" + err.Error()
	}
	return ""
}

func TestCheckAdmission(t *testing.T) {
	for _, tc := range []struct {
		queued, depth int
		want          string
	}{
		{0, 0, ""},
		{100_000, 0, ""}, // 0 = off
		{0, 1, ""},
		{1, 1, CodeQueueFull},
		{4, 5, ""}, // depth-1
		{5, 5, CodeQueueFull},
		{6, 5, CodeQueueFull},
	} {
		if got := code(CheckAdmission(tc.queued, tc.depth)); got != tc.want {
			t.Errorf("CheckAdmission(%d, %d) = %q, want %q", tc.queued, tc.depth, got, tc.want)
		}
	}
}

func TestCheckPause(t *testing.T) {
	now := time.Unix(1_000, 0)
	pause := now.Add(5 * time.Second)
	for _, tc := range []struct {
		name     string
		paused   time.Time
		deadline time.Time
		want     string
	}{
		{"no pause", time.Time{}, now.Add(time.Millisecond), ""},
		{"pause over", now.Add(-time.Millisecond), now.Add(time.Millisecond), ""},
		{"budget ends 1ms before the pause", pause, pause.Add(-time.Millisecond), CodeQueueTimeout},
		{"budget ends with the pause", pause, pause, ""},
		{"budget ends 1ms after the pause", pause, pause.Add(time.Millisecond), ""},
	} {
		if got := code(CheckPause(now, tc.paused, tc.deadline)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	var e *Error
	if errors.As(CheckPause(now, pause, now), &e); e.RetryAfter != 5*time.Second {
		t.Errorf("RetryAfter = %v, want the pause's 5s", e.RetryAfter)
	}
}

func i64(v int64) *int64 { return &v }

// Precedence for both waits: env supplies the default, a persisted value wins
// over it, a per-connection override wins over both; all clamp to 1 ms–24 h.
func TestPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		persisted map[string]any
		over      Overrides
		wantWait  time.Duration
		wantExec  time.Duration
		wantDepth int
	}{
		{"defaults", nil, nil, Overrides{}, 30 * time.Second, 10 * time.Minute, 0},
		{"env", map[string]string{"RATE_LIMIT_MAX_WAIT_MS": "5000", "RATE_LIMIT_EXECUTION_MAX_WAIT_MS": "7000", "RATE_LIMIT_MAX_QUEUE_DEPTH": "3"},
			nil, Overrides{}, 5 * time.Second, 7 * time.Second, 3},
		{"persisted beats env", map[string]string{"RATE_LIMIT_MAX_WAIT_MS": "5000", "RATE_LIMIT_EXECUTION_MAX_WAIT_MS": "7000", "RATE_LIMIT_MAX_QUEUE_DEPTH": "3"},
			map[string]any{"requestQueue": map[string]any{"maxWaitMs": 6000, "executionMaxWaitMs": 8000, "maxQueueDepth": 4}},
			Overrides{}, 6 * time.Second, 8 * time.Second, 4},
		{"override beats both", map[string]string{"RATE_LIMIT_MAX_WAIT_MS": "5000", "RATE_LIMIT_EXECUTION_MAX_WAIT_MS": "7000"},
			map[string]any{"requestQueue": map[string]any{"maxWaitMs": 6000, "executionMaxWaitMs": 8000}},
			Overrides{MaxWaitMs: i64(100), ExecutionMaxWaitMs: i64(200)}, 100 * time.Millisecond, 200 * time.Millisecond, 0},
		{"override 0 clamps to 1ms", nil, nil, Overrides{MaxWaitMs: i64(0), ExecutionMaxWaitMs: i64(0)}, time.Millisecond, time.Millisecond, 0},
		{"override 25h clamps to 24h", nil, nil, Overrides{MaxWaitMs: i64(25 * 3600_000), ExecutionMaxWaitMs: i64(25 * 3600_000)}, 24 * time.Hour, 24 * time.Hour, 0},
		{"env over range clamps", map[string]string{"RATE_LIMIT_MAX_WAIT_MS": "90000000", "RATE_LIMIT_MAX_QUEUE_DEPTH": "200000"}, nil, Overrides{}, 24 * time.Hour, 10 * time.Minute, 100_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := config.ResolveResilience(func(k string) string { return tc.env[k] }, tc.persisted)
			if err != nil {
				t.Fatal(err)
			}
			q := r.RequestQueue
			s := Effective(Settings{MaxWait: time.Duration(q.MaxWaitMs) * time.Millisecond,
				ExecutionMaxWait: time.Duration(q.ExecutionMaxWaitMs) * time.Millisecond, MaxDepth: q.MaxQueueDepth}, tc.over)
			if s.MaxWait != tc.wantWait || s.ExecutionMaxWait != tc.wantExec || s.MaxDepth != tc.wantDepth {
				t.Fatalf("got wait %v exec %v depth %d, want %v %v %d", s.MaxWait, s.ExecutionMaxWait, s.MaxDepth, tc.wantWait, tc.wantExec, tc.wantDepth)
			}
		})
	}
}

func TestInterval(t *testing.T) {
	for _, tc := range []struct {
		rpm  float64
		min  time.Duration
		want time.Duration
	}{
		{0, 0, 0},
		{60, 0, time.Second},
		{120, 0, 500 * time.Millisecond},
		{60, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{60, 200 * time.Millisecond, time.Second},
		{0, 250 * time.Millisecond, 250 * time.Millisecond},
	} {
		if got := Interval(tc.rpm, tc.min); got != tc.want {
			t.Errorf("Interval(%v, %v) = %v, want %v", tc.rpm, tc.min, got, tc.want)
		}
	}
}

func TestEnterLeaveDepth(t *testing.T) {
	q := &Queue{}
	for i := 0; i < 2; i++ {
		if err := q.Enter(2); err != nil {
			t.Fatalf("enter %d with depth 2: %v", i, err)
		}
	}
	if got := code(q.Enter(2)); got != CodeQueueFull {
		t.Fatalf("third enter = %q, want RATE_LIMIT_QUEUE_FULL", got)
	}
	q.Leave()
	if err := q.Enter(2); err != nil {
		t.Fatalf("enter after a leave: %v", err)
	}
	q.Leave()
	q.Leave()
	if q.Queued() != 0 {
		t.Fatalf("queued = %d, want 0", q.Queued())
	}
}

// Pacing at 100 ms: turns come exactly 100 ms apart; a caller whose turn
// comes 1 ms after its deadline is refused at once, one whose turn comes at
// its deadline waits for it.
func TestPaceBoundaries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{}
		ctx := context.Background()
		t0 := time.Now()
		const iv = 100 * time.Millisecond
		if w, err := q.Pace(ctx, t0, t0.Add(time.Second), iv); err != nil || w != 0 || time.Since(t0) != 0 {
			t.Fatalf("first turn: %v after %v (reported %v)", err, time.Since(t0), w)
		}
		if w, err := q.Pace(ctx, t0, t0.Add(time.Second), iv); err != nil || w != iv || time.Since(t0) != iv {
			t.Fatalf("second turn: %v after %v (reported %v), want exactly %v", err, time.Since(t0), w, iv)
		}
		now := time.Now() // next turn at t0+200ms = now+100ms
		if _, err := q.Pace(ctx, now, now.Add(iv-time.Millisecond), iv); code(err) != CodeQueueTimeout || time.Since(now) != 0 {
			got := code(err)
			t.Fatalf("turn 1ms past the budget: %q after %v, want an immediate queue timeout", got, time.Since(now))
		}
		if _, err := q.Pace(ctx, now, now.Add(iv), iv); err != nil || time.Since(now) != iv {
			t.Fatalf("turn at the budget: %v after %v", err, time.Since(now))
		}
	})
}

// A body-declared pause: a caller whose budget ends 1 ms before the pause is
// refused at once; one whose budget ends 1 ms after waits for the pause.
func TestPauseBoundaries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{}
		ctx := context.Background()
		now := time.Now()
		q.Pause(now.Add(500 * time.Millisecond))
		if _, err := q.Pace(ctx, now, now.Add(499*time.Millisecond), 0); code(err) != CodeQueueTimeout || time.Since(now) != 0 {
			got := code(err)
			t.Fatalf("budget ends before the pause: %q after %v", got, time.Since(now))
		}
		if w, err := q.Pace(ctx, now, now.Add(501*time.Millisecond), 0); err != nil || w != 500*time.Millisecond || time.Since(now) != 500*time.Millisecond {
			t.Fatalf("budget ends after the pause: %v after %v", err, time.Since(now))
		}
	})
}

// A caller that goes away while paced gives its turn back.
func TestCancelledTurnReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{}
		t0 := time.Now()
		const iv = 100 * time.Millisecond
		_, _ = q.Pace(context.Background(), t0, t0.Add(time.Second), iv) // takes the t0 turn
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { _, err := q.Pace(ctx, t0, t0.Add(time.Second), iv); errc <- err }() // would get t0+100ms
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled caller: %v", err)
		}
		if _, err := q.Pace(context.Background(), time.Now(), t0.Add(time.Second), iv); err != nil || time.Since(t0) != iv {
			t.Fatalf("next caller: %v after %v, want the returned turn at %v", err, time.Since(t0), iv)
		}
	})
}

// WatchPause tells a registered watcher of each new or longer pause (never of
// a shorter one), and nothing after stop.
func TestWatchPause(t *testing.T) {
	q := &Queue{}
	now := time.Unix(1_000, 0)
	var got []time.Duration
	stop := q.WatchPause(func(until time.Time) { got = append(got, until.Sub(now)) })
	q.Pause(now.Add(2 * time.Second))
	q.Pause(now.Add(time.Second)) // shorter: the pause stands, nobody is told
	q.Pause(now.Add(3 * time.Second))
	stop()
	q.Pause(now.Add(4 * time.Second))
	if len(got) != 2 || got[0] != 2*time.Second || got[1] != 3*time.Second {
		t.Fatalf("watcher told %v, want [2s 3s]", got)
	}
	if q.PausedUntil() != now.Add(4*time.Second) {
		t.Fatalf("paused until %v", q.PausedUntil())
	}
}
