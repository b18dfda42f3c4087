package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"testing/fstest"

	"omniroute/backend/config"
	"omniroute/backend/server"
)

// BenchmarkWiredHeap reports the Go heap of a gateway wired by server.New over
// a fresh data directory, as the idle gateway has it (docs/BENCHMARKS.md,
// "Fourteenth session: idle RSS"): bytes allocated by New, bytes still live
// after a collection, and live after the first management request (the
// router built then). Package initialisers ran before and are not counted.
// Figures only, nothing asserted: a regression shows as a larger figure.
func BenchmarkWiredHeap(b *testing.B) {
	var alloc, live, routed float64
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		srv, err := server.New(server.Options{
			Process:   config.Process{DataDir: b.TempDir(), Host: "127.0.0.1", Port: 0},
			Dashboard: fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}},
			Version:   "bench",
			Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
			Getenv:    func(string) string { return "" },
		})
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		alloc = float64(m1.TotalAlloc - m0.TotalAlloc)
		live = liveSince(m0)
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/gateway", nil)
		req.Header.Set("Authorization", "Bearer "+srv.Token())
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET /api/gateway: %d %s", w.Code, w.Body)
		}
		routed = liveSince(m0)
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(alloc, "alloc-B")
	b.ReportMetric(live, "live-B")
	b.ReportMetric(routed, "live-routed-B")
}

// liveSince is the heap live after a collection, less what was live at m0.
func liveSince(m0 runtime.MemStats) float64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return float64(int64(m.HeapAlloc) - int64(m0.HeapAlloc))
}
