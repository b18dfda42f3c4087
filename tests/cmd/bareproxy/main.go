// Command bareproxy serves tests/bench/bareproxy on loopback: the bare
// httputil.ReverseProxy that make bench measures the gateway against.
//
//	go run ./tests/cmd/bareproxy -upstream http://127.0.0.1:PORT [-addr 127.0.0.1:0]
//
// It prints "listening on http://ADDR" once it accepts connections and runs
// until SIGINT or SIGTERM. Only loopback addresses are accepted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"omniroute/tests/bench/bareproxy"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	upstream := flag.String("upstream", "", "upstream base URL, e.g. http://127.0.0.1:8080 (loopback only)")
	flag.Parse()
	if err := run(*addr, *upstream); err != nil {
		fmt.Fprintln(os.Stderr, "bareproxy:", err)
		os.Exit(1)
	}
}

func run(addr, upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || !loopback(u.Hostname()) {
		return fmt.Errorf("-upstream must be an http URL on loopback, got %q", upstream)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !loopback(host) {
		return fmt.Errorf("-addr must be a loopback host:port, got %q", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: bareproxy.New(u), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("listening on http://%s\n", l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
