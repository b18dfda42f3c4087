package server_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/fstest"

	"omniroute/backend/config"
	"omniroute/backend/server"
)

// TestMemoryLimitFollowsTheBodyBudget: the soft memory limit is set at start
// from the body budget and follows a change of it (budget + headroom, a
// floor for small budgets), so released bodies are collected before the
// heap doubles.
func TestMemoryLimitFollowsTheBodyBudget(t *testing.T) {
	var mu sync.Mutex
	var limits []int64
	srv, err := server.New(server.Options{
		Process:   config.Process{DataDir: t.TempDir(), Host: "127.0.0.1", Port: 0},
		Dashboard: fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}},
		Version:   "test",
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv:    func(string) string { return "" },
		SetMemoryLimit: func(l int64) int64 {
			mu.Lock()
			defer mu.Unlock()
			limits = append(limits, l)
			return 0
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer func() { ts.Close(); _ = srv.Close() }()
	e := &env{t: t, ts: ts, token: srv.Token()}
	for _, c := range []struct {
		budget int64
		want   int64
	}{
		{512 << 20, 512<<20 + server.MemoryHeadroom},
		{1 << 20, server.MinMemoryLimit}, // the largest body (32 MiB) + headroom is under the floor
	} {
		if code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"bodyBudgetBytes": c.budget}); code != 200 {
			t.Fatalf("patch: %d %v", code, m)
		}
		mu.Lock()
		got := limits[len(limits)-1]
		mu.Unlock()
		if got != c.want {
			t.Errorf("budget %d: limit %d, want %d", c.budget, got, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if limits[0] != 256<<20+server.MemoryHeadroom {
		t.Errorf("limit at start %d, want the default budget + headroom", limits[0])
	}
}
