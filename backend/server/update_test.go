package server_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"omniroute/backend/config"
	"omniroute/backend/server"
	"omniroute/backend/update"
)

// TestUpdateCheckThroughTheAPI: the check is off until the user turns it on;
// then GET /api/update says a signed newer version is available, a tampered
// manifest is ignored with its reason, and none is silent. Nothing else is
// fetched than the manifest.
func TestUpdateCheckThroughTheAPI(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	good, _ := update.Sign(update.Manifest{Version: "9.0.0", URL: "https://example.invalid/releases/9.0.0"}, priv)
	tampered := append([]byte(nil), good...)
	tampered[20] ^= 1
	var paths []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		switch r.URL.Path {
		case "/good.json":
			_, _ = w.Write(good)
		case "/tampered.json":
			_, _ = w.Write(tampered)
		default:
			http.NotFound(w, r)
		}
	}))
	defer up.Close()
	srv, err := server.New(server.Options{
		Process:    config.Process{DataDir: t.TempDir(), Host: "127.0.0.1", Port: 0},
		Dashboard:  fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}},
		Version:    "0.2.0",
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv:     func(string) string { return "" },
		ReleaseKey: base64.StdEncoding.EncodeToString(pub),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer func() { ts.Close(); _ = srv.Close() }()
	e := &env{t: t, ts: ts, token: srv.Token()}

	if code, m := e.mgmt("GET", "/api/update", nil); code != 200 || m["enabled"] != false || m["available"] != false || len(paths) != 0 {
		t.Fatalf("off by default: %d %v (fetched %v)", code, m, paths)
	}
	if code, m := e.mgmt("POST", "/api/update/check", nil); code != http.StatusConflict {
		t.Fatalf("check while off: %d %v", code, m)
	}
	if code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"updateCheck": true, "updateUrl": "http://203.0.113.9/x.json"}); code != 400 {
		t.Fatalf("a plain-http non-loopback URL was accepted: %d %v", code, m)
	}
	for _, c := range []struct {
		path      string
		available bool
		err       bool
	}{
		{"/good.json", true, false},
		{"/tampered.json", false, true},
		{"/none.json", false, true},
	} {
		if code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"updateCheck": true, "updateUrl": up.URL + c.path}); code != 200 {
			t.Fatalf("settings: %d %v", code, m)
		}
		code, m := e.mgmt("POST", "/api/update/check", nil)
		_, hasErr := m["error"]
		if code != 200 || m["available"] != c.available || hasErr != c.err {
			t.Errorf("%s: %d %v", c.path, code, m)
		}
		if c.available && (m["latest"] != "9.0.0" || m["current"] != "0.2.0") {
			t.Errorf("%s: %v", c.path, m)
		}
	}
	for _, p := range paths {
		if p != "/good.json" && p != "/tampered.json" && p != "/none.json" {
			t.Errorf("fetched %s: only the manifest may be read", p)
		}
	}
}
