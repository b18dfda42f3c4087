package server_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

// TestUsageCustomRange (issue 42 item 10): GET /api/usage and its timeline
// take from / to: the finest resolution still kept at from (1 min for the
// last 3 h, 15 min for 2 days, 2 h for 9 days), the window rounded out to its
// buckets, and totals that count exactly the requests in it; a from older
// than the rollups keep, a to before from, a bad time and a to without from
// are 400 INVALID_QUERY naming the parameter.
func TestUsageCustomRange(t *testing.T) {
	e := newEnv(t)
	now := e.clk.Now()
	seedLogs(t, e.srv.Store(), now, 2000)
	inWindow := func(from, to time.Time) int64 {
		var n int64
		if err := e.srv.Store().DB().Raw(`SELECT COUNT(*) FROM request_logs WHERE created_at >= ? AND created_at < ?`,
			from.UnixMilli(), to.UnixMilli()).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		from, to time.Duration // before now; to 0: not given
		bucketMs float64
	}{
		{"last 30 min", 30 * time.Minute, 0, 60_000},
		{"6 h to 3 h ago", 6 * time.Hour, 3 * time.Hour, 900_000},
		{"5 days to 1 day ago", 5 * 24 * time.Hour, 24 * time.Hour, 7_200_000},
	} {
		q := url.Values{"by": {"key"}, "from": {now.Add(-tc.from).Format(time.RFC3339)}}
		if tc.to > 0 {
			q.Set("to", fmt.Sprint(now.Add(-tc.to).UnixMilli()))
		}
		code, rep := e.mgmt("GET", "/api/usage?"+q.Encode(), nil)
		if code != 200 || rep["range"] != "custom" || rep["bucketMs"] != tc.bucketMs {
			t.Fatalf("%s: %d %v %v", tc.name, code, rep["range"], rep["bucketMs"])
		}
		from, _ := time.Parse(time.RFC3339, rep["from"].(string))
		to, _ := time.Parse(time.RFC3339, rep["to"].(string))
		if from.After(now.Add(-tc.from)) || from.Before(now.Add(-tc.from).Add(-time.Duration(tc.bucketMs)*time.Millisecond)) {
			t.Fatalf("%s: from %v is not %v rounded down", tc.name, from, now.Add(-tc.from))
		}
		if want := int64(to.Sub(from) / (time.Duration(tc.bucketMs) * time.Millisecond)); int64(rep["buckets"].(float64)) != want {
			t.Fatalf("%s: %v buckets, want %d", tc.name, rep["buckets"], want)
		}
		got := int64(rep["totals"].(map[string]any)["requests"].(float64))
		if want := inWindow(from, to); got != want || want == 0 {
			t.Fatalf("%s: %d requests in [%v, %v), want %d (and some)", tc.name, got, from, to, want)
		}
		if code, tl := e.mgmt("GET", "/api/usage/timeline?"+q.Encode(), nil); code != 200 || tl["range"] != "custom" || tl["from"] != rep["from"] {
			t.Fatalf("%s: timeline %d %v", tc.name, code, tl)
		}
	}
	resp, _ := e.do("GET", "/api/usage.csv?from="+url.QueryEscape(now.Add(-time.Hour).Format(time.RFC3339)), nil, map[string]string{"Authorization": "Bearer " + e.token})
	if resp.StatusCode != 200 {
		t.Fatalf("csv of a custom range: %d", resp.StatusCode)
	}

	for _, tc := range []struct{ query, param string }{
		{"from=" + url.QueryEscape(now.Add(-10*24*time.Hour).Format(time.RFC3339)), "from"},
		{"from=" + fmt.Sprint(now.Add(-time.Hour).UnixMilli()) + "&to=" + fmt.Sprint(now.Add(-2*time.Hour).UnixMilli()), "to"},
		{"from=yesterday", "from"},
		{"to=" + fmt.Sprint(now.UnixMilli()), "from"},
	} {
		code, m := e.mgmt("GET", "/api/usage?"+tc.query, nil)
		errm, _ := m["error"].(map[string]any)
		if code != 400 || errm["code"] != "INVALID_QUERY" || errm["param"] != tc.param {
			t.Fatalf("%s: %d %v", tc.query, code, m)
		}
	}
}
