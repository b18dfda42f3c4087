// Package bareproxy is the yardstick of the gateway's benchmarks: a bare
// net/http/httputil.ReverseProxy to one upstream, doing nothing a gateway
// does (no auth, routing, validation, logging or resilience). What the
// gateway costs beyond it is the price of its features.
package bareproxy

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// New returns a reverse proxy to target (e.g. http://127.0.0.1:PORT) with the
// same upstream pool size as the gateway's transport. Event streams are
// flushed as they arrive (ReverseProxy does that for text/event-stream).
func New(target *url.URL) http.Handler {
	p := httputil.NewSingleHostReverseProxy(target)
	p.Transport = &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	p.ErrorLog = log.New(io.Discard, "", 0)
	return p
}
