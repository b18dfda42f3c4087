package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestDashboard: a user opening http://127.0.0.1:PORT/ in a browser lands on
// the dashboard, or, in a binary built without the frontend, gets a clear error.
func TestDashboard(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), 0)

	for _, c := range []struct {
		path, location string
		status         int
	}{
		{"/", "/dashboard/", http.StatusFound},
		{"/dashboard", "/dashboard/", http.StatusMovedPermanently},
	} {
		resp, body := g.do(http.MethodGet, c.path, nil, nil)
		if resp.StatusCode != c.status || resp.Header.Get("Location") != c.location {
			t.Errorf("GET %s: %d Location %q, want %d to %s: %s", c.path, resp.StatusCode, resp.Header.Get("Location"), c.status, c.location, body)
		}
	}

	// The SPA and its client-side routes (index fallback).
	for _, path := range []string{"/dashboard/", "/dashboard/providers", "/dashboard/settings/keys"} {
		resp, body := g.do(http.MethodGet, path, nil, nil)
		if !dashboardBuilt {
			t.Logf("frontend/dist/index.html was absent at build time: expecting DASHBOARD_NOT_BUILT")
			checkError(t, "GET "+path+" without a built frontend", resp, body, http.StatusNotFound, "DASHBOARD_NOT_BUILT")
			continue
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d, want 200: %s", path, resp.StatusCode, body)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q, want text/html", path, ct)
		}
		if dashboardIndex == nil {
			if !bytes.Contains(bytes.ToLower(body), []byte("<html")) && !bytes.Contains(bytes.ToLower(body), []byte("<!doctype html")) {
				t.Errorf("GET %s: body is not an HTML page: %.200s", path, body)
			}
		} else if !bytes.Equal(body, dashboardIndex) {
			t.Errorf("GET %s: body is not the built frontend/dist/index.html (%d bytes vs %d)", path, len(body), len(dashboardIndex))
		}
		if resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", path)
		}
	}
	resp, body := g.do(http.MethodGet, "/dashboard/assets/does-not-exist.js", nil, nil)
	checkError(t, "missing dashboard asset", resp, body, http.StatusNotFound, "ASSET_NOT_FOUND")
	// DNS rebinding: the dashboard is not served under a foreign name either.
	resp, body = g.do(http.MethodGet, "/dashboard/", nil, map[string]string{"Host": "evil.example"})
	checkError(t, "dashboard under a foreign Host", resp, body, http.StatusForbidden, "HOST_NOT_ALLOWED")
	// localhost is a loopback name and is accepted.
	resp, _ = g.do(http.MethodGet, "/", nil, map[string]string{"Host": "localhost:" + strings.TrimPrefix(g.base, "http://127.0.0.1:")})
	if resp.StatusCode != http.StatusFound {
		t.Errorf("GET / with Host localhost: %d, want 302", resp.StatusCode)
	}
	g.stop()
}
