package server_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPricingFile: the pricingFile setting points at the user's pricing
// file. A file that cannot be used is the settings write's 400 naming the
// field (relative, missing, not JSON, a negative price) and changes nothing;
// a good one prices answers at once (over the shipped catalogue) and is
// listed in GET /api/pricing with its source; it is read again at start (a
// bad one then is reported, never fatal) and when it changes.
func TestPricingFile(t *testing.T) {
	e := newEnvClock(t, true)
	e.addConn("local", "key-a", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "prices.json")
	write := func(s string, mod time.Time) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, file, content, want string }{
		{"relative", "prices.json", "", "absolute path"},
		{"missing", filepath.Join(dir, "none.json"), "", "no such file"},
		{"not JSON", path, `{"entries":`, "not a pricing file"},
		{"negative", path, `{"entries":[{"model":"gpt-4o-mini","inputPerMTok":-1}]}`, "non-negative"},
	} {
		if c.content != "" {
			write(c.content, time.Now())
		}
		code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"pricingFile": c.file})
		if code != 400 || !strings.Contains(m["error"].(map[string]any)["message"].(string), c.want) ||
			m["error"].(map[string]any)["code"] != "INVALID_SETTING" || m["error"].(map[string]any)["param"] != "pricingFile" {
			t.Fatalf("%s: %d %v, want 400 INVALID_SETTING saying %q", c.name, code, m, c.want)
		}
	}
	if _, m := e.mgmt("GET", "/api/settings", nil); m["pricingFile"] != "" {
		t.Fatalf("a refused file was saved: %v", m["pricingFile"])
	}

	// A model-wide price: 1,000 $/MTok in and out.
	t0 := time.Now().Add(-time.Hour)
	write(`{"entries":[{"model":"gpt-4o-mini","inputPerMTok":1000,"outputPerMTok":1000,"date":"2026-12-01"}]}`, t0)
	if code, m := e.mgmt("PATCH", "/api/settings", map[string]any{"pricingFile": path}); code != 200 || m["pricingFile"] != path {
		t.Fatalf("a good file: %d %v", code, m)
	}
	_, pr := e.mgmt("GET", "/api/pricing", nil)
	file, _ := pr["file"].(map[string]any)
	if file["path"] != path || file["entries"] != 1.0 || file["error"] != nil {
		t.Fatalf("file state %v", pr["file"])
	}
	var fromFile map[string]any
	for _, x := range pr["catalogue"].([]any) {
		if x := x.(map[string]any); x["origin"] == "file" {
			fromFile = x
		}
	}
	if fromFile == nil || fromFile["source"] != "file "+path || fromFile["model"] != "gpt-4o-mini" || fromFile["inputPerMTok"] != 1000.0 {
		t.Fatalf("the file's entry in the catalogue: %v", fromFile)
	}
	rows := func() []any {
		_, m := e.mgmt("GET", "/api/logs?limit=1000", nil)
		return m["logs"].([]any)
	}
	cost := func() float64 {
		t.Helper()
		before := len(rows())
		resp, body := e.chat("gpt-4o-mini", false, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("chat: %d %s", resp.StatusCode, body)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if r := rows(); len(r) > before {
				c, ok := r[0].(map[string]any)["costUsd"].(float64)
				if !ok {
					t.Fatalf("no cost: %v", r[0])
				}
				return c
			}
			if time.Now().After(deadline) {
				t.Fatal("the request's log row was not written")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The fake's answer: 10 prompt + 5 output tokens.
	if got := cost(); math.Abs(got-15*1000/1e6) > 1e-12 {
		t.Fatalf("priced at %v, want the file's 0.015 (an openai-compatible connection has no shipped price)", got)
	}

	// The file changes: taken within the watch's period.
	write(`{"entries":[{"model":"gpt-4o-mini","inputPerMTok":2000,"outputPerMTok":2000}]}`, t0.Add(time.Minute))
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, pr := e.mgmt("GET", "/api/pricing", nil)
		if c := pr["catalogue"].([]any)[0].(map[string]any); c["origin"] == "file" && c["inputPerMTok"] == 2000.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the changed file was not taken")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A bad version at start: the gateway starts, says why, prices as shipped.
	write(`not json`, t0.Add(2*time.Minute))
	e.restart()
	_, pr = e.mgmt("GET", "/api/pricing", nil)
	if f, _ := pr["file"].(map[string]any); f["path"] != path || !strings.Contains(f["error"].(string), "not a pricing file") || f["entries"] != 0.0 {
		t.Fatalf("a bad file at start: %v", pr["file"])
	}
	// Fixed, and read at the next start.
	write(`{"entries":[{"model":"gpt-4o-mini","inputPerMTok":3000,"outputPerMTok":3000}]}`, t0.Add(3*time.Minute))
	e.restart()
	if got := cost(); math.Abs(got-15*3000/1e6) > 1e-12 {
		t.Fatalf("after a restart priced at %v, want 0.045", got)
	}
	// "" removes it.
	if code, _ := e.mgmt("PATCH", "/api/settings", map[string]any{"pricingFile": ""}); code != 200 {
		t.Fatal(code)
	}
	if _, pr := e.mgmt("GET", "/api/pricing", nil); pr["file"] != nil {
		t.Fatalf("no file: %v", pr["file"])
	}
}
