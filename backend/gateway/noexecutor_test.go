package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// TestNoExecutorIsFormatNotSupported: a target whose dialect has no
// executor (providers.ErrNoExecutor, from a format's Dialects without a
// Default) is passed over with the stable code FORMAT_NOT_SUPPORTED, and is
// no evidence against the upstream: no breaker count, no cooldown, no lock.
// A client that went away stays a cancellation.
func TestNoExecutorIsFormatNotSupported(t *testing.T) {
	g := &Gateway{clk: clock.NewFake(time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC))}
	cand := routing.Candidate{Conn: &routing.Conn{ID: "c1", BreakerKey: "acme",
		Provider: providers.Provider{ID: "acme", Format: providers.FormatResponses, Dialect: "acme-wire"}}, Model: "m1"}
	target := cand.Conn.Target(cand.Model)
	_, err := providers.Dialects{By: map[providers.Dialect]providers.Executor{}}.Do(context.Background(), &target, providers.Call{})
	if err == nil {
		t.Fatal("a dialect without an executor must fail")
	}
	r := httptest.NewRequest(http.MethodPost, "/v1/responses", nil)
	v := g.classifyErr(context.Background(), r, err, cand)
	if v.Code != "FORMAT_NOT_SUPPORTED" || v.Kind != verdict.KindBadRequest || !v.Failover ||
		v.CountsForBreaker || v.CoolConnection || v.Scope != "" || v.Terminal != "" {
		t.Fatalf("verdict %+v", v)
	}
	if want := "this gateway has no executor for acme's acme-wire dialect of the responses wire"; v.Message != want {
		t.Fatalf("message %q, want %q", v.Message, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v := g.classifyErr(ctx, r.WithContext(ctx), err, cand); v.Kind != verdict.KindClientCanceled {
		t.Fatalf("a client gone: %+v", v)
	}
}
