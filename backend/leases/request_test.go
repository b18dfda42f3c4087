package leases

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"omniroute/backend/errs"
)

func ptr[T any](v T) *T { return &v }

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want Request
		err  *Error
		msg  string // part of the error's message
	}{
		{name: "acquire with a model", in: Input{Action: ptr("acquire"), Model: ptr("  gpt-4o "), TTLMs: ptr(int64(5000))},
			want: Request{Action: ActionAcquire, Model: "gpt-4o", TTL: 5 * time.Second}},
		{name: "acquire without a model", in: Input{Action: ptr("acquire")}, want: Request{Action: ActionAcquire}},
		{name: "ttl clamped up", in: Input{Action: ptr("acquire"), TTLMs: ptr(int64(1))}, want: Request{Action: ActionAcquire, TTL: MinTTL}},
		{name: "ttl clamped down", in: Input{Action: ptr("renew"), Generation: ptr(int64(3)), TTLMs: ptr(int64(1 << 62))},
			want: Request{Action: ActionRenew, Generation: 3, TTL: MaxTTL}},
		{name: "status", in: Input{Action: ptr("status"), Generation: ptr(int64(1))}, want: Request{Action: ActionStatus, Generation: 1}},
		{name: "release with a reason", in: Input{Action: ptr("release"), Generation: ptr(int64(2)), Reason: ptr(ReasonClientCancelled)},
			want: Request{Action: ActionRelease, Generation: 2, Reason: ReasonClientCancelled}},
		{name: "release owner exit", in: Input{Action: ptr("release"), Generation: ptr(int64(2)), Reason: ptr(ReasonOwnerExit)},
			want: Request{Action: ActionRelease, Generation: 2, Reason: ReasonOwnerExit}},
		{name: "no action", in: Input{}, err: ErrActionInvalid, msg: `field "action" is required`},
		{name: "unknown action cut at 40 bytes", in: Input{Action: ptr(strings.Repeat("x", 50))}, err: ErrActionInvalid,
			msg: `unknown action "` + strings.Repeat("x", 40) + `"`},
		{name: "acquire takes no generation", in: Input{Action: ptr("acquire"), Generation: ptr(int64(1))}, err: ErrActionInvalid,
			msg: `field "generation" does not belong to action "acquire"`},
		{name: "status takes no ttl", in: Input{Action: ptr("status"), Generation: ptr(int64(1)), TTLMs: ptr(int64(9))}, err: ErrActionInvalid,
			msg: `field "ttlMs" does not belong to action "status"`},
		{name: "renew takes no model", in: Input{Action: ptr("renew"), Generation: ptr(int64(1)), Model: ptr("m")}, err: ErrActionInvalid,
			msg: `field "model" does not belong to action "renew"`},
		{name: "renew takes no reason", in: Input{Action: ptr("renew"), Generation: ptr(int64(1)), Reason: ptr(ReasonOwnerExit)}, err: ErrActionInvalid,
			msg: `field "reason" does not belong`},
		{name: "blank model", in: Input{Action: ptr("acquire"), Model: ptr("   ")}, err: ErrModelInvalid, msg: "1 to 512 characters"},
		{name: "model too long", in: Input{Action: ptr("acquire"), Model: ptr(strings.Repeat("m", MaxModelLen+1))}, err: ErrModelInvalid},
		{name: "model at the bound", in: Input{Action: ptr("acquire"), Model: ptr(strings.Repeat("m", MaxModelLen))},
			want: Request{Action: ActionAcquire, Model: strings.Repeat("m", MaxModelLen)}},
		{name: "renew without generation", in: Input{Action: ptr("renew")}, err: ErrActionInvalid, msg: `action "renew" needs "generation"`},
		{name: "zero generation", in: Input{Action: ptr("release"), Generation: ptr(int64(0))}, err: ErrActionInvalid, msg: "positive integer"},
		{name: "zero ttl", in: Input{Action: ptr("acquire"), TTLMs: ptr(int64(0))}, err: ErrActionInvalid, msg: `"ttlMs" must be a positive integer`},
		{name: "operator reason is not the client's", in: Input{Action: ptr("release"), Generation: ptr(int64(1)), Reason: ptr(ReasonOperator)},
			err: ErrActionInvalid, msg: "OWNER_EXIT or CLIENT_CANCELLED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRequest(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(errs.As(err).Message, tc.msg) {
					t.Fatalf("err = %v, want %s with %q", err, tc.err.Code, tc.msg)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	owner := "vlo_" + strings.Repeat("A", 43)
	for _, tc := range []struct {
		name    string
		scopes  []string
		allowed []string
		owner   string
		want    error
	}{
		{"admitted", []string{"chat", Scope}, []string{"c1"}, owner, nil},
		{"no scope first", nil, nil, "bad", ErrScopeRequired},
		{"no connection before the owner", []string{Scope}, nil, "bad", ErrKeyConfigurationInvalid},
		{"bad owner", []string{Scope}, []string{"c1"}, owner + "=", ErrContextInvalid},
	} {
		if err := Admit(tc.scopes, tc.allowed, tc.owner); !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestEligible(t *testing.T) {
	type cand struct{ id, model string }
	for _, tc := range []struct {
		name     string
		allowed  []string
		cands    []cand
		excluded map[string]bool
		want     []string
		asked    []string
	}{
		{name: "routing order, allowed only", allowed: []string{"c", "a"}, cands: []cand{{"a", "m"}, {"b", "m"}, {"c", "m"}},
			want: []string{"a", "c"}, asked: []string{"a", "c"}},
		{name: "each once", allowed: []string{"a"}, cands: []cand{{"a", "m"}, {"a", "m-2"}}, want: []string{"a"}, asked: []string{"a"}},
		{name: "excluded dropped", allowed: []string{"a", "b"}, cands: []cand{{"a", "m"}, {"b", "m"}}, excluded: map[string]bool{"a": true},
			want: []string{"b"}, asked: []string{"a", "b"}},
		{name: "an excluded one is asked again under another model", allowed: []string{"a"}, cands: []cand{{"a", "m"}, {"a", "m-2"}},
			excluded: map[string]bool{"a/m": true}, want: []string{"a"}, asked: []string{"a", "a"}},
		{name: "none allowed", allowed: []string{"z"}, cands: []cand{{"a", "m"}}, want: nil, asked: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			got := Eligible(tc.allowed, tc.cands, func(c cand) string { return c.id }, func(c cand) bool {
				asked = append(asked, c.id)
				return tc.excluded[c.id] || tc.excluded[c.id+"/"+c.model]
			})
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(asked, tc.asked) {
				t.Errorf("got %v (asked %v), want %v (asked %v)", got, asked, tc.want, tc.asked)
			}
		})
	}
}

func TestEligibleWithoutModel(t *testing.T) {
	up := map[string]bool{"a": true}
	for _, tc := range []struct {
		name    string
		allowed []string
		want    []string
		msg     string
	}{
		{name: "the one connection", allowed: []string{"a"}, want: []string{"a"}},
		{name: "repeats count once", allowed: []string{"a", "a"}, want: []string{"a"}},
		{name: "the one connection unavailable", allowed: []string{"down"}, want: nil},
		{name: "several need a model", allowed: []string{"a", "b", "a"}, msg: "(it allows 2)"},
		{name: "none", allowed: nil, msg: "(it allows 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EligibleWithoutModel(tc.allowed, func(id string) bool { return up[id] })
			if tc.msg != "" {
				if !errors.Is(err, ErrActionInvalid) || !strings.Contains(errs.As(err).Message, tc.msg) {
					t.Fatalf("err = %v, want LEASE_ACTION_INVALID with %q", err, tc.msg)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
