package server_test

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestLeaseAcquireWithoutModel (guide §2: a lease holds a connection, not a
// model): a key that allows exactly one connection acquires it without naming
// a model; a second owner then meets LEASE_CAPACITY_UNAVAILABLE; a key that
// allows two connections still needs "model" (LEASE_ACTION_INVALID), and an
// explicit empty model stays LEASE_MODEL_INVALID.
func TestLeaseAcquireWithoutModel(t *testing.T) {
	e := newEnv(t)
	c1 := e.addConn("one", "key-a", 1)
	c2 := e.addConn("two", "key-b", 2)
	single := e.leaseKey(c1)
	double := e.leaseKey(c1, c2)

	resp, body := e.lease(single, owner1, map[string]any{"action": "acquire"})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "state").String() != "ACTIVE" || gjson.GetBytes(body, "connectionId").String() != c1 {
		t.Fatalf("acquire without a model, one allowed connection: %d %s; want 200 ACTIVE on %s", resp.StatusCode, body, c1)
	}
	gen := gjson.GetBytes(body, "generation").Int()
	resp, body = e.lease(single, owner1, map[string]any{"action": "status", "generation": gen})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "connectionId").String() != c1 {
		t.Fatalf("status of the model-less lease: %d %s", resp.StatusCode, body)
	}

	resp, body = e.lease(single, owner2, map[string]any{"action": "acquire"})
	if resp.StatusCode != 429 || gjson.GetBytes(body, "error.code").String() != "LEASE_CAPACITY_UNAVAILABLE" {
		t.Fatalf("second owner on the held connection: %d %s; want 429 LEASE_CAPACITY_UNAVAILABLE", resp.StatusCode, body)
	}

	tests := []struct {
		name string
		key  string
		body map[string]any
		code int
		want string
	}{
		{"two allowed connections need a model", double, map[string]any{"action": "acquire"}, 400, "LEASE_ACTION_INVALID"},
		{"an explicit empty model is invalid", single, map[string]any{"action": "acquire", "model": " "}, 400, "LEASE_MODEL_INVALID"},
	}
	for _, tt := range tests {
		resp, body := e.lease(tt.key, owner3, tt.body)
		if resp.StatusCode != tt.code || gjson.GetBytes(body, "error.code").String() != tt.want {
			t.Errorf("%s: %d %s; want %d %s", tt.name, resp.StatusCode, body, tt.code, tt.want)
		}
	}

	// The one allowed connection switched off: nothing to hold.
	if code, m := e.mgmt("PATCH", "/api/providers/"+c2, map[string]any{"isActive": false}); code != 200 {
		t.Fatalf("deactivate: %d %v", code, m)
	}
	resp, body = e.lease(e.leaseKey(c2), owner3, map[string]any{"action": "acquire"})
	if resp.StatusCode != 409 || gjson.GetBytes(body, "error.code").String() != "LEASE_NO_ELIGIBLE_CONNECTION" {
		t.Fatalf("acquire on an inactive connection: %d %s; want 409 LEASE_NO_ELIGIBLE_CONNECTION", resp.StatusCode, body)
	}
}
