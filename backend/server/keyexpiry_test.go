package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestKeyExpiryAtTheBoundary (issue 42 item 10): a key with expiresAt works
// until 1 ms before it and is refused 401 KEY_EXPIRED in the error envelope
// at it and 1 ms after (the injected clock); GET /api/keys says so; a past or
// malformed expiry is refused 400 INVALID_EXPIRY on expiresAt; null removes
// the expiry and the key works again.
func TestKeyExpiryAtTheBoundary(t *testing.T) {
	e := newEnv(t)
	e.addConn("Lab", "key-lab", 1)
	start := e.clk.Now()
	exp := start.Add(time.Hour)
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "ci bot", "expiresAt": exp.Format(time.RFC3339)})
	if code != http.StatusCreated || m["expiresAt"] != exp.UTC().Format(time.RFC3339Nano) || m["expired"] != false {
		t.Fatalf("create with expiry: %d %v", code, m)
	}
	id := m["id"].(string)
	as := map[string]string{"Authorization": "Bearer " + m["key"].(string)}

	for _, tc := range []struct {
		name string
		at   time.Time
		want int
	}{
		{"1 ms before", exp.Add(-time.Millisecond), 200},
		{"at expiresAt", exp, 401},
		{"1 ms after", exp.Add(time.Millisecond), 401},
	} {
		e.clk.Set(tc.at)
		resp, body := e.chat("gpt-4o-mini", false, as)
		if resp.StatusCode != tc.want {
			t.Fatalf("%s: %d %s", tc.name, resp.StatusCode, body)
		}
		if tc.want == 401 {
			if errorCode(body) != "KEY_EXPIRED" || !strings.Contains(string(body), `\"ci bot\" expired at `+exp.UTC().Format(time.RFC3339Nano)) {
				t.Fatalf("%s: the refusal does not say the key expired: %s", tc.name, body)
			}
			if k := e.keyOf("ci bot"); k["expired"] != true {
				t.Fatalf("%s: GET /api/keys does not say expired: %v", tc.name, k)
			}
		}
	}

	// A past time, a bad string and a bad type: 400 on expiresAt, nothing changes.
	for _, bad := range []any{e.clk.Now().Add(-time.Second).Format(time.RFC3339), e.clk.Now().UnixMilli(), "next tuesday", true} {
		code, m := e.mgmt("PATCH", "/api/keys/"+id, map[string]any{"expiresAt": bad})
		errm, _ := m["error"].(map[string]any)
		if code != 400 || errm["code"] != "INVALID_EXPIRY" || errm["param"] != "expiresAt" {
			t.Fatalf("expiresAt %v: %d %v", bad, code, m)
		}
	}
	if code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "born expired", "expiresAt": start.Format(time.RFC3339)}); code != 400 {
		t.Fatalf("create with a past expiry: %d %v", code, m)
	}

	// null removes the expiry; a later one (unix ms) is taken.
	if code, m := e.mgmt("PATCH", "/api/keys/"+id, map[string]any{"expiresAt": nil}); code != 200 || m["expiresAt"] != nil || m["expired"] != false {
		t.Fatalf("remove expiry: %d %v", code, m)
	}
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 200 {
		t.Fatalf("without expiry: %d %s", resp.StatusCode, body)
	}
	later := e.clk.Now().Add(24 * time.Hour)
	if code, m := e.mgmt("PATCH", "/api/keys/"+id, map[string]any{"expiresAt": later.UnixMilli()}); code != 200 || m["expiresAt"] != later.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("later expiry: %d %v", code, m)
	}
	// Kept across a restart (the column of migration 0016).
	e.restart()
	e.clk.Set(later)
	if resp, body := e.chat("gpt-4o-mini", false, as); resp.StatusCode != 401 || errorCode(body) != "KEY_EXPIRED" {
		t.Fatalf("after a restart, at the expiry: %d %s", resp.StatusCode, body)
	}
}

// TestKeyRotationKeepsTheKeyAndHonoursTheGrace (issue 42 item 10): rotate
// gives the same key (id, name, budget, spend) a new secret shown once; the
// old secret works until the grace period's end - 1 ms and is refused 401
// KEY_ROTATED from it on; a rotation without grace stops the previous secret
// at once and forgets the one before; a bad grace is 400, an unknown key 404;
// all of it survives a restart.
func TestKeyRotationKeepsTheKeyAndHonoursTheGrace(t *testing.T) {
	e := newEnv(t)
	conn := e.addConn("Metered", "key-m", 1)
	if code, m := e.mgmt("PATCH", "/api/providers/"+conn, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": 1, "outputPerMTok": 1}}}); code != 200 {
		t.Fatalf("pricing: %d %v", code, m)
	}
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "agent", "budget": map[string]any{"usd": 5, "period": "day"},
		"limits": map[string]any{"rpm": 100}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id, first := m["id"].(string), m["key"].(string)
	bearer := func(v string) map[string]string { return map[string]string{"Authorization": "Bearer " + v} }
	if resp, body := e.chat("gpt-4o-mini", false, bearer(first)); resp.StatusCode != 200 {
		t.Fatalf("before rotation: %d %s", resp.StatusCode, body)
	}
	before := e.keyOf("agent")
	spent := before["spend"].(map[string]any)["usd"].(float64)
	if spent <= 0 {
		t.Fatalf("nothing spent before the rotation: %v", before)
	}

	for _, bad := range []map[string]any{{"graceMs": -1}, {"graceMs": 7*24*3_600_000 + 1}, {"graceMs": "1h"}} {
		if code, m := e.mgmt("POST", "/api/keys/"+id+"/rotate", bad); code != 400 {
			t.Fatalf("rotate %v: %d %v", bad, code, m)
		}
	}
	if code, m := e.mgmt("POST", "/api/keys/nope/rotate", nil); code != 404 || m["error"].(map[string]any)["code"] != "KEY_NOT_FOUND" {
		t.Fatalf("rotate an unknown key: %d %v", code, m)
	}

	rotatedAt := e.clk.Now()
	graceEnd := rotatedAt.Add(time.Minute)
	code, m = e.mgmt("POST", "/api/keys/"+id+"/rotate", map[string]any{"graceMs": 60_000})
	if code != 200 {
		t.Fatalf("rotate: %d %v", code, m)
	}
	second, _ := m["key"].(string)
	if !strings.HasPrefix(second, "sk-omni-") || second == first || m["id"] != id || m["name"] != "agent" ||
		m["previousValidUntil"] != graceEnd.UTC().Format(time.RFC3339Nano) || m["rotatedAt"] != rotatedAt.UTC().Format(time.RFC3339Nano) ||
		m["keyMasked"] == before["keyMasked"] {
		t.Fatalf("the rotation's answer: %v", m)
	}
	if b := m["budget"].(map[string]any); b["usd"] != float64(5) || m["limits"].(map[string]any)["rpm"] != float64(100) {
		t.Fatalf("budget or limits lost: %v", m)
	}
	if got := m["spend"].(map[string]any)["usd"].(float64); got != spent {
		t.Fatalf("spend after rotation %v, want %v", got, spent)
	}
	if k := e.keyOf("agent"); k["key"] != nil {
		t.Fatalf("the list shows a secret: %v", k)
	}

	for _, tc := range []struct {
		name   string
		at     time.Time
		secret string
		want   int
		code   string
	}{
		{"old, grace end - 1 ms", graceEnd.Add(-time.Millisecond), first, 200, ""},
		{"new, in the grace", graceEnd.Add(-time.Millisecond), second, 200, ""},
		{"old, at the grace end", graceEnd, first, 401, "KEY_ROTATED"},
		{"old, grace end + 1 ms", graceEnd.Add(time.Millisecond), first, 401, "KEY_ROTATED"},
		{"new, after the grace", graceEnd.Add(time.Millisecond), second, 200, ""},
	} {
		e.clk.Set(tc.at)
		resp, body := e.chat("gpt-4o-mini", false, bearer(tc.secret))
		if resp.StatusCode != tc.want || tc.code != "" && errorCode(body) != tc.code {
			t.Fatalf("%s: %d %s", tc.name, resp.StatusCode, body)
		}
	}
	// Both secrets' requests were charged to the one key.
	if got := e.keyOf("agent")["spend"].(map[string]any)["usd"].(float64); got <= spent {
		t.Fatalf("spend after requests with both secrets %v, not above %v", got, spent)
	}

	// Without grace: the second secret stops at once, the first is forgotten.
	code, m = e.mgmt("POST", "/api/keys/"+id+"/rotate", nil)
	if code != 200 || m["previousValidUntil"] != nil {
		t.Fatalf("rotate without grace: %d %v", code, m)
	}
	third := m["key"].(string)
	if resp, body := e.chat("gpt-4o-mini", false, bearer(second)); resp.StatusCode != 401 || errorCode(body) != "KEY_ROTATED" {
		t.Fatalf("the second secret after a rotation without grace: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.chat("gpt-4o-mini", false, bearer(first)); resp.StatusCode != 401 || errorCode(body) != "API_KEY_INVALID" {
		t.Fatalf("the first secret two rotations later: %d %s", resp.StatusCode, body)
	}
	e.restart()
	if resp, body := e.chat("gpt-4o-mini", false, bearer(third)); resp.StatusCode != 200 {
		t.Fatalf("the third secret after a restart: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.chat("gpt-4o-mini", false, bearer(second)); resp.StatusCode != 401 || errorCode(body) != "KEY_ROTATED" {
		t.Fatalf("the second secret after a restart: %d %s", resp.StatusCode, body)
	}
}

// TestKeyRotationAndExpiryReachEveryInstance: on a team server a rotation
// and an expiry set through one instance are applied by the other (its
// keyring reloads on the api_keys change notification): the old secret is
// refused KEY_ROTATED and the expired key KEY_EXPIRED there too.
func TestKeyRotationAndExpiryReachEveryInstance(t *testing.T) {
	a, b := newTeam(t)
	a.addConn("shared", "key-s", 1)
	code, m := a.mgmt("POST", "/api/keys", map[string]any{"name": "team bot"})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id, old := m["id"].(string), map[string]string{"Authorization": "Bearer " + m["key"].(string)}
	eventually(t, "the key known to B", func() bool {
		resp, _ := b.chat("gpt-4o-mini", false, old)
		return resp.StatusCode == 200
	})
	code, m = a.mgmt("POST", "/api/keys/"+id+"/rotate", nil)
	if code != 200 {
		t.Fatalf("rotate: %d %v", code, m)
	}
	fresh := map[string]string{"Authorization": "Bearer " + m["key"].(string)}
	eventually(t, "B refuses the old secret as rotated and takes the new one", func() bool {
		resp, body := b.chat("gpt-4o-mini", false, old)
		if resp.StatusCode != 401 || errorCode(body) != "KEY_ROTATED" {
			return false
		}
		resp, _ = b.chat("gpt-4o-mini", false, fresh)
		return resp.StatusCode == 200
	})
	at := time.Now().Add(200 * time.Millisecond)
	if code, m := a.mgmt("PATCH", "/api/keys/"+id, map[string]any{"expiresAt": at.UnixMilli()}); code != 200 {
		t.Fatalf("expiry: %d %v", code, m)
	}
	eventually(t, "B refuses the key once it expired", func() bool {
		resp, body := b.chat("gpt-4o-mini", false, fresh)
		return resp.StatusCode == 401 && errorCode(body) == "KEY_EXPIRED"
	})
}
