package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// TestEventStreamShowsCooldownLive: a cooldown starting reaches the dashboard's
// event stream without a reload, followed by the health change.
func TestEventStreamShowsCooldownLive(t *testing.T) {
	e := newEnv(t)
	e.addConn("primary", "key-a", 1)
	e.addConn("secondary", "key-b", 2)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/api/events?token="+e.token, nil)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	next := func(want string) string {
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "event: "+want) {
				lines.Scan()
				return lines.Text()
			}
		}
		t.Fatalf("no %s event: %v", want, lines.Err())
		return ""
	}
	if h := next("health"); !strings.Contains(h, `"status":"healthy"`) {
		t.Fatalf("first health %s", h)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "30", "X-RateLimit-Scope": "account"}})
	e.chat("openai-compatible/gpt-4o-mini", false, nil)
	if c := next("connection"); !strings.Contains(c, `"status":"cooling_down"`) || !strings.Contains(c, `"cooldownRemainingMs":30000`) {
		t.Fatalf("connection event %s", c)
	}
	if h := next("health"); !strings.Contains(h, `"status":"degraded"`) {
		t.Fatalf("health after cooldown %s", h)
	}

	unauth, err := http.Get(e.ts.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	unauth.Body.Close()
	if unauth.StatusCode != 401 {
		t.Fatalf("events without token: %d", unauth.StatusCode)
	}
}
