package server_test

import (
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

func TestMetricsExposeStateAndTraffic(t *testing.T) {
	e := newEnv(t)
	e.addConn("a", "key-a", 1)
	e.addConn("b", "key-b", 2)
	// An account-wide 429 cools the connection (a plain one cools only the model).
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1,
		Headers: map[string]string{"X-RateLimit-Scope": "account"}})
	e.chat("openai-compatible/gpt-4o-mini", false, nil)
	resp, body := e.do("GET", "/metrics", nil, map[string]string{"Authorization": "Bearer " + e.token})
	s := string(body)
	for _, want := range []string{
		`omniroute_requests_total{format="openai",status="200"} 1`,
		`verdict="rate_limit"} 1`,
		`omniroute_connections{availability="cooling_down"} 1`,
		`omniroute_requests_in_flight 0`,
	} {
		if resp.StatusCode != 200 || !strings.Contains(s, want) {
			t.Fatalf("metrics missing %q:\n%s", want, s)
		}
	}
	if resp, _ := e.do("GET", "/metrics", nil, nil); resp.StatusCode != 401 {
		t.Fatalf("metrics without token: %d", resp.StatusCode)
	}
}
