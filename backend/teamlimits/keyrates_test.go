package teamlimits

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

// TestKeyRPMAcrossInstances: a key limited to 6 requests per minute, three
// instances asking every second for two minutes (injected clock): exactly 6
// admitted in the first minute, the seventh refused with the Retry-After of
// the first place (free exactly a minute after it was taken, not 1 ms
// before), 6 in the second minute; an undone place is free at once.
func TestKeyRPMAcrossInstances(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	insts := []*Limits{New(st, clk, "A", roomy()), New(st, clk, "B", roomy()), New(st, clk, "C", roomy())}
	var admitted []int
	for i := range 120 {
		_, retry, ok, shared := insts[i%3].KeyRequest("k", 6)
		if !shared {
			t.Fatal("not shared")
		}
		if ok {
			admitted = append(admitted, i)
		} else if i == 6 && retry != 54*time.Second {
			t.Fatalf("the 7th request's Retry-After = %v, want 54s (the first place frees at 60 s)", retry)
		}
		if i == 59 { // 1 ms before the first place's minute ends
			clk.Advance(time.Second - time.Millisecond)
			if _, _, ok, _ := insts[0].KeyRequest("k", 6); ok {
				t.Fatal("admitted 1 ms before the first place's minute ended")
			}
			clk.Advance(time.Millisecond)
			continue
		}
		clk.Advance(time.Second)
	}
	want := []int{0, 1, 2, 3, 4, 5, 60, 61, 62, 63, 64, 65}
	if len(admitted) != len(want) {
		t.Fatalf("admitted at seconds %v, want %v", admitted, want)
	}
	for i := range want {
		if admitted[i] != want[i] {
			t.Fatalf("admitted at seconds %v, want %v", admitted, want)
		}
	}
	// Another key has its own window; an undone place frees at once.
	hold, _, ok, _ := insts[0].KeyRequest("k2", 1)
	if !ok || hold == 0 {
		t.Fatal("k2 refused")
	}
	insts[2].UndoKeyRequest("k2", hold)
	if _, _, ok, _ := insts[1].KeyRequest("k2", 1); !ok {
		t.Fatal("an undone place was not given back")
	}
	// Renewing an instance's slots does not stretch its keys' windows.
	clk.Advance(59 * time.Second)
	insts[1].held.Store(1)
	insts[1].Tick()
	clk.Advance(time.Second)
	if _, _, ok, _ := insts[2].KeyRequest("k2", 1); !ok {
		t.Fatal("a renewal stretched a key's minute window")
	}
}

// TestKeyTPMAcrossInstances: 100 tokens per minute across two instances:
// requests holding 40 tokens are admitted while the window counts under
// 100 (the one crossing it too: 0, 40, 80 → three), the next is refused
// until the oldest tokens leave the window; a settled request counts what
// its answer used, an unserved one nothing.
func TestKeyTPMAcrossInstances(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	a, b := New(st, clk, "A", roomy()), New(st, clk, "B", roomy())
	var holds []int64
	for i := range 3 {
		l := []*Limits{a, b}[i%2]
		h, _, ok, shared := l.KeyTokens("k", 100, 40)
		if !ok || !shared || h == 0 {
			t.Fatalf("request %d refused (shared %v)", i, shared)
		}
		holds = append(holds, h)
		clk.Advance(time.Second)
	}
	if _, retry, ok, _ := b.KeyTokens("k", 100, 1); ok || retry != 57*time.Second {
		t.Fatalf("at 120 of 100: ok %v, Retry-After %v; want refused for 57s", ok, retry)
	}
	a.SettleKeyTokens("k", holds[0], 0) // not served
	b.SettleKeyTokens("k", holds[1], 0)
	a.SettleKeyTokens("k", holds[2], 10) // served: 10 tokens
	if _, _, ok, _ := b.KeyTokens("k", 100, 1); !ok {
		t.Fatal("refused at 10 of 100 after the settlements")
	}
}

// TestKeyRatesFailOpen: a database that does not answer counts nothing
// (shared false): the instance's own windows apply alone; "instance" too.
func TestKeyRatesFailOpen(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	l := New(&down{st}, clk, "A", roomy())
	if _, _, ok, shared := l.KeyRequest("k", 1); !ok || shared {
		t.Fatalf("database down: ok %v shared %v", ok, shared)
	}
	if _, _, ok, shared := l.KeyTokens("k", 1, 1); !ok || shared {
		t.Fatalf("database down: ok %v shared %v", ok, shared)
	}
	if th, rh, _, tf, rf, shared := l.KeyRates("k", 1, 1, 1); th != 0 || rh != 0 || tf || rf || shared {
		t.Fatalf("database down: both windows %d %d %v %v shared %v", th, rh, tf, rf, shared)
	}
	p := New(st, clk, "B", Options{Shared: func() bool { return false }})
	if _, _, ok, shared := p.KeyRequest("k", 1); !ok || shared {
		t.Fatalf("per instance: ok %v shared %v", ok, shared)
	}
}

// down fails every key-rate statement.
type down struct{ *flaky }

func (d *down) AcquireSlot(context.Context, string, int, string, int64, int64) (store.Slot, bool, error) {
	return store.Slot{}, false, errDown
}

func (d *down) TakeKeyTokens(context.Context, string, int64, int64, int64, int64) (store.TokenTake, error) {
	return store.TokenTake{}, errDown
}

func (d *down) TakeKeyRates(context.Context, string, string, int64, int64, int64, int64, int64) (store.KeyRatesTake, error) {
	return store.KeyRatesTake{}, errDown
}

// TestKeyRatesBothWindowsAcrossInstances: a key with both limits (3 rpm,
// 25 tokens per minute) asked through three instances in one statement
// each: admitted in both windows or neither. Requests of 5 tokens: the
// RPM window refuses the fourth (Retry-After until the first place frees),
// its TPM window untouched; an undone request frees both; requests of 10
// tokens: the TPM window refuses once it counts 25 (the crossing request
// admitted), its RPM window untouched.
func TestKeyRatesBothWindowsAcrossInstances(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	insts := []*Limits{New(st, clk, "A", roomy()), New(st, clk, "B", roomy()), New(st, clk, "C", roomy())}
	type take struct{ tokens, request int64 }
	var took []take
	for i := range 3 {
		th, rh, _, tpmFull, rpmFull, shared := insts[i].KeyRates("k", 3, 25, 5)
		if !shared || tpmFull || rpmFull || th == 0 || rh == 0 {
			t.Fatalf("request %d: holds %d %d, full tpm %v rpm %v, shared %v", i, th, rh, tpmFull, rpmFull, shared)
		}
		took = append(took, take{th, rh})
		clk.Advance(time.Second)
	}
	th, rh, retry, tpmFull, rpmFull, _ := insts[0].KeyRates("k", 3, 25, 5)
	if th != 0 || rh != 0 || tpmFull || !rpmFull || retry != 57*time.Second {
		t.Fatalf("the 4th request: holds %d %d, full tpm %v rpm %v, Retry-After %v; want refused by RPM for 57s", th, rh, tpmFull, rpmFull, retry)
	}
	// The TPM window counts the three admitted (15), not the refused one.
	if _, _, ok, _ := insts[1].KeyTokens("k", 16, 1); !ok {
		t.Fatal("the TPM window counted the request the RPM window refused")
	}
	insts[1].SettleKeyTokens("k", took[0].tokens, 0)
	insts[1].UndoKeyRequest("k", took[0].request)
	th, rh, _, _, _, _ = insts[2].KeyRates("k", 3, 25, 10)
	if th == 0 || rh == 0 {
		t.Fatal("refused after one request was undone in both windows")
	}
	// Now 3 places taken; with rpm 10 the TPM window decides: it counts
	// 5 + 5 + 1 + 10 = 21 < 25, so one more (the crossing) is admitted, then
	// none.
	if th, _, _, tpmFull, _, _ := insts[0].KeyRates("k", 10, 25, 10); th == 0 || tpmFull {
		t.Fatal("the request crossing the TPM limit was refused")
	}
	th, rh, _, tpmFull, rpmFull, _ = insts[1].KeyRates("k", 10, 25, 10)
	if th != 0 || rh != 0 || !tpmFull || rpmFull {
		t.Fatalf("at 31 of 25 tokens: holds %d %d, full tpm %v rpm %v; want refused by TPM", th, rh, tpmFull, rpmFull)
	}
	if _, _, ok, _ := insts[2].KeyRequest("k", 5); !ok {
		t.Fatal("the RPM window counted the request the TPM window refused (4 places, limit 5)")
	}
}

// TestSweepKeyRates: an idle key's rows (3 places and a settled TPM hold,
// taken at t0) stay until they left their window SweepGrace ago — kept by a
// sweep 1 ms before, gone at exactly t0 + Window + SweepGrace — while a live
// key's rows (taken since) stay and its window still counts exactly: full,
// refused with the Retry-After of its first place, admitted again at that
// place's minute end, not 1 ms before.
func TestSweepKeyRates(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	a, b := New(st, clk, "A", roomy()), New(st, clk, "B", roomy())
	for range 3 {
		if _, _, ok, _ := a.KeyRequest("idle", 3); !ok {
			t.Fatal("idle key refused")
		}
	}
	h, _, ok, _ := a.KeyTokens("idle", 100, 10)
	if !ok {
		t.Fatal("idle key's tokens refused")
	}
	a.SettleKeyTokens("idle", h, 7)
	// The live key takes its 3 places at t0+90 s, +95 s, +100 s.
	clk.Advance(90 * time.Second)
	for i := range 3 {
		if _, _, ok, _ := b.KeyRequest("live", 3); !ok {
			t.Fatalf("live key's request %d refused", i)
		}
		clk.Advance(5 * time.Second)
	}
	// now t0+105 s; the idle rows left their window at t0+60 s.
	rows := func(key string) int64 {
		t.Helper()
		n, err := st.KeyRateRows(key)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	clk.Set(t0.Add(Window + SweepGrace - time.Millisecond))
	if err := b.SweepKeyRates(); err != nil {
		t.Fatal(err)
	}
	if n, m := rows(KeyRPMKey("idle")), rows("idle"); n != 3 || m != 1 {
		t.Fatalf("1 ms before the grace ended the sweep left %d RPM and %d TPM rows of the idle key, want 3 and 1", n, m)
	}
	clk.Advance(time.Millisecond)
	if err := b.SweepKeyRates(); err != nil {
		t.Fatal(err)
	}
	if n, m := rows(KeyRPMKey("idle")), rows("idle"); n != 0 || m != 0 {
		t.Fatalf("the sweep left %d RPM and %d TPM rows of the idle key, want none", n, m)
	}
	if n := rows(KeyRPMKey("live")); n != 3 {
		t.Fatalf("the sweep left %d of the live key's 3 rows", n)
	}
	// now t0+120 s: the live key's window is full until t0+150 s.
	if _, retry, ok, _ := a.KeyRequest("live", 3); ok || retry != 30*time.Second {
		t.Fatalf("after the sweep: ok %v, Retry-After %v; want refused for 30s", ok, retry)
	}
	clk.Set(t0.Add(150*time.Second - time.Millisecond))
	if _, _, ok, _ := a.KeyRequest("live", 3); ok {
		t.Fatal("admitted 1 ms before the live key's first place left its window")
	}
	clk.Advance(time.Millisecond)
	if _, _, ok, _ := a.KeyRequest("live", 3); !ok {
		t.Fatal("refused when the live key's first place left its window")
	}
	if _, _, ok, _ := a.KeyRequest("live", 3); ok {
		t.Fatal("a fourth place in the live key's window")
	}
}

// TestSweepRemovesDeletedConnectionsLimits: the periodic sweep deletes the
// slots and pacing turn of a connection that no longer exists (taken by an
// instance that had not heard of its deletion), keeps a live one's, and the
// late release of a swept slot changes nothing.
func TestSweepRemovesDeletedConnectionsLimits(t *testing.T) {
	st := open(t)
	clk := clock.NewFake(t0)
	a := New(st, clk, "A", roomy())
	if err := st.CreateConnection(&store.Connection{ID: "kept", Provider: "openai", Name: "kept", IsActive: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var releases []func()
	for _, name := range []string{"kept", "gone", "queue|gone", "model|gone|gpt-4o"} {
		release, ok, err := a.Slot(ctx, name, 2, clk.Now().Add(time.Second))
		if err != nil || !ok {
			t.Fatalf("slot %s: %v %v", name, ok, err)
		}
		releases = append(releases, release)
	}
	if _, _, _, err := a.Pace(ctx, "gone", 100*time.Millisecond, clk.Now(), clk.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := a.Sweep(); err != nil {
		t.Fatal(err)
	}
	if n, err := st.LimitRows("gone"); err != nil || n != 0 {
		t.Fatalf("the sweep left %d rows of the deleted connection (%v)", n, err)
	}
	if n, err := st.LimitRows("kept"); err != nil || n != 1 {
		t.Fatalf("the live connection has %d rows (%v), want its slot", n, err)
	}
	for _, release := range releases {
		release()
	}
	if n, _ := st.LimitRows("gone"); n != 0 {
		t.Fatalf("a late release brought back %d rows", n)
	}
}

// heldLock is how long another instance's admission holds the key's lock
// below: past the one second the request path's statements used to be
// given, far under CallTimeout.
const heldLock = 1500 * time.Millisecond

// TestKeyRequestWaitsForAHeldKey: with the default options, a key's request
// waits for the database's decision while another instance's admission
// holds the key's lock (its transaction uncommitted for heldLock): it is
// counted team-wide (shared), and the database is not marked down, so the
// next request is counted team-wide too and refused at rpm 1. Given up
// after one second, the instance applied its own window alone (shared
// false) and left the database alone for RetryAfterDown.
func TestKeyRequestWaitsForAHeldKey(t *testing.T) {
	url := pg.NewDatabase(t)
	st, err := store.OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('omniroute_tpm|' || $1, 0))`, KeyRPMKey("k")); err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	time.AfterFunc(heldLock, func() { committed <- tx.Commit(ctx) })

	l := New(st, clock.Real{}, "A", Options{})
	if _, _, ok, shared := l.KeyRequest("k", 1); !ok || !shared {
		t.Fatalf("behind a held lock: ok %v shared %v, want counted team-wide", ok, shared)
	}
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	if _, retry, ok, shared := l.KeyRequest("k", 1); ok || !shared || retry <= 0 {
		t.Fatalf("the next request: ok %v shared %v retry %v, want refused team-wide", ok, shared, retry)
	}
}
