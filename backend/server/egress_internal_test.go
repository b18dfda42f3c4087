package server

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/backend/providers"
)

// TestEgressRefusesSwitchingProtocols: every client of the egress transport
// (the executors, the OAuth refresher, model discovery) gets an error for an
// upstream's 101 Switching Protocols, whose body would be the raw connection
// out of reach of the request's context, and the connection is closed at once.
func TestEgressRefusesSwitchingProtocols(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	closed := make(chan struct{}, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		if _, err := c.Read(buf); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		_, _ = io.Copy(io.Discard, c) // until the gateway closes it
		closed <- struct{}{}
	}()
	e := newEgressTransport(newTransport())
	defer e.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, "http://"+l.Addr().String()+"/v1/models", strings.NewReader(""))
	resp, err := (&http.Client{Transport: e}).Do(req)
	var ie *providers.InterimStatusError
	if err == nil || !errors.As(err, &ie) || ie.Status != http.StatusSwitchingProtocols {
		if resp != nil {
			resp.Body.Close()
		}
		t.Fatalf("err %v, want an InterimStatusError for 101", err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the 101 connection is still open")
	}
}
