package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		addr   string
		wantOK bool
	}{
		{"loopback free port", "127.0.0.1:0", true},
		{"bad address", "127.0.0.1:notaport", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			runCtx, stop := context.WithCancel(ctx)
			defer stop()
			go func() {
				err := run(runCtx, tc.addr, 3, pw)
				pw.CloseWithError(io.EOF)
				done <- err
			}()
			line, readErr := bufio.NewReader(pr).ReadString('\n')
			if !tc.wantOK {
				if err := <-done; err == nil {
					t.Fatal("run succeeded on a bad address")
				}
				return
			}
			if readErr != nil || !strings.HasPrefix(line, "listening on http://127.0.0.1:") {
				t.Fatalf("first line %q (%v)", line, readErr)
			}
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			base := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions",
				strings.NewReader(`{"model":"m","stream":true}`))
			req.Header.Set("Authorization", "Bearer key-a")
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.Count(string(body), "data: ") != 3+3 {
				t.Errorf("status %d body %s", resp.StatusCode, body)
			}
			stop()
			if err := <-done; err != nil {
				t.Errorf("run returned %v after stop", err)
			}
		})
	}
}
