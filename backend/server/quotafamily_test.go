package server_test

import (
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// The provider modules declare their quota families (Provider.QuotaFamily)
// and the wiring place hands them to the model lockout: these tests hold
// that Claude's and Codex's real families still lock together end to end.

// TestClaudeQuotaFamilyLocksItsTier: with the lockout on, a 429 on one Claude
// opus model locks the connection's opus tier ("claude-opus"): another opus
// model is answered 429 without reaching the upstream, a sonnet still serves.
func TestClaudeQuotaFamilyLocksItsTier(t *testing.T) {
	s := newSubEnv(t, claudeClientID, "claude")
	access := "sk-ant-oat01-family-account-token"
	id := s.importedClaude(access, s.clk.Now().Add(8*time.Hour))
	s.enableLockout()

	s.up.SetFault(access, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Models: []string{"claude-opus-4-1"}})
	if resp, body := s.messages("claude/claude-opus-4-1", false, nil); resp.StatusCode != 429 {
		t.Fatalf("the faulted opus: %d %s", resp.StatusCode, body)
	}
	locks := s.lockouts()
	if len(locks) != 1 || locks[0]["scope"] != "quota_family" || locks[0]["connectionId"] != id || locks[0]["model"] != "claude-opus-4-1" {
		t.Fatalf("lockouts %v", locks)
	}
	hits := s.up.Hits(access)
	if resp, body := s.messages("claude/claude-opus-4-5", false, nil); resp.StatusCode != 429 || s.up.Hits(access) != hits {
		t.Fatalf("another opus in the locked tier: %d %s (upstream hits %d)", resp.StatusCode, body, s.up.Hits(access)-hits)
	}
	if resp, body := s.messages("claude/claude-sonnet-4-5", false, nil); resp.StatusCode != 200 {
		t.Fatalf("a sonnet outside the tier: %d %s", resp.StatusCode, body)
	}
	// The health model counts the whole tier out, not the one model.
	_, h := s.mgmt("GET", "/api/monitoring/health", nil)
	sum := h["summary"].(map[string]any)
	if out := sum["modelsTotal"].(float64) - sum["modelsServable"].(float64); out != 4 {
		t.Fatalf("health counts %v models out, want the 4 opus models the import serves: %v", out, sum)
	}
}

// TestCodexQuotaFamilyLocksEveryGPT5: with the lockout on, a 429 on
// gpt-5.1-codex locks the connection's "gpt-5" family: gpt-5-codex is
// answered 429 without reaching the upstream.
func TestCodexQuotaFamilyLocksEveryGPT5(t *testing.T) {
	s := newSubEnv(t, codexClientID, "codex")
	id, access := s.codexConn()
	s.enableLockout()
	auth := map[string]string{"Authorization": "Bearer " + s.key}
	chat := func(model string) (int, string) {
		resp, body := s.do("POST", "/v1/chat/completions", map[string]any{"model": model,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
		return resp.StatusCode, string(body)
	}

	s.up.SetFault(access, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Times: 1, Models: []string{"gpt-5.1-codex"}})
	if code, body := chat("codex/gpt-5.1-codex"); code != 429 {
		t.Fatalf("the faulted model: %d %s", code, body)
	}
	locks := s.lockouts()
	if len(locks) != 1 || locks[0]["scope"] != "quota_family" || locks[0]["connectionId"] != id || locks[0]["model"] != "gpt-5.1-codex" {
		t.Fatalf("lockouts %v", locks)
	}
	hits := s.up.Hits(access)
	if code, body := chat("codex/gpt-5-codex"); code != 429 || s.up.Hits(access) != hits {
		t.Fatalf("another gpt-5 in the locked family: %d %s (upstream hits %d)", code, body, s.up.Hits(access)-hits)
	}
}
