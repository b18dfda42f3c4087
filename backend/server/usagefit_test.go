package server_test

import (
	"testing"
	"time"
)

// TestUsageDefaultRangeFitsTheData: GET /api/usage without a range (or with
// range=auto) picks the shortest of hour, day and week that holds every
// request of the last week; an explicit range is kept.
func TestUsageDefaultRangeFitsTheData(t *testing.T) {
	e := newEnv(t)
	e.addConn("good", "key-b", 1)
	rangeOf := func(q string) string {
		t.Helper()
		code, m := e.mgmt("GET", "/api/usage"+q, nil)
		if code != 200 {
			t.Fatalf("usage%s: %d %v", q, code, m)
		}
		return m["range"].(string)
	}
	if got := rangeOf(""); got != "hour" {
		t.Fatalf("no data: %s, want hour", got)
	}
	e.chat("gpt-4o-mini", false, nil)
	e.clk.Advance(30 * time.Minute)
	e.restart() // flushes the request log
	if got := rangeOf(""); got != "hour" {
		t.Fatalf("30 min of data: %s, want hour", got)
	}
	e.clk.Advance(3 * time.Hour)
	if got := rangeOf("?range=auto"); got != "day" {
		t.Fatalf("3.5 h of data: %s, want day", got)
	}
	e.clk.Advance(2 * 24 * time.Hour)
	if got := rangeOf(""); got != "week" {
		t.Fatalf("2 days of data: %s, want week", got)
	}
	e.clk.Advance(8 * 24 * time.Hour) // older than a week: nothing to fit
	if got := rangeOf(""); got != "hour" {
		t.Fatalf("only data older than a week: %s, want hour", got)
	}
	if got := rangeOf("?range=day"); got != "day" {
		t.Fatalf("explicit: %s", got)
	}
}
