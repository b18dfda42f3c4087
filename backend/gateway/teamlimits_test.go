package gateway

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/resilience/gate"
	"omniroute/backend/resilience/queue"
	"omniroute/backend/routing"
)

// fakeTeam answers as the shared limits would.
type fakeTeam struct {
	slotOK       bool
	released     atomic.Int32
	shared       bool
	refusedUntil time.Time
	keys         []string
	full         string // the limit SlotPair names full
}

func (f *fakeTeam) Slot(_ context.Context, id string, _ int, _ time.Time) (func(), bool, error) {
	f.keys = append(f.keys, id)
	if !f.slotOK {
		return nil, false, nil
	}
	return func() { f.released.Add(1) }, true, nil
}

func (f *fakeTeam) SlotPair(_ context.Context, a string, _ int, b string, _ int, _ time.Time) (func(), bool, string, error) {
	f.keys = append(f.keys, a, b)
	if !f.slotOK {
		return nil, false, f.full, nil
	}
	return func() { f.released.Add(1) }, true, "", nil
}

func (f *fakeTeam) Pace(context.Context, string, time.Duration, time.Time, time.Time) (time.Duration, time.Time, bool, error) {
	return 0, f.refusedUntil, f.shared, nil
}

// TestTeamLimitRefusals: a team-wide slot that does not come free answers as
// the gate does (SEMAPHORE_TIMEOUT, or RATE_LIMIT_QUEUE_TIMEOUT on a
// protected connection) and gives the instance's gate permit back; a full
// team-wide queue is RATE_LIMIT_QUEUE_FULL; a team-wide pacing turn past the
// budget is RATE_LIMIT_QUEUE_TIMEOUT with its Retry-After; without the
// database pacing falls back to the instance's queue.
func TestTeamLimitRefusals(t *testing.T) {
	now := time.Unix(1_000, 0)
	cand := routing.Candidate{Conn: &routing.Conn{ID: "c1"}, Model: "m"}
	code := func(err error) string {
		var e *errs.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return ""
	}
	for _, protected := range []bool{false, true} {
		gt := gate.New()
		g := &Gateway{team: &fakeTeam{}, clk: clock.NewFake(now), gate: gt}
		a := &admission{protected: protected, settings: queue.Settings{MaxWait: time.Second}}
		key := gate.Key{Name: "account:c1", Limit: 1}
		if !gt.TryAcquireInto(&a.held, []gate.Key{key}) {
			t.Fatal("no local permit")
		}
		a.permit = &a.held
		err := g.teamSlot(context.Background(), a, "c1", key, now.Add(time.Second), "r")
		want := gate.CodeTimeout
		if protected {
			want = queue.CodeQueueTimeout
		}
		if code(err) != want || !gt.Idle() {
			t.Fatalf("protected %v: %v (gate idle %v); want %s and the permit given back", protected, err, gt.Idle(), want)
		}
	}

	ft := &fakeTeam{slotOK: true}
	g := &Gateway{team: ft, clk: clock.NewFake(now)}
	a := &admission{settings: queue.Settings{MaxWait: time.Second}}
	if err := g.teamSlot(context.Background(), a, "c1", gate.Key{Name: "account:c1", Limit: 1}, now.Add(time.Second), "r"); err != nil {
		t.Fatal(err)
	}
	// A modelConcurrency cap: a second slot on the same admission, under
	// the model's own name; both go back with the admission.
	if err := g.teamSlot(context.Background(), a, TeamModelKey("c1", "m"), gate.Key{Name: "model:c1/m", Limit: 1}, now.Add(time.Second), "r"); err != nil {
		t.Fatal(err)
	}
	if len(ft.keys) != 2 || ft.keys[1] != "model|c1|m" {
		t.Fatalf("slots asked under %v, want the connection's then the model's", ft.keys)
	}
	a.release()
	deadline := time.Now().Add(5 * time.Second)
	for ft.released.Load() != 2 { // released off this goroutine
		if time.Now().After(deadline) {
			t.Fatal("the team slot was never released")
		}
		time.Sleep(time.Millisecond) // poll interval
	}

	g = &Gateway{team: &fakeTeam{}, clk: clock.NewFake(now)}
	leave, err := g.teamQueue(context.Background(), cand, 3, now)
	if leave != nil || code(err) != queue.CodeQueueFull || errs.As(err).RetryAfter < time.Second {
		t.Fatalf("a full team-wide queue: %v", err)
	}
	if got := g.team.(*fakeTeam).keys; len(got) != 1 || got[0] != TeamQueueKey("c1") {
		t.Fatalf("queue tickets asked under %v, want %q", got, TeamQueueKey("c1"))
	}

	g = &Gateway{team: &fakeTeam{shared: true, refusedUntil: now.Add(7 * time.Second)}, clk: clock.NewFake(now)}
	a = &admission{q: &queue.Queue{}, settings: queue.Settings{MaxWait: time.Second, Interval: 10 * time.Second}}
	_, err = g.pace(context.Background(), a, cand, now, now.Add(time.Second))
	if code(queueError(err)) != queue.CodeQueueTimeout || errs.As(queueError(err)).RetryAfter != 7*time.Second {
		t.Fatalf("a team-wide turn past the budget: %v", err)
	}
	// Not shared (the database is away): the instance's own queue paces —
	// its first turn is free, the second one interval later, past the budget.
	g = &Gateway{team: &fakeTeam{shared: false}, clk: clock.NewFake(now)}
	if _, err := g.pace(context.Background(), a, cand, now, now.Add(time.Second)); err != nil {
		t.Fatalf("local pacing, first turn: %v", err)
	}
	if _, err := g.pace(context.Background(), a, cand, now, now.Add(time.Second)); code(queueError(err)) != queue.CodeQueueTimeout {
		t.Fatalf("local pacing, second turn within the interval: %v", err)
	}
}

// TestTeamSlotPair: a connection's maxConcurrent and a model's cap on it
// are asked together (one SlotPair, the connection's slots then the
// model's); a refusal names the limit found full and gives the gate's
// permit back; the pair goes back with the admission in one release.
func TestTeamSlotPair(t *testing.T) {
	now := time.Unix(1_000, 0)
	connKey, modelKey := gate.Key{Name: "account:c1", Limit: 2}, gate.Key{Name: "model:c1/m", Limit: 1}
	for _, full := range []string{"c1", TeamModelKey("c1", "m")} {
		gt := gate.New()
		g := &Gateway{team: &fakeTeam{full: full}, clk: clock.NewFake(now), gate: gt}
		a := &admission{settings: queue.Settings{MaxWait: time.Second}}
		if !gt.TryAcquireInto(&a.held, []gate.Key{connKey, modelKey}) {
			t.Fatal("no local permit")
		}
		a.permit = &a.held
		err := g.teamSlotPair(context.Background(), a, "c1", TeamModelKey("c1", "m"), connKey, modelKey, now.Add(time.Second))
		want := connKey.Name
		if full != "c1" {
			want = modelKey.Name
		}
		e := errs.As(err)
		if e == nil || e.Code != gate.CodeTimeout || !strings.Contains(e.Message, want) || !gt.Idle() {
			t.Fatalf("full %q: %v (gate idle %v); want %s naming %s and the permit given back", full, err, gt.Idle(), gate.CodeTimeout, want)
		}
	}
	ft := &fakeTeam{slotOK: true}
	g := &Gateway{team: ft, clk: clock.NewFake(now)}
	a := &admission{settings: queue.Settings{MaxWait: time.Second}}
	if err := g.teamSlotPair(context.Background(), a, "c1", TeamModelKey("c1", "m"), connKey, modelKey, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(ft.keys) != 2 || ft.keys[0] != "c1" || ft.keys[1] != "model|c1|m" {
		t.Fatalf("slots asked under %v, want the connection's and the model's in one pair", ft.keys)
	}
	a.release()
	deadline := time.Now().Add(5 * time.Second)
	for ft.released.Load() != 1 { // released off this goroutine
		if time.Now().After(deadline) {
			t.Fatal("the pair was never released")
		}
		time.Sleep(time.Millisecond) // poll interval
	}
}
