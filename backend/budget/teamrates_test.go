package budget

import (
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/errs"
)

// fakeRates is the team's windows: full or not, shared or not, and what
// was asked of them.
type fakeRates struct {
	rpmFull, tpmFull, down bool
	rpmTaken, rpmUndone    int
	combined               int             // KeyRates calls (a key with both limits)
	holds                  map[int64]int64 // hold → tokens (settled)
	next                   int64
}

func (f *fakeRates) KeyRequest(string, int) (int64, time.Duration, bool, bool) {
	if f.down {
		return 0, 0, true, false
	}
	if f.rpmFull {
		return 0, 7 * time.Second, false, true
	}
	f.rpmTaken++
	return int64(f.rpmTaken), 0, true, true
}

func (f *fakeRates) UndoKeyRequest(_ string, hold int64) {
	if hold != 0 {
		f.rpmUndone++
	}
}

func (f *fakeRates) KeyTokens(_ string, _, tokens int64) (int64, time.Duration, bool, bool) {
	if f.down {
		return 0, 0, true, false
	}
	if f.tpmFull {
		return 0, 3 * time.Second, false, true
	}
	f.next++
	f.holds[f.next] = -tokens // held, not settled
	return f.next, 0, true, true
}

func (f *fakeRates) SettleKeyTokens(_ string, hold, tokens int64) { f.holds[hold] = tokens }

func (f *fakeRates) KeyRates(_ string, _ int, _, tokens int64) (int64, int64, time.Duration, bool, bool, bool) {
	f.combined++
	switch {
	case f.down:
		return 0, 0, 0, false, false, false
	case f.tpmFull:
		return 0, 0, 3 * time.Second, true, false, true
	case f.rpmFull:
		return 0, 0, 7 * time.Second, false, true, true
	}
	f.rpmTaken++
	f.next++
	f.holds[f.next] = -tokens
	return f.next, int64(f.rpmTaken), 0, false, false, true
}

// TestTeamRates: a key's windows are asked of the team (a full one refuses
// with KEY_RATE_LIMITED and its Retry-After, and gives back what it took);
// a refusal of the instance's own checks gives the team's places back; the
// TPM hold is settled with the answer's tokens; a key without limits asks
// nothing; a database that does not answer leaves the instance's windows.
func TestTeamRates(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
	f := &fakeRates{holds: map[int64]int64{}}
	l := New(clk)
	l.ShareRates(f)
	l.Set("free", nil, nil, Spend{})
	if _, err := l.Reserve("free", 0, 10); err != nil || f.rpmTaken != 0 || f.next != 0 {
		t.Fatalf("a key without limits: %v, asked rpm %d tpm %d", err, f.rpmTaken, f.next)
	}
	l.Set("k", nil, &Limits{RPM: intp(100), TPM: i64(1000)}, Spend{})
	h, err := l.Reserve("k", 0, 40)
	if err != nil || h.TeamTokens != 1 || f.holds[1] != -40 || f.rpmTaken != 1 || h.TeamRequest != 1 {
		t.Fatalf("admitted: %+v %v (holds %v, rpm %d)", h, err, f.holds, f.rpmTaken)
	}
	if f.combined != 1 {
		t.Fatalf("a key with both limits asked the team %d times at once, want 1 (one statement)", f.combined)
	}
	l.Settle(h, 0, 55)
	if f.holds[1] != 55 {
		t.Fatalf("the team hold settled at %d tokens, want 55", f.holds[1])
	}
	f.rpmFull = true
	_, err = l.Reserve("k", 0, 40)
	if code(err) != "KEY_RATE_LIMITED" || errs.As(err).RetryAfter != 7*time.Second {
		t.Fatalf("team RPM full: %v", err)
	}
	if f.holds[2] != 0 {
		t.Fatalf("the TPM hold of a request refused by the RPM window stayed: %d", f.holds[2])
	}
	f.rpmFull, f.tpmFull = false, true
	if _, err := l.Reserve("k", 0, 40); code(err) != "KEY_RATE_LIMITED" || f.rpmTaken != 1 || errs.As(err).RetryAfter != 3*time.Second {
		t.Fatalf("team TPM full: %v (rpm taken %d)", err, f.rpmTaken)
	}
	// The instance's own window (RPM 1 here) refuses after the team's
	// admitted: the team's place is given back.
	f.tpmFull = false
	l.Set("one", nil, &Limits{RPM: intp(1)}, Spend{})
	if _, err := l.Reserve("one", 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve("one", 0, 1); code(err) != "KEY_RATE_LIMITED" || f.rpmUndone != 1 {
		t.Fatalf("own window full: %v, team places given back %d, want 1", err, f.rpmUndone)
	}
	f.down = true
	if _, err := l.Reserve("one", 0, 1); code(err) != "KEY_RATE_LIMITED" {
		t.Fatalf("database away: the instance's window decides; got %v", err)
	}
}

// TestReleaseGivesRPMPlacesBack: a request that was not served (Release)
// gives back its place in the key's RPM window on this instance and the
// team's; a served one (Settle) keeps both.
func TestReleaseGivesRPMPlacesBack(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
	f := &fakeRates{holds: map[int64]int64{}}
	l := New(clk)
	l.ShareRates(f)
	l.Set("k", nil, &Limits{RPM: intp(1)}, Spend{})
	h, err := l.Reserve("k", 0, 0)
	if err != nil || h.Request == 0 || h.TeamRequest == 0 {
		t.Fatalf("first request: %v, hold %+v", err, h)
	}
	l.Release(h)
	if f.rpmUndone != 1 {
		t.Fatalf("team places given back %d, want 1", f.rpmUndone)
	}
	h, err = l.Reserve("k", 0, 0)
	if err != nil {
		t.Fatalf("after a release, the same minute: %v", err)
	}
	l.Settle(h, 0, 0) // served
	if f.rpmUndone != 1 {
		t.Fatalf("a served request gave its team place back")
	}
	if _, err := l.Reserve("k", 0, 0); errs.As(err).Code != "KEY_RATE_LIMITED" {
		t.Fatalf("after a served request, the same minute: %v", err)
	}
}
