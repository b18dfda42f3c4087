package forwarded

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
)

func mustParse(t *testing.T, list ...string) Proxies {
	t.Helper()
	p, err := Parse(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request(remote string, headers ...[2]string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://gw/api/x", nil)
	r.RemoteAddr = remote
	for _, h := range headers {
		r.Header.Add(h[0], h[1])
	}
	return r
}

func xff(v string) [2]string   { return [2]string{"X-Forwarded-For", v} }
func proto(v string) [2]string { return [2]string{"X-Forwarded-Proto", v} }

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		list []string
		bad  string // "" valid; else a fragment of the error
	}{
		{nil, ""},
		{[]string{}, ""},
		{[]string{"10.0.0.5", "10.1.0.0/16", " 192.168.1.0/24 ", "::1", "fd00::/8", "::ffff:10.0.0.9"}, ""},
		{[]string{"10.0.0.5", "proxy.local"}, `"proxy.local"`},
		{[]string{"10.0.0.0/33"}, `"10.0.0.0/33"`},
		{[]string{""}, `""`},
		{[]string{"fe80::1%eth0"}, "fe80::1%eth0"},
		{[]string{"10.0.0.1:80"}, "10.0.0.1:80"},
		{make([]string, MaxEntries+1), "at most"},
	} {
		_, err := Parse(tt.list)
		switch {
		case tt.bad == "" && err != nil:
			t.Errorf("Parse(%q): %v; want valid", tt.list, err)
		case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad)):
			t.Errorf("Parse(%q): %v; want an error naming %s", tt.list, err, tt.bad)
		}
	}
}

// TestClientAddr: X-Forwarded-For is believed only from a trusted peer, and
// then only up to the right-most address that is not a trusted proxy.
func TestClientAddr(t *testing.T) {
	proxies := mustParse(t, "10.0.0.0/8", "192.168.1.7", "fd00::/8")
	for _, tt := range []struct {
		name    string
		proxies Proxies
		req     *http.Request
		want    string
	}{
		{"no proxies: the peer", Proxies{}, request("203.0.113.9:5000", xff("198.51.100.1")), "203.0.113.9"},
		{"untrusted peer: header ignored", proxies, request("203.0.113.9:5000", xff("198.51.100.1")), "203.0.113.9"},
		{"untrusted peer claiming a trusted address", proxies, request("203.0.113.9:5000", xff("10.0.0.1")), "203.0.113.9"},
		{"trusted peer without the header", proxies, request("10.0.0.2:5000"), "10.0.0.2"},
		{"trusted peer: its client", proxies, request("10.0.0.2:5000", xff("198.51.100.1")), "198.51.100.1"},
		{"spoofed entries left of the real client", proxies,
			request("10.0.0.2:5000", xff("1.1.1.1, 10.0.0.3, 198.51.100.1")), "198.51.100.1"},
		{"a chain of trusted proxies", proxies,
			request("10.0.0.2:5000", xff("198.51.100.1, 192.168.1.7, 10.0.0.3")), "198.51.100.1"},
		{"several headers read as one list", proxies,
			request("10.0.0.2:5000", xff("6.6.6.6, 198.51.100.1"), xff("10.0.0.3")), "198.51.100.1"},
		{"every entry trusted: the left-most", proxies, request("10.0.0.2:5000", xff("10.0.0.4, 10.0.0.3")), "10.0.0.4"},
		{"garbage stops at the hop right of it", proxies,
			request("10.0.0.2:5000", xff("198.51.100.1, not-an-ip, 10.0.0.3")), "10.0.0.3"},
		{"garbage right after the peer: the peer", proxies, request("10.0.0.2:5000", xff("unknown")), "10.0.0.2"},
		{"empty header: the peer", proxies, request("10.0.0.2:5000", xff("")), "10.0.0.2"},
		{"entries with ports", proxies, request("10.0.0.2:5000", xff("[2001:db8::1]:443, 10.0.0.3:80")), "2001:db8::1"},
		{"IPv6 trusted peer", proxies, request("[fd00::2]:5000", xff("2001:db8::5")), "2001:db8::5"},
		{"IPv4-mapped peer", proxies, request("[::ffff:10.0.0.2]:5000", xff("198.51.100.1")), "198.51.100.1"},
		{"a peer without a port", proxies, request("10.0.0.2", xff("198.51.100.1")), "198.51.100.1"},
		{"a single trusted host, not its neighbour", proxies, request("192.168.1.8:5000", xff("198.51.100.1")), "192.168.1.8"},
	} {
		if got := tt.proxies.ClientAddr(tt.req); got != tt.want {
			t.Errorf("%s: ClientAddr %q; want %q", tt.name, got, tt.want)
		}
	}
}

// TestHTTPS: TLS on the request itself, or https in a trusted peer's
// X-Forwarded-Proto (its right-most value); never an untrusted peer's.
func TestHTTPS(t *testing.T) {
	proxies := mustParse(t, "10.0.0.0/8")
	tlsReq := request("203.0.113.9:5000")
	tlsReq.TLS = &tls.ConnectionState{}
	for _, tt := range []struct {
		name    string
		proxies Proxies
		req     *http.Request
		want    bool
	}{
		{"plain, no proxies", Proxies{}, request("203.0.113.9:5000"), false},
		{"TLS itself", Proxies{}, tlsReq, true},
		{"untrusted peer's https ignored", proxies, request("203.0.113.9:5000", proto("https")), false},
		{"no proxies: https ignored", Proxies{}, request("10.0.0.2:5000", proto("https")), false},
		{"trusted peer says https", proxies, request("10.0.0.2:5000", proto("https")), true},
		{"trusted peer says HTTPS", proxies, request("10.0.0.2:5000", proto(" HTTPS ")), true},
		{"trusted peer says http", proxies, request("10.0.0.2:5000", proto("http")), false},
		{"trusted peer without the header", proxies, request("10.0.0.2:5000"), false},
		{"the right-most value counts", proxies, request("10.0.0.2:5000", proto("https, http")), false},
		{"the right-most of several headers", proxies, request("10.0.0.2:5000", proto("http"), proto("https")), true},
	} {
		if got := tt.proxies.HTTPS(tt.req); got != tt.want {
			t.Errorf("%s: HTTPS %v; want %v", tt.name, got, tt.want)
		}
	}
}
