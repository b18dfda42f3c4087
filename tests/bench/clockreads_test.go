package bench

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/server"
	"omniroute/tests/fakeupstream"
)

// maxClockReadsPerJSONRequest is what a served JSON request of the bench's
// shape (one connection, no budget, lease, team server or key expiry) may
// read of the injected clock: 21 before the fourteenth session, 15 after
// (docs/BENCHMARKS.md, "Fourteenth session: JSON request CPU"). Each read
// costs ≈ 70–120 ns of CPU on the benchmark machine.
const maxClockReadsPerJSONRequest = 15

// callerClock is the wall clock, counting its reads by their three
// innermost callers while on.
type callerClock struct {
	mu     sync.Mutex
	on     bool
	counts map[string]int
}

func (c *callerClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on {
		var pcs [3]uintptr
		frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
		var names []string
		for {
			f, more := frames.Next()
			names = append(names, f.Function[strings.LastIndex(f.Function, "/")+1:])
			if !more {
				break
			}
		}
		c.counts[strings.Join(names, " < ")]++
	}
	return time.Now()
}

// TestJSONRequestClockReads: a served JSON request through the gateway reads
// the clock at most maxClockReadsPerJSONRequest times (every read named on
// failure, with its callers).
func TestJSONRequestClockReads(t *testing.T) {
	up := fakeupstream.New()
	upstream := up.Start()
	t.Cleanup(up.Close)
	clk := &callerClock{counts: map[string]int{}}
	srv, err := server.New(server.Options{
		Process:   config.Process{DataDir: t.TempDir(), Host: "127.0.0.1", Port: 0},
		Dashboard: fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>OmniRoute</title>")}},
		Version:   "bench",
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv:    func(string) string { return "" },
		Clock:     clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("close gateway: %v", err)
		}
	})
	key, err := srv.DefaultKey()
	if err != nil {
		t.Fatal(err)
	}
	createConnection(t, ts.URL, srv.Token(), upstream+"/v1")
	target := newTarget(t, ts.URL, key, "openai-compatible/gpt-4o-mini")
	var buf bytes.Buffer
	for range 3 { // warm: the connection dialled, the caches filled
		if err := target.do(false, &buf); err != nil {
			t.Fatal(err)
		}
	}
	const n = 20
	clk.mu.Lock()
	clk.on = true
	clk.mu.Unlock()
	for range n {
		if err := target.do(false, &buf); err != nil {
			t.Fatal(err)
		}
	}
	clk.mu.Lock()
	clk.on = false
	total, lines := 0, []string{}
	for where, c := range clk.counts {
		total += c
		lines = append(lines, fmt.Sprintf("%5.2f %s", float64(c)/n, where))
	}
	clk.mu.Unlock()
	sort.Strings(lines)
	if per := float64(total) / n; per > maxClockReadsPerJSONRequest {
		t.Fatalf("%.2f clock reads per JSON request, want ≤ %d:\n%s", per, maxClockReadsPerJSONRequest, strings.Join(lines, "\n"))
	}
}
