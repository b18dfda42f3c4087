package events

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPublishFansOutAndNeverBlocks(t *testing.T) {
	b := New(func() time.Time { return time.Unix(1, 0) })
	fast, slow := b.Subscribe(10), b.Subscribe(1)
	defer fast.Close()
	for i := 0; i < 3; i++ {
		b.Publish("breaker", map[string]int{"i": i})
	}
	if len(fast.C) != 3 || len(slow.C) != 1 || slow.Dropped() != 2 {
		t.Fatalf("fast %d slow %d dropped %d", len(fast.C), len(slow.C), slow.Dropped())
	}
	ev := <-fast.C
	if ev.Type != "breaker" || ev.ID != 1 || string(ev.Data) != `{"i":0}` {
		t.Fatalf("event %+v", ev)
	}
	slow.Close()
	slow.Close()
	if b.Subscribers() != 1 {
		t.Fatalf("subscribers %d", b.Subscribers())
	}
}
