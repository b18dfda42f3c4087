package httpx

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestBudgetWait: a waiting read is granted the rest of its body when bytes
// come back, gives up exactly when its timer fires or its stop channel
// closes, and may wait only while the waiting reads fit the budget together.
func TestBudgetWait(t *testing.T) {
	t.Run("granted when bytes come back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := NewBudget(func() int64 { return 100 })
			b.take(70) // another read
			b.take(10) // the waiting read's part
			got := make(chan bool, 1)
			go func() { got <- b.wait(10, 60, nil, time.After(time.Hour)) }()
			synctest.Wait()
			b.give(29) // 51 held: 50 more do not fit yet
			synctest.Wait()
			select {
			case <-got:
				t.Fatal("granted with 51 of 100 held")
			default:
			}
			b.give(1)
			if !<-got {
				t.Fatal("not granted once 50 were free")
			}
			if u := b.Used(); u != 100 {
				t.Fatalf("used %d, want 100", u)
			}
		})
	})
	t.Run("gives up at its timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := NewBudget(func() int64 { return 100 })
			b.take(100)
			got := make(chan bool, 1)
			go func() { got <- b.wait(0, 1, nil, time.After(time.Second)) }()
			time.Sleep(time.Second - time.Millisecond)
			synctest.Wait()
			select {
			case <-got:
				t.Fatal("gave up 1 ms before its timeout")
			default:
			}
			time.Sleep(time.Millisecond)
			if <-got {
				t.Fatal("granted with the budget full")
			}
			if u, w := b.Used(), b.waiting.Load(); u != 100 || w != 0 {
				t.Fatalf("after giving up: used %d (want 100), waiting %d (want 0)", u, w)
			}
		})
	})
	t.Run("gives up when stopped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := NewBudget(func() int64 { return 100 })
			b.take(100)
			stop := make(chan struct{})
			got := make(chan bool, 1)
			go func() { got <- b.wait(0, 1, stop, nil) }()
			synctest.Wait()
			close(stop)
			if <-got {
				t.Fatal("granted with the budget full")
			}
		})
	})
	t.Run("waiters fit the budget together", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := NewBudget(func() int64 { return 100 })
			b.take(100)
			go b.wait(0, 60, nil, time.After(time.Hour))
			synctest.Wait()
			if b.wait(0, 41, nil, nil) {
				t.Fatal("a second waiter of 41 granted beside one of 60 in a budget of 100")
			}
			done := make(chan bool, 1)
			go func() { done <- b.wait(0, 40, nil, time.After(time.Second)) }()
			synctest.Wait()
			select {
			case <-done:
				t.Fatal("a waiter of 40 beside one of 60 was refused at once")
			default:
			}
			b.give(100)
			if !<-done {
				t.Fatal("the waiter of 40 was not granted")
			}
		})
	})
}

// rawBody starts a request declaring size bytes and sends its first part.
func rawBody(t *testing.T, addr string, size int, part string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n"+part)
	return c
}

// status reads the answer on c.
func status(t *testing.T, c net.Conn) int {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	return resp.StatusCode
}

// budgetServer answers 204 once it has the whole body, else the error; a
// body the budget refuses waits up to wait.
func budgetServer(t *testing.T, budget *Budget, wait time.Duration) string {
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, release, err := ReadBodyLimited(w, r, BodyLimits{Max: 1 << 20, Timeout: 5 * time.Second, Budget: budget, Wait: wait})
		release()
		if err != nil {
			WriteError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// TestRefusedReadsDoNotStarveTheRest: two bodies that each hold part of the
// budget and both need more than is left. Before, each refused read kept its
// part while it drained, so both were refused although each fits alone (16 at
// once: all 16 refused). Now one is served.
func TestRefusedReadsDoNotStarveTheRest(t *testing.T) {
	const size = 150 << 10
	budget := NewBudget(func() int64 { return 200 << 10 })
	addr := budgetServer(t, budget, 4*time.Second)
	body := strings.Repeat("a", size)
	a := rawBody(t, addr, size, body[:chunk+1])
	eventually(t, "A holds two steps", func() bool { return budget.Used() == 2*chunk })
	b := rawBody(t, addr, size, body[:chunk+1])
	eventually(t, "B is refused its second step", func() bool { return budget.waiting.Load() == size })
	_, _ = io.WriteString(a, body[chunk+1:])
	_, _ = io.WriteString(b, body[chunk+1:])
	codes := map[int]int{}
	codes[status(t, a)]++
	codes[status(t, b)]++
	if codes[http.StatusNoContent] != 1 || codes[http.StatusServiceUnavailable] != 1 {
		t.Fatalf("answers %v, want one served and one 503", codes)
	}
	eventually(t, "the budget is free", func() bool { return budget.Used() == 0 })
}

// TestWaitingReadIsServedWhenRoomComes: a body refused its next step waits,
// holding what it has, while the body ahead finishes; then it is served too
// (before, it was refused 503 although the two were never needed at once).
func TestWaitingReadIsServedWhenRoomComes(t *testing.T) {
	budget := NewBudget(func() int64 { return 200 << 10 })
	addr := budgetServer(t, budget, 4*time.Second)
	body := strings.Repeat("a", 150<<10)
	a := rawBody(t, addr, 2*chunk, body[:chunk+1]) // A fits in two steps
	eventually(t, "A holds two steps", func() bool { return budget.Used() == 2*chunk })
	b := rawBody(t, addr, len(body), body[:chunk+1])
	eventually(t, "B waits for room", func() bool { return budget.waiting.Load() == int64(len(body)) })
	if u := budget.Used(); u != 3*chunk {
		t.Fatalf("used %d while B waits, want A's two steps and B's one", u)
	}
	_, _ = io.WriteString(a, body[chunk+1:2*chunk])
	if c := status(t, a); c != http.StatusNoContent {
		t.Fatalf("A: %d", c)
	}
	_, _ = io.WriteString(b, body[chunk+1:])
	if c := status(t, b); c != http.StatusNoContent {
		t.Fatalf("B, after A was released: %d", c)
	}
	eventually(t, "the budget is free", func() bool { return budget.Used() == 0 })
}

// TestBudgetWaitEndsIn503: a body that finds no room within its wait is
// refused 503 GATEWAY_SATURATED with Retry-After, holding nothing.
func TestBudgetWaitEndsIn503(t *testing.T) {
	budget := NewBudget(func() int64 { return 100 << 10 })
	budget.take(90 << 10) // a body that is never released
	addr := budgetServer(t, budget, 50*time.Millisecond)
	body := strings.Repeat("a", 50<<10)
	resp, b := exchange(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 51200\r\n\r\n"+body)
	if resp.StatusCode != http.StatusServiceUnavailable || codeOf(t, b) != "GATEWAY_SATURATED" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%d %s (Retry-After %q)", resp.StatusCode, b, resp.Header.Get("Retry-After"))
	}
	if u := budget.Used(); u != 90<<10 {
		t.Fatalf("used %d after the refusal, want the other body's %d", u, 90<<10)
	}
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within 5 s: %s", what)
		}
	}
}
