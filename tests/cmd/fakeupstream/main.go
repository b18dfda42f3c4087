// Command fakeupstream serves the fake LLM provider of package
// omniroute/tests/fakeupstream on a TCP address, for end-to-end tests and
// benchmarks that drive the real gateway binary. Faults are scripted over
// HTTP under /_fake/ (see the package documentation).
//
//	go run ./tests/cmd/fakeupstream -addr 127.0.0.1:0
//
// The first line on stdout is "listening on http://HOST:PORT"; SIGINT or
// SIGTERM stops it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"omniroute/tests/fakeupstream"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (port 0 picks a free port)")
	chunks := flag.Int("chunks", fakeupstream.DefaultStreamChunks, "content chunks per streamed answer")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *chunks, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		os.Exit(1)
	}
}

// run serves the fake on addr until ctx ends, announcing the URL on out.
func run(ctx context.Context, addr string, chunks int, out io.Writer) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	u := fakeupstream.New()
	u.SetStreamChunks(chunks)
	if _, err := fmt.Fprintf(out, "listening on http://%s\n", l.Addr()); err != nil {
		_ = l.Close()
		return err
	}
	served := make(chan error, 1)
	go func() { served <- u.Serve(l) }()
	select {
	case <-ctx.Done():
		u.Close()
		return <-served
	case err := <-served:
		u.Close()
		return err
	}
}
