package server_test

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestLeaseRefusalNamesTheFirstReturn (issue 40 E): one connection is held
// by another session's 30 min exclusive lease, the other is rate limited
// for 2 min: the refusal (429 LEASE_CAPACITY_UNAVAILABLE) says Retry-After
// 120, the locked target that returns first, and names it, not the lease's
// 1800.
func TestLeaseRefusalNamesTheFirstReturn(t *testing.T) {
	e := newEnv(t)
	c1 := e.addConn("one", "key-a", 1)
	c2 := e.addConn("two", "key-b", 2)
	key := e.leaseKey(c1, c2)
	model := "openai-compatible/gpt-4o-mini"
	resp, body := e.lease(key, owner1, map[string]any{"action": "acquire", "model": model, "ttlMs": 1_800_000})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "connectionId").String() != c1 {
		t.Fatalf("acquire: %d %s", resp.StatusCode, body)
	}
	e.up.SetFault("key-b", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "120"}, Times: 1})
	plain := map[string]string{"Authorization": "Bearer " + key}
	ask := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	if resp, out := e.do("POST", "/v1/chat/completions", ask, plain); resp.StatusCode != 429 {
		t.Fatalf("the 429 itself: %d %s", resp.StatusCode, out)
	}
	resp, out := e.do("POST", "/v1/chat/completions", ask, plain)
	if resp.StatusCode != 429 || errorCode(out) != "LEASE_CAPACITY_UNAVAILABLE" || resp.Header.Get("Retry-After") != "120" ||
		gjson.GetBytes(out, "retryAfter").Int() != 120 || !strings.Contains(gjson.GetBytes(out, "error.message").String(), "two") &&
		!strings.Contains(gjson.GetBytes(out, "error.message").String(), "model_cooldown") {
		t.Fatalf("lease + 2 min lock: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
}
