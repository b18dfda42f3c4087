// Package forwarded resolves a request's client address and scheme behind
// reverse proxies: X-Forwarded-For and X-Forwarded-Proto are believed only
// when the direct peer is one of the trusted proxies (the trustedProxies
// setting), never from anyone else.
package forwarded

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// MaxEntries bounds the trusted proxy list.
const MaxEntries = 100

// Proxies are the trusted proxies' addresses; the zero value trusts none.
type Proxies struct {
	nets []netip.Prefix
}

// Parse reads a list of IP addresses (a single host) and CIDR prefixes
// ("10.0.0.0/8", "fd00::/8"); the error names the first entry that is
// neither.
func Parse(list []string) (Proxies, error) {
	if len(list) > MaxEntries {
		return Proxies{}, fmt.Errorf("at most %d entries", MaxEntries)
	}
	var p Proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if pf, err := netip.ParsePrefix(s); err == nil && pf.Addr().Zone() == "" {
			p.nets = append(p.nets, pf.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return Proxies{}, fmt.Errorf("%q is not an IP address or CIDR prefix (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8)", truncate(s, 64))
		}
		a = a.Unmap()
		p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return p, nil
}

// Trusts reports whether a is one of the trusted proxies.
func (p Proxies) Trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the address the request came from: the direct peer's IP,
// unless that peer is a trusted proxy; then the right-most address of
// X-Forwarded-For that is not a trusted proxy (every proxy appends the
// address it got the request from, so entries left of it may be the
// client's own inventions). When every entry is trusted, the left-most one;
// an entry that is not an address stops the walk at the hop right of it.
func (p Proxies) ClientAddr(r *http.Request) string {
	peer := peerHost(r.RemoteAddr)
	a, ok := parseHop(peer)
	if !ok || !p.Trusts(a) {
		return peer
	}
	client := a.String()
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, ok := parseHop(strings.TrimSpace(parts[j]))
			if !ok {
				return client
			}
			client = a.String()
			if !p.Trusts(a) {
				return client
			}
		}
	}
	return client
}

// HTTPS reports whether the client reached the gateway over TLS: the
// request itself came over TLS, or a trusted proxy's X-Forwarded-Proto (its
// right-most value, the one the direct peer set) says https.
func (p Proxies) HTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	a, ok := parseHop(peerHost(r.RemoteAddr))
	if !ok || !p.Trusts(a) {
		return false
	}
	vals := r.Header.Values("X-Forwarded-Proto")
	if len(vals) == 0 {
		return false
	}
	last := vals[len(vals)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.EqualFold(strings.TrimSpace(last), "https")
}

// peerHost is the IP of a RemoteAddr without its port.
func peerHost(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}

// parseHop reads one X-Forwarded-For entry: an IP, or an IP with a port
// ("1.2.3.4:5", "[::1]:5"); IPv4-mapped IPv6 becomes IPv4.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
