package store

import "testing"

// TestStateEventsKeepsTheNewestWhenOverLimit: a range with more changes than
// the limit answers its newest ones, oldest first; the present is never cut.
func TestStateEventsKeepsTheNewestWhenOverLimit(t *testing.T) {
	s, _ := openTemp(t)
	for i := int64(1); i <= 5; i++ {
		if err := s.InsertStateEvent(StateEvent{At: i * 1000, Provider: "p", Kind: "breaker", State: "OPEN"}, 100); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		limit     int
		wantFirst int64
	}{{5, 1000}, {4, 2000}, {2, 4000}} {
		got, err := s.StateEvents(0, 10_000, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.limit || got[0].At != tc.wantFirst || got[len(got)-1].At != 5000 {
			t.Errorf("limit %d: %d events from %d to %d, want %d from %d to 5000", tc.limit, len(got), got[0].At, got[len(got)-1].At, tc.limit, tc.wantFirst)
		}
	}
}
