package providers_test

import (
	"strings"
	"testing"
	"time"

	"omniroute/backend/providers"
)

func TestNextInterval(t *testing.T) {
	cases := []struct {
		name string
		cur  time.Duration
		e    *providers.DeviceError
		want time.Duration
	}{
		{"pending keeps it", 5 * time.Second, &providers.DeviceError{Code: providers.DevicePending}, 5 * time.Second},
		{"slow_down adds 5 s", 5 * time.Second, &providers.DeviceError{Code: providers.DeviceSlowDown}, 10 * time.Second},
		{"slow_down with the provider's interval", 5 * time.Second, &providers.DeviceError{Code: providers.DeviceSlowDown, Interval: 15 * time.Second}, 15 * time.Second},
		{"no error", 5 * time.Second, nil, 5 * time.Second},
	}
	for _, c := range cases {
		if got := providers.NextInterval(c.cur, c.e); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSafeOAuthCode: a code that looks like one is kept; anything else (a
// body, a space, over 64 bytes) is dropped, never echoed.
func TestSafeOAuthCode(t *testing.T) {
	long := strings.Repeat("a", 65)
	for _, tt := range []struct{ in, want, suffix string }{
		{"authorization_pending", "authorization_pending", ": authorization_pending"},
		{"invalid-grant.v2", "invalid-grant.v2", ": invalid-grant.v2"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64), ": " + strings.Repeat("a", 64)},
		{long, "", ""},
		{"<html>oops</html>", "", ""},
		{"bad code", "", ""},
		{"", "", ""},
	} {
		got := providers.SafeOAuthCode(tt.in)
		if got != tt.want || providers.CodeSuffix(got) != tt.suffix {
			t.Errorf("SafeOAuthCode(%q) = %q (suffix %q), want %q (%q)", tt.in, got, providers.CodeSuffix(got), tt.want, tt.suffix)
		}
	}
}
