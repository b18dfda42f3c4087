package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"testing/fstest"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/server"
	"omniroute/tests/bench/bareproxy"
	"omniroute/tests/fakeupstream"
)

// upstreamKey is the API key the gateway's connection (and the direct client)
// presents to the fake upstream.
const upstreamKey = "bench-upstream-key"

// target is one endpoint the benchmarks send chat requests to.
type target struct {
	url    string // full /v1/chat/completions URL
	key    string // Bearer token
	model  string
	client *http.Client
	bodies map[bool][]byte // request body by stream flag
}

// newClient returns a keep-alive client sized for parallel benchmarks, never
// going through a proxy from the environment.
func newClient(b testing.TB) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func newTarget(b testing.TB, base, key, model string) *target {
	t := &target{url: base + "/v1/chat/completions", key: key, model: model, client: newClient(b), bodies: map[bool][]byte{}}
	for _, stream := range []bool{false, true} {
		// The same body tests/cmd/loadgen sends.
		body, err := json.Marshal(map[string]any{
			"model":    model,
			"stream":   stream,
			"messages": []map[string]string{{"role": "user", "content": "Say hello."}},
		})
		if err != nil {
			b.Fatal(err)
		}
		t.bodies[stream] = body
	}
	return t
}

// startFake starts a fake upstream on loopback and returns its base URL.
func startFake(b *testing.B) string {
	up := fakeupstream.New()
	base := up.Start()
	b.Cleanup(up.Close)
	return base
}

// startGateway wires a gateway over a temp data dir with one openai-compatible
// connection to upstreamBase, serves it on loopback, and returns its client
// target.
func startGateway(b testing.TB, upstreamBase string) *target {
	srv, err := server.New(server.Options{
		Process:   config.Process{DataDir: b.TempDir(), Host: "127.0.0.1", Port: 0},
		Dashboard: fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>OmniRoute</title>")}},
		Version:   "bench",
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv:    func(string) string { return "" }, // no overrides from the environment
	})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(func() {
		ts.Close()
		if err := srv.Close(); err != nil {
			b.Errorf("close gateway: %v", err)
		}
	})
	key, err := srv.DefaultKey()
	if err != nil {
		b.Fatal(err)
	}
	createConnection(b, ts.URL, srv.Token(), upstreamBase+"/v1")
	return newTarget(b, ts.URL, key, "openai-compatible/gpt-4o-mini")
}

// createConnection adds the connection through the management API, as a user would.
func createConnection(b testing.TB, gatewayBase, token, upstreamURL string) {
	createConnectionNamed(b, gatewayBase, token, upstreamURL, "bench")
}

// do sends one chat request and reads the whole answer into buf, returning an
// error unless it is a complete 200 answer.
func (t *target) do(stream bool, buf *bytes.Buffer) error {
	req, err := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(t.bodies[stream]))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	switch {
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, buf.Bytes())
	case stream && !bytes.Contains(buf.Bytes(), []byte("data: [DONE]")):
		return fmt.Errorf("stream without [DONE]: %.200s", buf.Bytes())
	case !stream && !bytes.Contains(buf.Bytes(), []byte(`"choices"`)):
		return fmt.Errorf("answer without choices: %.200s", buf.Bytes())
	}
	return nil
}

// benchTarget runs the four sub-benchmarks (json, stream, and both in parallel)
// against t.
func benchTarget(b *testing.B, t *target) {
	// One request of each kind before timing: dials the connections, fills
	// the gateway's and the fake's caches.
	var buf bytes.Buffer
	for _, stream := range []bool{false, true} {
		if err := t.do(stream, &buf); err != nil {
			b.Fatal(err)
		}
	}
	for _, stream := range []bool{false, true} {
		name := "json"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			m := startMeter()
			for b.Loop() {
				if err := t.do(stream, &buf); err != nil {
					b.Fatal(err)
				}
			}
			m.report(b)
		})
		b.Run(name+"-parallel", func(b *testing.B) {
			b.ReportAllocs()
			m := startMeter()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var buf bytes.Buffer
				for pb.Next() {
					if err := t.do(stream, &buf); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			m.report(b)
		})
	}
}

// meter measures wall time and process CPU time over a benchmark.
type meter struct {
	start time.Time
	cpu   time.Duration
}

func startMeter() meter { return meter{start: time.Now(), cpu: processCPU()} }

// report adds µs/op (wall time per request; in parallel runs, the inverse of
// throughput) and cpu-µs/op (process CPU time per request, when the platform
// tells it).
func (m meter) report(b *testing.B) {
	if b.N == 0 {
		return
	}
	wall, cpu := time.Since(m.start), processCPU()-m.cpu
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "µs/op")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// BenchmarkDirect is the baseline: the client talks to the fake upstream.
func BenchmarkDirect(b *testing.B) {
	benchTarget(b, newTarget(b, startFake(b), upstreamKey, "gpt-4o-mini"))
}

// BenchmarkGateway sends the same requests through the gateway (client key,
// model openai-compatible/gpt-4o-mini, one connection to the fake).
func BenchmarkGateway(b *testing.B) {
	benchTarget(b, startGateway(b, startFake(b)))
}

// BenchmarkProxy sends the same requests through a bare httputil.ReverseProxy
// to the fake (tests/bench/bareproxy): the yardstick the gateway is measured
// against. Compare its cpu-µs/op and allocs/op with BenchmarkGateway's.
func BenchmarkProxy(b *testing.B) {
	u, err := url.Parse(startFake(b))
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(bareproxy.New(u))
	b.Cleanup(ts.Close)
	benchTarget(b, newTarget(b, ts.URL, upstreamKey, "gpt-4o-mini"))
}
