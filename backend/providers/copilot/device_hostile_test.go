package copilot_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/providers/copilot"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestStartDeviceDistrustsItsAnswer: the verification page becomes a link in
// the dashboard, so only an https URL (plain http on loopback: a local test
// double) is taken; a javascript:, data: or relative one is refused. A
// device code's life is capped at 30 minutes and its polling interval at one
// minute, however large (or overflowing) the numbers GitHub names.
func TestStartDeviceDistrustsItsAnswer(t *testing.T) {
	var answer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	o := providers.OAuth{DeviceCodeURL: srv.URL, ClientID: "Iv1.test"}
	start := func(uri, extra string) (providers.Device, error) {
		answer = `{"device_code":"dc","user_code":"ABCD-1234","verification_uri":"` + uri + `"` + extra + `}`
		return copilot.StartDevice(context.Background(), providers.LoginCall{OAuth: o, Client: srv.Client(), Now: t0})
	}
	for _, bad := range []string{"javascript:alert(document.cookie)", "JavaScript:alert(1)", "data:text/html,<script>x</script>",
		"/login/device", "http://github.com/login/device", "https://user:pw@github.com/login/device", "vbscript:x"} {
		if _, err := start(bad, ""); errs.As(err).Code != "GITHUB_DEVICE_CODE_FAILED" {
			t.Errorf("%q: %v, want GITHUB_DEVICE_CODE_FAILED", bad, err)
		}
	}
	for _, good := range []string{"https://github.com/login/device", "http://127.0.0.1:8080/login/device"} {
		if d, err := start(good, ""); err != nil || d.VerificationURI != good {
			t.Errorf("%q: %+v %v", good, d, err)
		}
	}
	cases := []struct {
		extra    string
		life     time.Duration
		interval time.Duration
	}{
		{`,"expires_in":900,"interval":5`, 900 * time.Second, 5 * time.Second},
		{`,"expires_in":1800,"interval":60`, 30 * time.Minute, time.Minute},
		{`,"expires_in":1801,"interval":61`, 30 * time.Minute, time.Minute},
		{`,"expires_in":99999999999,"interval":99999999999`, 30 * time.Minute, time.Minute},
		{`,"expires_in":9223372036854775807,"interval":0`, 30 * time.Minute, time.Second},
	}
	for _, c := range cases {
		d, err := start("https://github.com/login/device", c.extra)
		if err != nil || d.ExpiresAt.Sub(t0) != c.life || d.Interval != c.interval {
			t.Errorf("%s: life %v interval %v (%v), want %v and %v", c.extra, d.ExpiresAt.Sub(t0), d.Interval, err, c.life, c.interval)
		}
	}
}
