package watchdog

import (
	"testing"
	"time"
)

// TestSamplesStayBounded: a long fast stream keeps only the samples that can still
// fall inside the window, and an ended stream keeps none.
func TestSamplesStayBounded(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration
		every  time.Duration
		frames int
		max    int
	}{
		{"1 s window, 1 ms frames", time.Second, time.Millisecond, 100_000, 1_001},
		{"30 s window, 20 ms frames", 30 * time.Second, 20 * time.Millisecond, 50_000, 1_501},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			w := New(Config{Throughput: Throughput{Enabled: true, Window: tc.window, MinBytesPerSecond: 1}}, start)
			peak := 0
			for i := range tc.frames {
				w.Observe(Frame{Kind: Content, Bytes: 7}, start.Add(time.Duration(i)*tc.every))
				peak = max(peak, len(w.samples))
			}
			if peak > tc.max {
				t.Fatalf("peak samples = %d, want ≤ %d", peak, tc.max)
			}
			now := start.Add(time.Duration(tc.frames-1) * tc.every)
			if got, want := w.windowBytes(w.offset(now)), int64(7*tc.max); got != want {
				t.Fatalf("window bytes = %d, want %d", got, want)
			}
			w.Observe(Frame{Kind: End}, now)
			if w.samples != nil {
				t.Fatalf("ended stream keeps %d samples", len(w.samples))
			}
		})
	}
}
