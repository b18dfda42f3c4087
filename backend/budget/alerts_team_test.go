package budget

import (
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

// TestAlertsOncePerTeam: three instances' ledgers charging one key in one
// database (Share) raise each alert once for the team (ShareAlerts): 80 %
// once and 100 % once, whichever instance's charge crossed it, and again
// in the next period. Without the claims each instance that charged after
// a crossing raised it again.
func TestAlertsOncePerTeam(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clk := clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
	for _, claims := range []bool{false, true} {
		key := "k-unclaimed"
		if claims {
			key = "k"
		}
		var got []int
		var insts []*Ledger
		for range 3 {
			l := New(clk)
			l.Share(st)
			if claims {
				l.ShareAlerts(st)
			}
			l.OnAlert(func(a Alert) { got = append(got, a.Percent) })
			l.Set(key, &Budget{Tokens: i64(100), Period: Day}, nil, Spend{})
			insts = append(insts, l)
		}
		for i := range 12 { // 10 tokens a charge through each instance in turn
			insts[i%3].Charge(key, 0, 10)
		}
		if !claims {
			if len(got) <= 2 {
				t.Fatalf("without claims the instances raised %v; the test shows nothing", got)
			}
			continue
		}
		if len(got) != 2 || got[0] != 80 || got[1] != 100 {
			t.Fatalf("three instances raised %v, want [80 100] once each", got)
		}
		clk.Advance(24 * time.Hour) // the next period
		for i := range 9 {
			insts[i%3].Charge(key, 0, 10)
		}
		if len(got) != 3 || got[2] != 80 {
			t.Fatalf("the next day: %v, want one more 80", got)
		}
	}
}

// TestReloadKeepsTheAlertDue: a team server reloads its keys (Set with the
// same budget) while a request's hold has put the shared spend over the
// budget: the alert is still raised when that request's charge lands.
// Before, the reload marked it as already sent and no instance raised it.
func TestReloadKeepsTheAlertDue(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clk := clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
	l := New(clk)
	l.Share(st)
	l.ShareAlerts(st)
	var got []int
	l.OnAlert(func(a Alert) { got = append(got, a.Percent) })
	b := &Budget{Tokens: i64(100), Period: Day}
	l.Set("k", b, nil, Spend{})
	h, err := l.Reserve("k", 0, 120) // the hold alone reaches the budget
	if err != nil {
		t.Fatal(err)
	}
	sp, _, _ := st.KeySpendIn("k", h.PeriodStart)
	l.Set("k", &Budget{Tokens: i64(100), Period: Day}, nil, Spend{Tokens: sp.Tokens}) // the reload
	l.Settle(h, 0, 110)
	if len(got) != 1 || got[0] != 100 {
		t.Fatalf("alerts %v, want [100] once the charge landed", got)
	}
}
