package providers_test

import (
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
