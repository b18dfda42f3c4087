package server

import (
	"net"
	"net/http"
	"sync"
	"time"

	"omniroute/backend/providers"
)

// egressTransport sends each request through a pooled transport bound to the
// local address the request asked for (a connection's
// providerSpecificData.localAddress), or the shared default transport. Pools
// are per local address, so a keep-alive connection never leaves from the
// wrong address.
type egressTransport struct {
	base *http.Transport
	mu   sync.Mutex
	byIP map[string]*http.Transport
}

func newEgressTransport(base *http.Transport) *egressTransport {
	return &egressTransport{base: base, byIP: map[string]*http.Transport{}}
}

// RoundTrip sends r; an answer with a 1xx final status (a 101 Switching
// Protocols, whose body would be the raw connection, out of reach of the
// request's context) is closed at once and comes back as an error
// (providers.RefuseInterim), for every client of the transport.
func (e *egressTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t := e.base
	if ip := providers.LocalAddrFrom(r.Context()); ip != "" {
		t = e.bound(ip)
	}
	resp, err := t.RoundTrip(r)
	if err == nil {
		if err = providers.RefuseInterim(resp); err != nil {
			return nil, err
		}
	}
	return resp, err
}

func (e *egressTransport) bound(ip string) *http.Transport {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t, ok := e.byIP[ip]; ok {
		return t
	}
	t := e.base.Clone()
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if addr := net.ParseIP(ip); addr != nil {
		d.LocalAddr = &net.TCPAddr{IP: addr}
	}
	t.DialContext = d.DialContext
	e.byIP[ip] = t
	return t
}

// CloseIdleConnections closes every pool's idle connections.
func (e *egressTransport) CloseIdleConnections() {
	e.base.CloseIdleConnections()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.byIP {
		t.CloseIdleConnections()
	}
}
