package api

import "testing"

// TestHostAllowed: loopback names and addresses (with or without a port, in
// any case) and the configured extra hosts pass; anything else, including
// names that merely start like a loopback address, is a rebinding attempt.
func TestHostAllowed(t *testing.T) {
	a := &API{allowedHosts: []string{"gateway.lan"}}
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.1:20128", true},
		{"[::1]:20128", true},
		{"::1", true},
		{"127.0.0.2:20128", true},
		{"localhost:20128", true},
		{"LOCALHOST", true},
		{"app.localhost", true},
		{"gateway.lan:20128", true},
		{"127.0.0.1.evil.example", false},
		{"127.0.0.1.evil.example:20128", false},
		{"evil.example", false},
		{"0.0.0.0:20128", false},
		{"10.0.0.1", false},
		{"", false},
	} {
		if got := a.hostAllowed(c.host); got != c.ok {
			t.Errorf("hostAllowed(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
}
