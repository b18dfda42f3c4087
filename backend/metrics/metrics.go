// Package metrics exposes the gateway's state and traffic in the Prometheus
// text format (version 0.0.4) at GET /metrics. Live state (breakers,
// cooldowns, lockouts, leases) is read at scrape time; traffic is counted as
// requests finish.
//
// The exposition is written here rather than with the Prometheus client
// library: the gateway has three traffic families and a handful of gauges,
// and the library (with protobuf, procfs and the init-time work of its default
// registry) cost ≈ 2.5 MB of binary and ≈ 1.8 MiB of idle resident memory
// (docs/BENCHMARKS.md, issue 19). The output is what the library wrote for
// the same series: families sorted by name, series by label values, HELP and
// TYPE lines, cumulative histogram buckets with `le`, floats in Go's shortest
// form; the tests parse it with Prometheus's own text parser.
package metrics

import (
	"cmp"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// durationBuckets returns the upper bounds (seconds) of the request duration
// histogram: 5 ms doubling 16 times (the last finite bound is 163.84 s).
func durationBuckets() []float64 { return exponentialBuckets(0.005, 2, 16) }

func exponentialBuckets(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

// ContentType is the media type of the exposition.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

type requestKey struct {
	format string
	status int
}

type attemptKey struct{ provider, verdict string }

type authKey struct{ route, result string }

type spendKey struct{ key, model, provider string }

// histogram holds per-bucket (not cumulative) counts; the last slot counts
// observations above every bound (+Inf only).
type histogram struct {
	counts []uint64
	sum    float64
	count  uint64
}

// Metrics counts traffic and reads state on scrape. Safe for concurrent use.
type Metrics struct {
	state      State
	bounds     []float64  // durationBuckets(), read-only
	goroutines func() int // runtime.NumGoroutine (fixed in tests)

	mu       sync.Mutex // guards the maps and every count in them
	requests map[requestKey]float64
	attempts map[attemptKey]float64
	latency  map[string]*histogram
	auth     map[authKey]float64
	spend    map[spendKey]float64
}

// New returns the gateway's metrics over state.
func New(state State) *Metrics {
	return &Metrics{
		state:      state,
		bounds:     durationBuckets(),
		goroutines: runtime.NumGoroutine,
		requests:   make(map[requestKey]float64),
		attempts:   make(map[attemptKey]float64),
		latency:    make(map[string]*histogram),
		auth:       make(map[authKey]float64),
		spend:      make(map[spendKey]float64),
	}
}

// Request counts one finished client request.
func (m *Metrics) Request(format string, status int, seconds float64) {
	i, _ := slices.BinarySearch(m.bounds, seconds) // first bound ≥ seconds (le is inclusive)
	m.mu.Lock()
	m.requests[requestKey{format, status}]++
	h := m.latency[format]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(m.bounds)+1)}
		m.latency[format] = h
	}
	h.counts[i]++
	h.sum += seconds
	h.count++
	m.mu.Unlock()
}

// Attempt counts one upstream attempt.
func (m *Metrics) Attempt(provider, verdict string) {
	m.mu.Lock()
	m.attempts[attemptKey{provider, verdict}]++
	m.mu.Unlock()
}

// AuthFailure counts one failed authentication: route "client" or
// "management", result "refused" (a missing or wrong credential) or
// "throttled" (not checked: the source failed too often).
func (m *Metrics) AuthFailure(route, result string) {
	m.mu.Lock()
	m.auth[authKey{route, result}]++
	m.mu.Unlock()
}

// Spend adds usd to what a key spent on a provider's model (a served answer
// of known price; flat-rate answers add 0 and so appear with their series).
func (m *Metrics) Spend(key, model, provider string, usd float64) {
	m.mu.Lock()
	m.spend[spendKey{key, model, provider}] += usd
	m.mu.Unlock()
}

// Handler serves the exposition.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		_, _ = w.Write(m.AppendText(nil))
	})
}

const (
	helpBreaker    = "Provider circuit breaker state (1 for the current state)."
	helpConns      = "Connections by availability."
	helpGoroutines = "Goroutines in the gateway process (each open proxied stream has four)."
	helpLockouts   = "Active model lockouts."
	helpLeases     = "Active exclusive session leases."
	helpInFlight   = "Inference requests being served."
	helpRequests   = "Client inference requests by wire format and HTTP status."
	helpAttempts   = "Upstream attempts by provider and verdict."
	helpDuration   = "Client request duration (to the last byte for streams)."
	helpSpend      = "USD spent by client key, upstream model and provider, at the connection's prices (flat-rate connections count 0)."
	helpAuth       = "Failed authentications by route and result (refused: a missing or wrong credential; throttled: not checked, the source failed too often)."
)

// AppendText appends the whole exposition to b: the state read now and the
// traffic counted so far, families in name order.
func (m *Metrics) AppendText(b []byte) []byte {
	// State first, outside the lock: the state's own locks are never taken
	// under this one.
	breakers := m.state.BreakerStates()
	cooling, terminal, total := m.state.ConnectionCounts()
	lockouts, leases, inFlight := m.state.Lockouts(), m.state.ActiveLeases(), m.state.InFlight()
	goroutines := m.goroutines()

	type reqRow struct {
		key requestKey
		v   float64
	}
	type attRow struct {
		key attemptKey
		v   float64
	}
	type histRow struct {
		format string
		h      histogram
	}
	type authRow struct {
		key authKey
		v   float64
	}
	type spendRow struct {
		key spendKey
		v   float64
	}
	m.mu.Lock()
	spends := make([]spendRow, 0, len(m.spend))
	for k, v := range m.spend {
		spends = append(spends, spendRow{k, v})
	}
	auths := make([]authRow, 0, len(m.auth))
	for k, v := range m.auth {
		auths = append(auths, authRow{k, v})
	}
	reqs := make([]reqRow, 0, len(m.requests))
	for k, v := range m.requests {
		reqs = append(reqs, reqRow{k, v})
	}
	atts := make([]attRow, 0, len(m.attempts))
	for k, v := range m.attempts {
		atts = append(atts, attRow{k, v})
	}
	hists := make([]histRow, 0, len(m.latency))
	for f, h := range m.latency {
		hists = append(hists, histRow{f, histogram{counts: slices.Clone(h.counts), sum: h.sum, count: h.count}})
	}
	m.mu.Unlock()

	// omniroute_auth_failures_total
	if len(auths) > 0 {
		slices.SortFunc(auths, func(x, y authRow) int {
			// Labels in name order (result, route), as the library wrote them.
			return cmp.Or(strings.Compare(x.key.result, y.key.result), strings.Compare(x.key.route, y.key.route))
		})
		b = appendHeader(b, "omniroute_auth_failures_total", helpAuth, "counter")
		for _, r := range auths {
			b = appendSample(b, "omniroute_auth_failures_total", r.v, "result", r.key.result, "route", r.key.route)
		}
	}
	// omniroute_breaker_state
	if len(breakers) > 0 {
		providers := make([]string, 0, len(breakers))
		for p := range breakers {
			providers = append(providers, p)
		}
		slices.Sort(providers)
		b = appendHeader(b, "omniroute_breaker_state", helpBreaker, "gauge")
		for _, p := range providers {
			b = appendSample(b, "omniroute_breaker_state", 1, "provider", p, "state", breakers[p])
		}
	}
	// omniroute_connections: label values sorted (available, cooling_down, terminal).
	b = appendHeader(b, "omniroute_connections", helpConns, "gauge")
	b = appendSample(b, "omniroute_connections", float64(total-cooling-terminal), "availability", "available")
	b = appendSample(b, "omniroute_connections", float64(cooling), "availability", "cooling_down")
	b = appendSample(b, "omniroute_connections", float64(terminal), "availability", "terminal")
	b = appendHeader(b, "omniroute_goroutines", helpGoroutines, "gauge")
	b = appendSample(b, "omniroute_goroutines", float64(goroutines))
	b = appendHeader(b, "omniroute_leases_active", helpLeases, "gauge")
	b = appendSample(b, "omniroute_leases_active", float64(leases))
	b = appendHeader(b, "omniroute_model_lockouts", helpLockouts, "gauge")
	b = appendSample(b, "omniroute_model_lockouts", float64(lockouts))

	// omniroute_request_duration_seconds
	if len(hists) > 0 {
		slices.SortFunc(hists, func(x, y histRow) int { return strings.Compare(x.format, y.format) })
		b = appendHeader(b, "omniroute_request_duration_seconds", helpDuration, "histogram")
		for _, r := range hists {
			var cum uint64
			for i, bound := range m.bounds {
				cum += r.h.counts[i]
				b = appendUintSample(b, "omniroute_request_duration_seconds_bucket", cum, "format", r.format, "le", formatFloat(bound))
			}
			b = appendUintSample(b, "omniroute_request_duration_seconds_bucket", r.h.count, "format", r.format, "le", "+Inf")
			b = appendSample(b, "omniroute_request_duration_seconds_sum", r.h.sum, "format", r.format)
			b = appendUintSample(b, "omniroute_request_duration_seconds_count", r.h.count, "format", r.format)
		}
	}
	b = appendHeader(b, "omniroute_requests_in_flight", helpInFlight, "gauge")
	b = appendSample(b, "omniroute_requests_in_flight", float64(inFlight))

	// omniroute_requests_total: by format, then by the status as text (the
	// library sorted label values as strings).
	if len(reqs) > 0 {
		slices.SortFunc(reqs, func(x, y reqRow) int {
			return cmp.Or(strings.Compare(x.key.format, y.key.format),
				strings.Compare(strconv.Itoa(x.key.status), strconv.Itoa(y.key.status)))
		})
		b = appendHeader(b, "omniroute_requests_total", helpRequests, "counter")
		for _, r := range reqs {
			b = appendSample(b, "omniroute_requests_total", r.v, "format", r.key.format, "status", strconv.Itoa(r.key.status))
		}
	}
	// omniroute_spend_usd_total (after omniroute_requests_total by name).
	if len(spends) > 0 {
		slices.SortFunc(spends, func(x, y spendRow) int {
			return cmp.Or(strings.Compare(x.key.key, y.key.key), strings.Compare(x.key.model, y.key.model), strings.Compare(x.key.provider, y.key.provider))
		})
		b = appendHeader(b, "omniroute_spend_usd_total", helpSpend, "counter")
		for _, r := range spends {
			b = appendSample(b, "omniroute_spend_usd_total", r.v, "key", r.key.key, "model", r.key.model, "provider", r.key.provider)
		}
	}
	if len(atts) > 0 {
		slices.SortFunc(atts, func(x, y attRow) int {
			return cmp.Or(strings.Compare(x.key.provider, y.key.provider), strings.Compare(x.key.verdict, y.key.verdict))
		})
		b = appendHeader(b, "omniroute_upstream_attempts_total", helpAttempts, "counter")
		for _, r := range atts {
			b = appendSample(b, "omniroute_upstream_attempts_total", r.v, "provider", r.key.provider, "verdict", r.key.verdict)
		}
	}
	return b
}

func appendHeader(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	for i := 0; i < len(help); i++ {
		switch c := help[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

// appendLabels appends {k="v",…} for name/value pairs, or nothing.
func appendLabels(b []byte, labels []string) []byte {
	if len(labels) == 0 {
		return b
	}
	b = append(b, '{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, labels[i]...)
		b = append(b, `="`...)
		v := labels[i+1]
		for j := 0; j < len(v); j++ {
			switch c := v[j]; c {
			case '\\':
				b = append(b, `\\`...)
			case '"':
				b = append(b, `\"`...)
			case '\n':
				b = append(b, `\n`...)
			default:
				b = append(b, c)
			}
		}
		b = append(b, '"')
	}
	return append(b, '}')
}

func appendSample(b []byte, name string, v float64, labels ...string) []byte {
	b = append(b, name...)
	b = appendLabels(b, labels)
	b = append(b, ' ')
	b = append(b, formatFloat(v)...)
	return append(b, '\n')
}

func appendUintSample(b []byte, name string, v uint64, labels ...string) []byte {
	b = append(b, name...)
	b = appendLabels(b, labels)
	b = append(b, ' ')
	b = strconv.AppendUint(b, v, 10)
	return append(b, '\n')
}

// formatFloat writes a sample value as the text format expects: +Inf, -Inf,
// NaN, otherwise Go's shortest representation.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, +1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
