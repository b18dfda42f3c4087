// Package claude wraps the Anthropic executor for Claude subscription (OAuth)
// connections with the usage wall of guide §2: the low-priority lane
// (anthropic-usage-limit: slow, same-account retries and slot_busy waits) and
// the session limit reset claim. The decisions are package wall's; this
// package does the I/O: headers, retries, waits and the reset endpoints.
//
// It wraps the whole inner executor, so the wall check runs after any retry
// the inner executor makes on its own (the guide's 400 retries).
package claude

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/wall"
)

// maxLoops bounds the retries of one call (each wait is ≥ 3.5 s and the total
// is bounded by max-wait, so this is only a safety net).
const maxLoops = 400

// maxWallBody bounds the wall 429 body kept to pass it on after a failed reset.
const maxWallBody = 64 << 10

// Executor is the wall-aware executor.
type Executor struct {
	next  providers.Executor
	table *wall.Table
	clk   clock.Clock
	reset *ResetClient
	// Sleep waits d or until ctx ends (tests replace it to advance a fake clock).
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a uniform number in [0, 1) for the wait jitter.
	Rand func() float64
	// Observe, when set, hears the headers of every answer the wall consumes
	// itself (a wall 429, a slot_busy wait), which the caller never sees: they
	// carry the usage windows.
	Observe func(t providers.Target, h http.Header)
	// OnChange, when set, hears each change of a connection's wall state with
	// the transition that made it (offer_accepted, max_wait, weekly_limit,
	// reset_<result>, …), for the dashboard's live view.
	OnChange func(connID, transition string)
}

// New wraps next. table holds the per-connection wall state.
func New(next providers.Executor, table *wall.Table, clk clock.Clock, reset *ResetClient) *Executor {
	return &Executor{next: next, table: table, clk: clk, reset: reset, Sleep: sleepCtx, Rand: rand.Float64}
}

// Applies reports whether a target is a Claude subscription connection.
func Applies(t providers.Target) bool { return t.Provider.ID == ID && t.AuthType == "oauth" }

// Do sends the call, in the lane when the connection is in it, and follows
// the wall's decisions until a response is to be handed on.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	if !Applies(*t) {
		return e.next.Do(ctx, t, c)
	}
	set := wall.Settings{LowPriority: t.Account.LowPriorityMode, AutoReset: t.Account.AutoLimitReset}
	var waited time.Duration
	resetTried := false
	for range maxLoops {
		now := e.clk.Now()
		slow := set.LowPriority && e.table.Get(t.ConnectionID).InLane(now)
		call := c
		if slow {
			call.Header = c.Header.Clone()
			if call.Header == nil {
				call.Header = http.Header{}
			}
			call.Header.Set(wall.HeaderUsageLimit, "slow")
		}
		resp, err := e.next.Do(ctx, t, call)
		if err != nil || (!set.LowPriority && !set.AutoReset) {
			return resp, err
		}
		sig := wall.Parse(resp.StatusCode, resp.Header.Get)
		req := wall.Request{SentSlow: slow, Waited: waited, ResetTried: resetTried, Jitter: e.Rand()}
		if !c.FirstByteDeadline.IsZero() {
			req.FirstByteLeft = max(c.FirstByteDeadline.Sub(now), time.Nanosecond)
		}
		var d wall.Decision
		e.update(t.ConnectionID, func(s wall.State) (wall.State, string) {
			s, d = wall.Decide(s, set, sig, req, now)
			return s, d.Reason
		})
		if d.Action != wall.Pass && e.Observe != nil {
			e.Observe(*t, resp.Header)
		}
		switch d.Action {
		case wall.Pass:
			return resp, nil
		case wall.RetrySlow:
			drain(resp)
		case wall.Wait:
			drain(resp)
			if err := e.Sleep(ctx, d.Wait); err != nil {
				return nil, err
			}
			waited += d.Wait
		case wall.ClaimReset:
			resp = keep(resp)
			resetTried = true
			out := e.reset.Claim(ctx, *t)
			var full bool
			e.update(t.ConnectionID, func(s wall.State) (wall.State, string) {
				s, full = wall.AfterReset(s, out, e.clk.Now())
				return s, "reset_" + s.ResetResult
			})
			if full {
				drain(resp)
				continue
			}
			// The reset is not to be had: the same wall answer goes to the lane decision.
			req.ResetTried = true
			e.update(t.ConnectionID, func(s wall.State) (wall.State, string) {
				s, d = wall.Decide(s, set, sig, req, e.clk.Now())
				return s, d.Reason
			})
			if d.Action != wall.RetrySlow {
				return resp, nil
			}
			drain(resp)
		}
	}
	return nil, context.DeadlineExceeded
}

// update applies f to a connection's wall state and reports a change.
func (e *Executor) update(id string, f func(wall.State) (wall.State, string)) {
	var before wall.State
	var reason string
	after := e.table.Update(id, func(s wall.State) wall.State {
		before = s
		s, reason = f(s)
		return s
	})
	if after != before && e.OnChange != nil {
		e.OnChange(id, reason)
	}
}

// drain discards and closes a response that will not be handed on.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxWallBody))
	_ = resp.Body.Close()
}

// keep buffers a small response so it can still be handed on later.
func keep(resp *http.Response) *http.Response {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxWallBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
