package auththrottle

import (
	"strconv"
	"testing"
	"time"
)

// TestAuthThrottleBucket: Burst failures pass, the next waits exactly
// until one token is back; a clock stepping back refills nothing; the
// throttling is reported once per burst.
func TestAuthThrottleBucket(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := New(func() time.Time { return now })
	if w := th.Wait("a"); w != 0 {
		t.Fatalf("a new source waits %v", w)
	}
	reported := 0
	for i := range Burst {
		if w := th.Wait("a"); w != 0 {
			t.Fatalf("failure %d: waits %v before the burst is spent", i+1, w)
		}
		if th.Fail("a") {
			reported++
		}
	}
	if reported != 1 {
		t.Fatalf("throttling reported %d times, want once", reported)
	}
	if w := th.Wait("a"); w != Refill {
		t.Fatalf("after %d failures: wait %v, want %v", Burst, w, Refill)
	}
	if w := th.Wait("b"); w != 0 {
		t.Fatalf("another source waits %v", w)
	}
	now = now.Add(Refill / 4)
	if w := th.Wait("a"); w != Refill*3/4 {
		t.Fatalf("a quarter refilled: wait %v, want %v", w, Refill*3/4)
	}
	now = now.Add(-time.Hour) // the clock stepped back
	if w := th.Wait("a"); w != Refill {
		t.Fatalf("clock stepped back: wait %v, want %v", w, Refill)
	}
	now = now.Add(time.Hour + Refill*3/4)
	if w := th.Wait("a"); w != 0 {
		t.Fatalf("one token back: wait %v", w)
	}
	if th.Fail("a") {
		t.Fatal("a steady guesser is reported again")
	}
	now = now.Add(Burst * Refill) // full again
	for range Burst - 1 {
		th.Fail("a")
	}
	if !th.Fail("a") {
		t.Fatal("a new burst after a full bucket is not reported")
	}
}

// TestAuthThrottleBounded: past MaxSources the table forgets sources
// whose bucket is full again, and stays bounded when none is.
func TestAuthThrottleBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := New(func() time.Time { return now })
	for i := range MaxSources {
		th.Fail("10.0." + strconv.Itoa(i))
	}
	th.Fail("fresh")
	if n := len(th.sources); n > MaxSources {
		t.Fatalf("%d sources, want at most %d", n, MaxSources)
	}
	now = now.Add(Refill) // every old bucket is full again
	th.Fail("fresh2")
	if n := len(th.sources); n > 3 {
		t.Fatalf("%d sources after the refill, want the full ones forgotten", n)
	}
}
