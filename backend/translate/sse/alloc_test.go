//go:build !race

package sse

import "testing"

// TestCompleteEventsAllocateNothing pins the parse of complete events (one
// data line each, the streams the gateway relays) at no allocation, even for
// a new Parser: the data is a view of the bytes fed. Not built under -race,
// whose instrumentation changes allocation counts.
func TestCompleteEventsAllocateNothing(t *testing.T) {
	chunk := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word \"}}]}\n\n: keep-alive\n\ndata: [DONE]\n\n")
	events := 0
	emit := func(e Event) bool { events++; return true }
	n := testing.AllocsPerRun(100, func() {
		var p Parser
		if err := p.Feed(chunk, emit); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
	if events != 3*101 {
		t.Errorf("%d events, want %d", events, 3*101)
	}
}
