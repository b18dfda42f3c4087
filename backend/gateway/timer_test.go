package gateway

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/providers"
	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// contentEvent is an upstream chat chunk with model output: progress.
var contentEvent = sse.Event{Data: []byte(`{"choices":[{"index":0,"delta":{"content":"word "}}]}`)}

// timerGateway is a gateway whose streams have a 1 s stall budget (the
// watchdog's smallest) and no other watchdog limit.
func timerGateway() *Gateway {
	gen := config.DefaultGeneral()
	gen.StreamIdleTimeoutMs, gen.FirstTokenTimeoutMs, gen.AttemptDeadlineMs = 1000, 0, 0
	res := config.DefaultResilience(func(string) string { return "" })
	return New(Deps{General: func() *config.General { return &gen }, Resilience: func() *config.Resilience { return &res }})
}

// timedAttempt starts an attempt's timer with first-byte deadline fb.
func timedAttempt(g *Gateway, fb time.Duration) *attemptCtx {
	a := &attemptCtx{g: g, req: &request{}}
	a.ctx, a.cancel = context.WithCancelCause(context.Background())
	a.startTimer(fb, false)
	return a
}

// cause waits for every timer due now to have run, then reads the attempt's
// cancellation cause.
func cause(a *attemptCtx) error {
	synctest.Wait()
	return context.Cause(a.ctx)
}

// TestAttemptTimerFirstByteBoundary: the first-byte deadline cancels the
// attempt at exactly fb, not 1 ns before; once the first byte came, never.
func TestAttemptTimerFirstByteBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := timerGateway()
		a := timedAttempt(g, 3*time.Second)
		time.Sleep(3*time.Second - time.Nanosecond)
		if err := cause(a); err != nil {
			t.Fatalf("at fb−1ns: cause %v, want none", err)
		}
		time.Sleep(time.Nanosecond)
		if err := cause(a); err != errFirstByteTimeout {
			t.Fatalf("at fb: cause %v, want the first-byte timeout", err)
		}
		a.stopTimer()

		b := timedAttempt(g, 3*time.Second)
		time.Sleep(time.Second)
		b.firstByteDone()
		time.Sleep(time.Hour)
		if err := cause(b); err != nil {
			t.Fatalf("first byte in time: cause %v, want none", err)
		}
		b.stopTimer()
	})
}

// TestAttemptTimerServesFirstByteAndWatchdog: one timer keeps both duties of
// a stream. With the first byte due after the stall budget the watchdog
// ends the attempt at its budget exactly; with it due before, the first-byte
// deadline does; once progress came, the stall budget runs from it.
func TestAttemptTimerServesFirstByteAndWatchdog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := timerGateway()
		stream := func(fb time.Duration) *attemptCtx {
			a := timedAttempt(g, fb)
			a.codec = newCodec(translate.Chat, providers.FormatOpenAI)
			s := &a.stream
			*s = streamState{a: a}
			s.watchVal.Init(g.watchConfig(), g.wall.Now())
			s.watch = &s.watchVal
			s.armWatchdog()
			return a
		}
		for _, c := range []struct {
			name string
			fb   time.Duration
			at   time.Duration
			want error
		}{
			{"stall budget first", 3 * time.Second, time.Second, errStalled},
			{"first byte first", 500 * time.Millisecond, 500 * time.Millisecond, errFirstByteTimeout},
		} {
			a := stream(c.fb)
			time.Sleep(c.at - time.Nanosecond)
			if err := cause(a); err != nil {
				t.Fatalf("%s: 1 ns early: cause %v", c.name, err)
			}
			time.Sleep(time.Nanosecond)
			if err := cause(a); err != c.want {
				t.Fatalf("%s: cause %v, want %v", c.name, err, c.want)
			}
			a.stopTimer()
		}

		// Progress at 400 ms ends the first-byte duty; the stall budget
		// then runs from that frame: due at 1.4 s.
		a := stream(500 * time.Millisecond)
		time.Sleep(400 * time.Millisecond)
		a.stream.handle(contentEvent)
		a.firstByteDone()
		time.Sleep(time.Second - time.Nanosecond)
		if err := cause(a); err != nil {
			t.Fatalf("progress kept it alive: cause %v", err)
		}
		time.Sleep(time.Nanosecond)
		if err := cause(a); err != errStalled {
			t.Fatalf("cause %v, want the stall", err)
		}
		a.stopTimer()
	})
}

// TestAttemptTimerReuseActsForItsOwner: a timer given back and taken by the
// next attempt keeps that attempt's deadline only: the earlier owner's
// schedule neither fires early nor cancels the new owner, and a stopped
// attempt is never cancelled afterwards.
func TestAttemptTimerReuseActsForItsOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := timerGateway()
		first := timedAttempt(g, 100*time.Millisecond)
		time.Sleep(50 * time.Millisecond)
		first.stopTimer()
		first.stopTimer() // twice: still given back once
		next := timedAttempt(g, 2*time.Second)
		time.Sleep(2*time.Second - time.Nanosecond)
		if err := cause(next); err != nil {
			t.Fatalf("next attempt: cause %v before its own deadline", err)
		}
		if err := cause(first); err != nil {
			t.Fatalf("stopped attempt cancelled: %v", err)
		}
		time.Sleep(time.Nanosecond)
		if err := cause(next); err != errFirstByteTimeout {
			t.Fatalf("next attempt: cause %v, want its first-byte timeout", err)
		}
		next.stopTimer()
	})
}
