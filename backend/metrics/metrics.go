// Package metrics exposes the gateway's state and traffic in the Prometheus
// text format at GET /metrics. Live state (breakers, cooldowns, lockouts,
// leases) is read at scrape time; traffic is counted as requests finish.
package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// State is what a scrape reads from the running gateway.
type State interface {
	// BreakerStates maps provider → state name.
	BreakerStates() map[string]string
	// ConnectionCounts returns coolingDown, terminal and total connections.
	ConnectionCounts() (coolingDown, terminal, total int)
	Lockouts() int
	ActiveLeases() int
	InFlight() int64
}

// Metrics owns one Prometheus registry (no global default registry).
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	attempts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// New registers the gateway's collectors over state.
func New(state State) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omniroute_requests_total",
		Help: "Client inference requests by wire format and HTTP status."}, []string{"format", "status"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omniroute_upstream_attempts_total",
		Help: "Upstream attempts by provider and verdict."}, []string{"provider", "verdict"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "omniroute_request_duration_seconds",
		Help: "Client request duration (to the last byte for streams).", Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)},
		[]string{"format"})
	m.reg.MustRegister(m.requests, m.attempts, m.latency, stateCollector{state})
	return m
}

// Handler serves the registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Request counts one finished client request.
func (m *Metrics) Request(format string, status int, seconds float64) {
	m.requests.WithLabelValues(format, statusLabel(status)).Inc()
	m.latency.WithLabelValues(format).Observe(seconds)
}

// statusLabel is strconv.Itoa(status) without an allocation for the statuses
// every request ends with (it is called once per request).
func statusLabel(status int) string {
	switch status {
	case 200:
		return "200"
	case 400:
		return "400"
	case 401:
		return "401"
	case 403:
		return "403"
	case 404:
		return "404"
	case 413:
		return "413"
	case 429:
		return "429"
	case 500:
		return "500"
	case 502:
		return "502"
	case 503:
		return "503"
	case 504:
		return "504"
	}
	return strconv.Itoa(status)
}

// Attempt counts one upstream attempt.
func (m *Metrics) Attempt(provider, verdict string) {
	m.attempts.WithLabelValues(provider, verdict).Inc()
}

var (
	descBreaker  = prometheus.NewDesc("omniroute_breaker_state", "Provider circuit breaker state (1 for the current state).", []string{"provider", "state"}, nil)
	descConns    = prometheus.NewDesc("omniroute_connections", "Connections by availability.", []string{"availability"}, nil)
	descLockouts = prometheus.NewDesc("omniroute_model_lockouts", "Active model lockouts.", nil, nil)
	descLeases   = prometheus.NewDesc("omniroute_leases_active", "Active exclusive session leases.", nil, nil)
	descInFlight = prometheus.NewDesc("omniroute_requests_in_flight", "Inference requests being served.", nil, nil)
)

type stateCollector struct{ s State }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBreaker, descConns, descLockouts, descLeases, descInFlight} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	for provider, state := range c.s.BreakerStates() {
		ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, 1, provider, state)
	}
	cooling, terminal, total := c.s.ConnectionCounts()
	ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(cooling), "cooling_down")
	ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(terminal), "terminal")
	ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(total-cooling-terminal), "available")
	ch <- prometheus.MustNewConstMetric(descLockouts, prometheus.GaugeValue, float64(c.s.Lockouts()))
	ch <- prometheus.MustNewConstMetric(descLeases, prometheus.GaugeValue, float64(c.s.ActiveLeases()))
	ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(c.s.InFlight()))
}
