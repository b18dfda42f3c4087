package claude_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/providers/claude"
	"omniroute/backend/resilience/wall"
	"omniroute/tests/fakeupstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "sk-ant-oat01-test-token"

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type rig struct {
	up      *fakeupstream.Upstream
	base    string
	clk     *clock.Fake
	table   *wall.Table
	exec    *claude.Executor
	sleeps  []time.Duration
	changes []string
	client  *http.Client
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{up: fakeupstream.New(), clk: clock.NewFake(t0), table: wall.NewTable()}
	r.base = r.up.Start()
	r.client = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		r.client.CloseIdleConnections()
		r.up.Close()
	})
	r.exec = claude.New(anthropic.New(r.client, "test"), r.table, r.clk, claude.NewResetClient(r.client, "test"))
	r.exec.Sleep = func(_ context.Context, d time.Duration) error {
		r.sleeps = append(r.sleeps, d)
		r.clk.Advance(d)
		return nil
	}
	r.exec.Rand = func() float64 { return 0.5 }
	r.exec.OnChange = func(id, transition string) { r.changes = append(r.changes, id+":"+transition) }
	return r
}

func (r *rig) target(acc providers.Account) providers.Target {
	p, _ := providers.NewCatalog().WithModules(claude.Module()).Lookup(claude.ID)
	return providers.Target{Provider: p, BaseURL: r.base + "/v1", Secret: token, AuthType: "oauth", Model: "claude-sonnet-4-5",
		ConnectionID: "conn-1", Account: acc}
}

func (r *rig) do(t *testing.T, acc providers.Account) (int, string) {
	t.Helper()
	body := `{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := r.exec.Do(context.Background(), new(r.target(acc)), providers.Call{Body: []byte(body), FirstByteDeadline: r.clk.Now().Add(10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (r *rig) fault(status int, h map[string]string) {
	r.up.AddFault(token, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: status, Headers: h, Times: 1})
}

func wallHeaders(reset time.Time) map[string]string {
	return map[string]string{wall.HeaderStatus: "rejected", wall.HeaderSlowOffer: "treatment",
		wall.HeaderReset: strconv.FormatInt(reset.Unix(), 10)}
}

// slowSent reports whether the fake's last request carried the slow header.
func (r *rig) slowSent() bool {
	h, _ := r.up.LastRequest(token)
	return h.Get(wall.HeaderUsageLimit) == "slow"
}

func TestLaneAcceptedRetriesSameAccountAndWaitsOnSlotBusyAnd529(t *testing.T) {
	r := newRig(t)
	reset := t0.Add(2 * time.Hour)
	r.fault(429, wallHeaders(reset))
	r.fault(429, map[string]string{wall.HeaderSlowStatus: "slot_busy", wall.HeaderSlowRetryAfter: "10"})
	r.fault(529, nil)
	status, body := r.do(t, providers.Account{LowPriorityMode: true})
	if status != 200 || !strings.Contains(body, fakeupstream.Content(token)) {
		t.Fatalf("status %d body %s", status, body)
	}
	if hits := r.up.Hits(token); hits != 4 {
		t.Fatalf("hits %d, want 4 (wall, slot_busy, 529, success)", hits)
	}
	if !r.slowSent() {
		t.Fatal("the lane's requests must carry anthropic-usage-limit: slow")
	}
	if len(r.sleeps) != 2 || r.sleeps[0] != 10*time.Second || r.sleeps[1] != wall.DefaultSlowRetry {
		t.Fatalf("sleeps %v, want [10s 20s]", r.sleeps)
	}
	if len(r.changes) != 1 || r.changes[0] != "conn-1:offer_accepted" {
		t.Fatalf("changes %v: the waits change no state", r.changes)
	}
	// The next request in the window goes in the lane at once.
	status, _ = r.do(t, providers.Account{LowPriorityMode: true})
	if status != 200 || !r.slowSent() || r.up.Hits(token) != 5 {
		t.Fatalf("second request: status %d slow %v hits %d", status, r.slowSent(), r.up.Hits(token))
	}
	// At reset + 60 s the lane is over: full speed again.
	r.clk.Set(reset.Add(wall.LaneGrace))
	if status, _ = r.do(t, providers.Account{LowPriorityMode: true}); status != 200 || r.slowSent() {
		t.Fatalf("after the lane: status %d slow %v", status, r.slowSent())
	}
}

func TestMaxWaitEndsTheLaneAndPassesTheAnswerOn(t *testing.T) {
	r := newRig(t)
	r.fault(429, wallHeaders(t0.Add(time.Hour)))
	busy := map[string]string{wall.HeaderSlowStatus: "slot_busy", wall.HeaderSlowRetryAfter: "25", wall.HeaderSlowMaxWait: "60"}
	for range 3 {
		r.fault(429, busy)
	}
	status, _ := r.do(t, providers.Account{LowPriorityMode: true})
	if status != 429 {
		t.Fatalf("status %d, want the slot_busy 429 handed on", status)
	}
	// 25 + 25 = 50 s ≤ 60 s; a third 25 s wait would pass the max-wait.
	if len(r.sleeps) != 2 {
		t.Fatalf("sleeps %v", r.sleeps)
	}
	s := r.table.Get("conn-1")
	if s.InLane(r.clk.Now()) || s.LastEnd != wall.EndMaxWait || !s.CoolOffUntil.Equal(r.clk.Now().Add(wall.CoolOff)) {
		t.Fatalf("state %+v", s)
	}
	if len(r.changes) != 2 || r.changes[1] != "conn-1:max_wait" {
		t.Fatalf("changes %v", r.changes)
	}
}

func TestBurst429WithoutUnifiedHeadersIsHandedOn(t *testing.T) {
	r := newRig(t)
	r.fault(429, map[string]string{"retry-after": "3"})
	if status, _ := r.do(t, providers.Account{LowPriorityMode: true, AutoLimitReset: true}); status != 429 || r.up.Hits(token) != 1 {
		t.Fatalf("status %d hits %d", status, r.up.Hits(token))
	}
}

func TestOptInOffSendsNothingAndRetriesNothing(t *testing.T) {
	r := newRig(t)
	r.fault(429, wallHeaders(t0.Add(time.Hour)))
	if status, _ := r.do(t, providers.Account{}); status != 429 || r.up.Hits(token) != 1 || r.slowSent() {
		t.Fatalf("status %d hits %d", status, r.up.Hits(token))
	}
}

func TestResetClaimedRetriesAtFullSpeed(t *testing.T) {
	r := newRig(t)
	r.up.SetLimitReset(&fakeupstream.LimitReset{Usage: `{"juniper_tide":{"arm":"reset","available":true}}`, Claim: `{"result":"reset"}`})
	r.fault(429, wallHeaders(t0.Add(time.Hour)))
	acc := providers.Account{LowPriorityMode: true, AutoLimitReset: true, OrganizationUUID: "org-1"}
	if status, _ := r.do(t, acc); status != 200 || r.slowSent() {
		t.Fatalf("status %d slow %v", status, r.slowSent())
	}
	if c := r.up.ResetClaims(); len(c) != 1 || c[0] != "org-1" {
		t.Fatalf("claims %v", c)
	}
	s := r.table.Get("conn-1")
	if s.ResetResult != wall.ResultReset || !s.ResetNextAt.Equal(t0.Add(wall.ResetDefaultNext)) {
		t.Fatalf("state %+v", s)
	}
}

func TestResetAlreadyUsedFallsToTheLane(t *testing.T) {
	r := newRig(t)
	next := t0.Add(48 * time.Hour)
	r.up.SetLimitReset(&fakeupstream.LimitReset{Usage: `{"juniper_tide":{"arm":"reset","available":true}}`,
		Claim: `{"result":"already_used","next_available_at":"` + next.Format(time.RFC3339) + `"}`})
	r.fault(429, wallHeaders(t0.Add(time.Hour)))
	acc := providers.Account{LowPriorityMode: true, AutoLimitReset: true, OrganizationUUID: "org-1"}
	if status, _ := r.do(t, acc); status != 200 || !r.slowSent() {
		t.Fatalf("status %d slow %v", status, r.slowSent())
	}
	if s := r.table.Get("conn-1"); !s.ResetNextAt.Equal(next) || s.ResetResult != wall.ResultAlreadyUsed {
		t.Fatalf("state %+v", s)
	}
}

func TestResetFailureBacksOffAndHandsTheWallOn(t *testing.T) {
	r := newRig(t)
	r.up.SetLimitReset(&fakeupstream.LimitReset{Usage: `{"juniper_tide":{"arm":"reset","available":true}}`, Claim: `{"error":"boom"}`, ClaimStatus: 500})
	r.fault(429, wallHeaders(t0.Add(time.Hour)))
	status, body := r.do(t, providers.Account{AutoLimitReset: true, OrganizationUUID: "org-1"})
	if status != 429 || !strings.Contains(body, "error") {
		t.Fatalf("status %d body %q: the wall answer must reach the normal path intact", status, body)
	}
	if s := r.table.Get("conn-1"); !s.ResetBackoffUntil.Equal(t0.Add(wall.ResetFailureBackoff)) || s.ResetResult != wall.ResultFailed {
		t.Fatalf("state %+v", s)
	}
}

func TestResetNotOfferedRemembersNextAvailable(t *testing.T) {
	r := newRig(t)
	next := t0.Add(36 * time.Hour)
	r.up.SetLimitReset(&fakeupstream.LimitReset{Usage: `{"juniper_tide":{"arm":"control","available":false,"next_available_at":"` + next.Format(time.RFC3339) + `"}}`})
	r.fault(429, wallHeaders(t0.Add(time.Hour)))
	if status, _ := r.do(t, providers.Account{AutoLimitReset: true, OrganizationUUID: "org-1"}); status != 429 {
		t.Fatalf("status %d", status)
	}
	if c := r.up.ResetClaims(); len(c) != 0 {
		t.Fatalf("claimed although not offered: %v", c)
	}
	s := r.table.Get("conn-1")
	if s.ResetResult != wall.ResultNotOffered || !s.ResetNextAt.Equal(next) {
		t.Fatalf("state %+v", s)
	}
	// Without an organisation (none set, none found by the look-up) the flow
	// cannot run: a failure, 15 minutes of back-off.
	r2 := newRig(t)
	r2.fault(429, wallHeaders(t0.Add(time.Hour)))
	r2.do(t, providers.Account{AutoLimitReset: true})
	if s := r2.table.Get("conn-1"); s.ResetResult != wall.ResultFailed || !s.ResetBackoffUntil.Equal(t0.Add(wall.ResetFailureBackoff)) {
		t.Fatalf("no organisation: %+v", s)
	}
}

// TestResetLooksTheOrganisationUpFirst (guide §1, issue 33 item 9): a
// hand-added connection has no organizationUUID; the reset flow looks it up
// (Claude Code's bootstrap, else the OAuth profile) and claims for it.
func TestResetLooksTheOrganisationUpFirst(t *testing.T) {
	for _, tc := range []struct{ name, bootstrap, profile, want string }{
		{"bootstrap", `{"oauth_account":{"account_uuid":"acc-1","organization_uuid":"org-boot"}}`, "", "org-boot"},
		{"profile", "", `{"account":{"uuid":"acc-1"},"organization":{"uuid":"org-prof"}}`, "org-prof"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.up.SetLimitReset(&fakeupstream.LimitReset{Usage: `{"juniper_tide":{"arm":"reset","available":true}}`, Claim: `{"result":"reset"}`,
				Bootstrap: tc.bootstrap, Profile: tc.profile})
			r.fault(429, wallHeaders(t0.Add(time.Hour)))
			if status, _ := r.do(t, providers.Account{LowPriorityMode: true, AutoLimitReset: true}); status != 200 || r.slowSent() {
				t.Fatalf("status %d slow %v", status, r.slowSent())
			}
			if c := r.up.ResetClaims(); len(c) != 1 || c[0] != tc.want {
				t.Fatalf("claims %v, want [%s]", c, tc.want)
			}
		})
	}
}
