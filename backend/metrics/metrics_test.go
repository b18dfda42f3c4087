package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// fakeState is a fixed State.
type fakeState struct {
	breakers                 map[string]string
	cooling, terminal, total int
	lockouts, leases         int
	inFlight                 int64
}

func (s fakeState) BreakerStates() map[string]string { return s.breakers }
func (s fakeState) ConnectionCounts() (int, int, int) {
	return s.cooling, s.terminal, s.total
}
func (s fakeState) Lockouts() int     { return s.lockouts }
func (s fakeState) ActiveLeases() int { return s.leases }
func (s fakeState) InFlight() int64   { return s.inFlight }

// libraryMetrics is the exposition as the Prometheus client library wrote it
// (the implementation this package replaced), the reference the hand-written
// one must match byte for byte.
type libraryMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	attempts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	auth     *prometheus.CounterVec
	spend    *prometheus.CounterVec
}

func newLibraryMetrics(state State) *libraryMetrics {
	m := &libraryMetrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omniroute_requests_total", Help: helpRequests}, []string{"format", "status"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omniroute_upstream_attempts_total", Help: helpAttempts}, []string{"provider", "verdict"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "omniroute_request_duration_seconds", Help: helpDuration,
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}, []string{"format"})
	m.auth = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omniroute_auth_failures_total", Help: helpAuth}, []string{"route", "result"})
	goroutines := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "omniroute_goroutines", Help: helpGoroutines},
		func() float64 { return fixedGoroutines })
	m.spend = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omniroute_spend_usd_total", Help: helpSpend}, []string{"key", "model", "provider"})
	m.reg.MustRegister(m.requests, m.attempts, m.latency, m.auth, m.spend, libraryState{state}, goroutines)
	return m
}

// fixedGoroutines stands for runtime.NumGoroutine in both expositions, which
// are read at different moments.
const fixedGoroutines = 42

func (m *libraryMetrics) Request(format string, status int, seconds float64) {
	m.requests.WithLabelValues(format, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(format).Observe(seconds)
}

func (m *libraryMetrics) Attempt(provider, verdict string) {
	m.attempts.WithLabelValues(provider, verdict).Inc()
}

func (m *libraryMetrics) Spend(key, model, provider string, usd float64) {
	m.spend.WithLabelValues(key, model, provider).Add(usd)
}

func (m *libraryMetrics) AuthFailure(route, result string) {
	m.auth.WithLabelValues(route, result).Inc()
}

// libraryState is the removed stateCollector, descriptors included.
type libraryState struct{ s State }

func (libraryState) descs() (breaker, conns, lockouts, leases, inFlight *prometheus.Desc) {
	return prometheus.NewDesc("omniroute_breaker_state", helpBreaker, []string{"provider", "state"}, nil),
		prometheus.NewDesc("omniroute_connections", helpConns, []string{"availability"}, nil),
		prometheus.NewDesc("omniroute_model_lockouts", helpLockouts, nil, nil),
		prometheus.NewDesc("omniroute_leases_active", helpLeases, nil, nil),
		prometheus.NewDesc("omniroute_requests_in_flight", helpInFlight, nil, nil)
}

func (c libraryState) Describe(ch chan<- *prometheus.Desc) {
	a, b, d, e, f := c.descs()
	for _, x := range []*prometheus.Desc{a, b, d, e, f} {
		ch <- x
	}
}

func (c libraryState) Collect(ch chan<- prometheus.Metric) {
	breaker, conns, lockouts, leases, inFlight := c.descs()
	for provider, state := range c.s.BreakerStates() {
		ch <- prometheus.MustNewConstMetric(breaker, prometheus.GaugeValue, 1, provider, state)
	}
	cooling, terminal, total := c.s.ConnectionCounts()
	ch <- prometheus.MustNewConstMetric(conns, prometheus.GaugeValue, float64(cooling), "cooling_down")
	ch <- prometheus.MustNewConstMetric(conns, prometheus.GaugeValue, float64(terminal), "terminal")
	ch <- prometheus.MustNewConstMetric(conns, prometheus.GaugeValue, float64(total-cooling-terminal), "available")
	ch <- prometheus.MustNewConstMetric(lockouts, prometheus.GaugeValue, float64(c.s.Lockouts()))
	ch <- prometheus.MustNewConstMetric(leases, prometheus.GaugeValue, float64(c.s.ActiveLeases()))
	ch <- prometheus.MustNewConstMetric(inFlight, prometheus.GaugeValue, float64(c.s.InFlight()))
}

// get serves one GET /metrics from h, as a text-format scraper asks for it
// (no protobuf, no compression), and returns the Content-Type and the body.
func get(t *testing.T, h http.Handler) (contentType, body string) {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	b, _ := io.ReadAll(rec.Body)
	return rec.Header().Get("Content-Type"), string(b)
}

func TestExpositionMatchesTheClientLibrary(t *testing.T) {
	type op struct {
		request bool
		auth    bool
		spend   bool
		a, b, c string
		usd     float64
		status  int
		seconds float64
	}
	cases := []struct {
		name  string
		state fakeState
		ops   []op
	}{
		{name: "no traffic, no providers", state: fakeState{total: 0}},
		{name: "traffic and state", state: fakeState{
			breakers: map[string]string{"openai-compatible": "closed", "anthropic": "open", "codex": "half_open"},
			cooling:  1, terminal: 2, total: 7, lockouts: 3, leases: 4, inFlight: 5,
		}, ops: []op{
			{request: true, a: "openai", status: 200, seconds: 0.0012},
			{request: true, a: "openai", status: 200, seconds: 0.005}, // exactly a bound: in le="0.005"
			{request: true, a: "openai", status: 429, seconds: 0.0051},
			{request: true, a: "openai", status: 1000, seconds: 0.3},
			{request: true, a: "anthropic", status: 502, seconds: 2.5},
			{request: true, a: "responses", status: 200, seconds: 163.84},
			{request: true, a: "responses", status: 200, seconds: 1e6}, // above every bound: +Inf only
			{request: true, a: "responses", status: 0, seconds: 0},
			{a: "openai-compatible", b: "rate_limit"},
			{a: "openai-compatible", b: "ok"},
			{a: "openai-compatible", b: "ok"},
			{a: "anthropic", b: "server_error"},
			{auth: true, a: "management", b: "refused"},
			{auth: true, a: "client", b: "throttled"},
			{auth: true, a: "client", b: "refused"},
			{auth: true, a: "client", b: "refused"},
			{spend: true, a: "key_1", b: "gpt-4o", c: "openai", usd: 0.0125},
			{spend: true, a: "key_1", b: "claude-haiku-4-5", c: "claude", usd: 0},
			{spend: true, a: "", b: "gpt-4o", c: "openai", usd: 1.5},
		}},
		{name: "label values that need escaping", state: fakeState{
			breakers: map[string]string{"we\"ird\\name\nx": "closed"}, total: 1,
		}, ops: []op{
			{request: true, a: "a\"b", status: 200, seconds: 1},
			{a: `back\slash`, b: "new\nline"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ours, lib := New(tc.state), newLibraryMetrics(tc.state)
			ours.goroutines = func() int { return fixedGoroutines }
			for i := 0; i < 3; i++ { // counts above 1, sums of several values
				for _, o := range tc.ops {
					if o.request {
						ours.Request(o.a, o.status, o.seconds)
						lib.Request(o.a, o.status, o.seconds)
					} else if o.spend {
						ours.Spend(o.a, o.b, o.c, o.usd)
						lib.Spend(o.a, o.b, o.c, o.usd)
					} else if o.auth {
						ours.AuthFailure(o.a, o.b)
						lib.AuthFailure(o.a, o.b)
					} else {
						ours.Attempt(o.a, o.b)
						lib.Attempt(o.a, o.b)
					}
				}
			}
			gotType, got := get(t, ours.Handler())
			_, want := get(t, promhttp.HandlerFor(lib.reg, promhttp.HandlerOpts{}))
			if got != want {
				t.Fatalf("exposition differs from the client library's\n--- ours:\n%s\n--- library:\n%s", got, want)
			}
			if !strings.HasPrefix(gotType, "text/plain; version=0.0.4") {
				t.Fatalf("Content-Type %q", gotType)
			}
			// And Prometheus's own parser reads it.
			p := expfmt.NewTextParser(model.UTF8Validation)
			if _, err := p.TextToMetricFamilies(strings.NewReader(got)); err != nil {
				t.Fatalf("the text parser rejects the exposition: %v\n%s", err, got)
			}
		})
	}
}

// The counts stay exact when requests finish on many goroutines at once
// (run with -race).
func TestConcurrentCountsAreExact(t *testing.T) {
	m := New(fakeState{})
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				m.Request("openai", 200, float64(i%3)) // 0, 1, 2 s
				m.Attempt("p", strconv.Itoa(w%2))
				if i%100 == 0 {
					_ = m.AppendText(nil) // scrapes while counting
				}
			}
		})
	}
	wg.Wait()
	_, body := get(t, m.Handler())
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := fams["omniroute_requests_total"].GetMetric()[0].GetCounter().GetValue(); got != workers*each {
		t.Fatalf("requests_total = %v, want %d", got, workers*each)
	}
	h := fams["omniroute_request_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != workers*each {
		t.Fatalf("histogram count = %d, want %d", h.GetSampleCount(), workers*each)
	}
	// i%3 over 0..499: 167 zeros, 167 ones, 166 twos per worker.
	if want := float64(workers * (167*1 + 166*2)); h.GetSampleSum() != want {
		t.Fatalf("histogram sum = %v, want %v", h.GetSampleSum(), want)
	}
	var attempts float64
	for _, mm := range fams["omniroute_upstream_attempts_total"].GetMetric() {
		attempts += mm.GetCounter().GetValue()
	}
	if attempts != workers*each {
		t.Fatalf("attempts = %v, want %d", attempts, workers*each)
	}
}

// Recording a request whose label set was seen before allocates nothing: it
// runs once per request on the hot path.
func TestRequestAllocatesNothingForAKnownSeries(t *testing.T) {
	m := New(fakeState{})
	m.Request("openai", 200, 0.01)
	m.Attempt("p", "ok")
	if n := testing.AllocsPerRun(100, func() {
		m.Request("openai", 200, 0.01)
		m.Attempt("p", "ok")
	}); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}

func BenchmarkRequest(b *testing.B) {
	m := New(fakeState{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Request("openai", 200, float64(i%1000)/1000)
		m.Attempt("openai-compatible", "ok")
	}
}

// The goroutine gauge reads the process's goroutines at scrape time.
func TestGoroutinesGauge(t *testing.T) {
	m := New(fakeState{})
	started, release := make(chan struct{}), make(chan struct{})
	const extra = 50
	var wg sync.WaitGroup
	for range extra {
		wg.Go(func() { started <- struct{}{}; <-release })
		<-started
	}
	defer func() { close(release); wg.Wait() }()
	_, body := get(t, m.Handler())
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got := fams["omniroute_goroutines"].GetMetric()[0].GetGauge().GetValue()
	if got < extra+1 {
		t.Fatalf("omniroute_goroutines = %v with %d goroutines parked", got, extra)
	}
}
