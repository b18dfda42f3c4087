package e2e

import (
	"net/http"
	"testing"

	"omniroute/tests/fakeupstream"
)

// Tests of the guide items docs/GUIDE.md marks "fixed": each failed on the
// binary before its fix.

// TestPassingTestLiftsTerminalState: a terminal state (guide §2: banned,
// expired, credits_exhausted) holds until the credentials change or an
// operator resets it. The operator's reset is the connection Test: once the
// account answers again (credits topped up) a passing Test brings it back
// without re-entering the same key; the cooldown manager still never clears it.
func TestPassingTestLiftsTerminalState(t *testing.T) {
	t.Parallel()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	gw := startGateway(t, t.TempDir(), 0)
	id := gw.addConn("credits", base, "key-credits", 1)
	up.SetFault("key-credits", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: http.StatusPaymentRequired,
		Body: `{"error":{"message":"insufficient credits","type":"billing_error"}}`, Times: 1})

	if resp, body := gw.chat(gw.key, "gpt-4o-mini", false); resp.StatusCode == http.StatusOK {
		t.Fatalf("status 200 from an account out of credits: %s", body)
	}
	if st, _ := gw.connStatus(id); st != "terminal" {
		t.Fatalf("status %q after a 402 credits answer, want terminal", st)
	}
	clear := gw.mustMgmt(http.StatusOK, http.MethodPost, "/api/resilience/cooldowns", map[string]any{"connectionIds": []string{id}})
	if n, _ := clear["skippedTerminal"].(float64); n != 1 {
		t.Fatalf("cooldown manager: %v, want the terminal connection skipped", clear)
	}
	if st, _ := gw.connStatus(id); st != "terminal" {
		t.Fatalf("status %q after the cooldown manager's clear, want still terminal", st)
	}

	chk := gw.mustMgmt(http.StatusOK, http.MethodPost, "/api/providers/"+id+"/test", nil)
	if chk["ok"] != true {
		t.Fatalf("Test of a working account: %v", chk)
	}
	if st, _ := gw.connStatus(id); st != "healthy" {
		t.Fatalf("status %q after a passing Test, want healthy (the operator's reset)", st)
	}
	conn := gw.mustMgmt(http.StatusOK, http.MethodGet, "/api/providers/"+id, nil)["connection"].(map[string]any)
	if conn["testStatus"] != "active" || conn["errorCode"] != "" {
		t.Fatalf("connection after the reset: testStatus %v errorCode %v, want active and no error", conn["testStatus"], conn["errorCode"])
	}
	if resp, body := gw.chat(gw.key, "gpt-4o-mini", false); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d after the reset, want 200: %s", resp.StatusCode, body)
	}
}
