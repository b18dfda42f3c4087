package server_test

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"omniroute/backend/config"
	"omniroute/backend/server"
)

// TestInstancesOnSQLite: a desktop (SQLite) instance lists itself alone, not
// shared, and adds no X-OmniRoute-Instance header.
func TestInstancesOnSQLite(t *testing.T) {
	e := newEnv(t)
	code, m := e.mgmt("GET", "/api/instances", nil)
	list, _ := m["instances"].([]any)
	if code != 200 || m["shared"] != false || len(list) != 1 {
		t.Fatalf("GET /api/instances: %d %v", code, m)
	}
	self, _ := list[0].(map[string]any)
	if self["self"] != true || self["live"] != true || self["name"] != m["self"] {
		t.Fatalf("self row %v", self)
	}
	resp, _ := e.do("GET", "/api/monitoring/health", nil, nil)
	if h := resp.Header.Get("X-OmniRoute-Instance"); h != "" {
		t.Fatalf("X-OmniRoute-Instance %q on a desktop instance", h)
	}
}

// TestDatabaseURLRefusals: a URL that is not PostgreSQL, and --reset with
// one, are refused before anything is opened.
func TestDatabaseURLRefusals(t *testing.T) {
	tests := []struct {
		name  string
		url   string
		reset bool
		want  string
	}{
		{"not postgres", "mysql://127.0.0.1/x", false, "must be a postgres://"},
		{"a file path", "/var/lib/omniroute.db", false, "must be a postgres://"},
		{"reset", "postgres://127.0.0.1:1/x", true, "--reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := server.New(server.Options{Process: config.Process{DataDir: dir, Host: "127.0.0.1", DatabaseURL: tt.url},
				Reset: tt.reset, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: func(string) string { return "" }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("the data directory was touched: %v", entries)
			}
		})
	}
}
