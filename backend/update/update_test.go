package update

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewer(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"0.3.0", "0.2.0", true}, {"0.2.1", "0.2.0", true}, {"1.0.0", "0.9.9", true}, {"v0.2.10", "0.2.9", true},
		{"0.2.0", "0.2.0", false}, {"0.1.9", "0.2.0", false}, {"0.2", "0.1.0", false}, {"0.3.0-rc1", "0.2.0", false}, {"x", "0.1.0", false},
	}
	for _, c := range cases {
		if got := Newer(c.a, c.b); got != c.want {
			t.Errorf("Newer(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// TestCheck: a good manifest says a newer version is available; a tampered
// one (a byte of the manifest changed, or signed by another key) is refused;
// none (404, unreachable) is silent — never "available".
func TestCheck(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	good, _ := Sign(Manifest{Version: "0.3.0", URL: "https://example.invalid/r/0.3.0", Notes: "faster"}, priv)
	foreign, _ := Sign(Manifest{Version: "0.3.0", URL: "https://evil.invalid"}, other)
	tampered := []byte(strings.Replace(string(good), "0.3.0", "9.9.9", 1))
	same, _ := Sign(Manifest{Version: "0.2.0"}, priv)
	docs := map[string][]byte{"/good": good, "/foreign": foreign, "/tampered": tampered, "/same": same, "/garbage": []byte("{")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, ok := docs[r.URL.Path]; ok {
			_, _ = w.Write(d)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	clk := clock.NewFake(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
	c, err := New(srv.Client(), base64.StdEncoding.EncodeToString(pub), clk, "0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		path      string
		available bool
		errPart   string
	}{
		{"/good", true, ""},
		{"/same", false, ""},
		{"/tampered", false, "signature does not verify"},
		{"/foreign", false, "signature does not verify"},
		{"/garbage", false, "not a signed manifest"},
		{"/missing", false, "answered 404"},
	} {
		s := c.Check(ctx, srv.URL+tc.path)
		if s.Available != tc.available || (tc.errPart == "") != (s.Error == "") || !strings.Contains(s.Error, tc.errPart) {
			t.Errorf("%s: %+v", tc.path, s)
		}
		if tc.path == "/good" && (s.Latest != "0.3.0" || s.URL != "https://example.invalid/r/0.3.0" || s.Notes != "faster") {
			t.Errorf("good manifest read as %+v", s)
		}
	}
	if s := c.Check(ctx, "http://127.0.0.1:1/none"); s.Available || !strings.Contains(s.Error, "could not be reached") {
		t.Errorf("unreachable: %+v", s)
	}
	if _, err := New(nil, "not a key", clk, "0.2.0"); err == nil {
		t.Error("a bad release key was accepted")
	}
	if _, err := New(nil, ReleaseKey, clk, "0.2.0"); err != nil {
		t.Errorf("the compiled-in release key: %v", err)
	}
}

// TestStatusChecksAtMostDaily: reading the status checks again only when the
// last check is a day old (boundary on the injected clock), and not at all
// when the check is off.
func TestStatusChecksAtMostDaily(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	doc, _ := Sign(Manifest{Version: "0.3.0"}, priv)
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++; _, _ = w.Write(doc) }))
	defer srv.Close()
	clk := clock.NewFake(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
	c, _ := New(srv.Client(), base64.StdEncoding.EncodeToString(pub), clk, "0.2.0")
	ctx := context.Background()
	if s := c.Status(ctx, false, srv.URL); s.Enabled || s.Available || hits != 0 {
		t.Fatalf("off: %+v, %d hits", s, hits)
	}
	if s := c.Status(ctx, true, srv.URL); !s.Available || hits != 1 {
		t.Fatalf("first read: %+v, %d hits", s, hits)
	}
	clk.Advance(Interval - time.Millisecond)
	c.Status(ctx, true, srv.URL)
	if hits != 1 {
		t.Fatalf("checked again %v after the last check", Interval-time.Millisecond)
	}
	clk.Advance(time.Millisecond)
	c.Status(ctx, true, srv.URL)
	if hits != 2 {
		t.Fatalf("not checked again after %v", Interval)
	}
}
