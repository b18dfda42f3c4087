// Command loadgen is a fixed-rate (open-loop) HTTP load generator for the
// gateway's benchmarks. It sends chat requests on a time-based schedule that
// does not wait for responses, and measures every latency from the request's
// scheduled send time, so a slow server cannot hide its queueing delay
// (no coordinated omission).
//
//	go run ./tests/cmd/loadgen -url http://127.0.0.1:PORT/v1/chat/completions \
//	    -key K -rate 500 -duration 10s [-stream] [-model m] [-warmup 2s] [-json]
//
// A URL ending in /v1/messages gets Anthropic requests (x-api-key), any other
// OpenAI ones (Bearer). Only loopback targets are accepted: this tool is for
// local benchmarks. It is bounded in count (rate × duration) and time and
// stops by itself (or on SIGINT/SIGTERM, printing what it measured so far).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Limits that keep a run bounded whatever the flags say.
const (
	maxRate     = 100_000
	maxDuration = time.Hour
	maxWarmup   = 10 * time.Minute
	maxRequests = 10_000_000
)

// config is a run's parameters, as given by the flags.
type config struct {
	url         string
	key         string
	model       string
	rate        float64
	duration    time.Duration
	warmup      time.Duration
	timeout     time.Duration
	stream      bool
	maxInFlight int
	jsonOut     bool
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", "", "target URL, e.g. http://127.0.0.1:20128/v1/chat/completions (loopback only)")
	flag.StringVar(&c.key, "key", "loadgen", "API key sent as Bearer (OpenAI) or x-api-key (Anthropic)")
	flag.StringVar(&c.model, "model", "gpt-4o-mini", "model of the requests")
	flag.Float64Var(&c.rate, "rate", 100, "requests per second (constant schedule)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured phase length")
	flag.DurationVar(&c.warmup, "warmup", 0, "unmeasured phase before the measured one, at the same rate")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Second, "per-request timeout")
	flag.BoolVar(&c.stream, "stream", false, "ask for SSE streams (reports time to first and last byte)")
	flag.IntVar(&c.maxInFlight, "max-inflight", 4096, "bound on concurrent requests; a send beyond it counts as dropped_max_inflight")
	flag.BoolVar(&c.jsonOut, "json", false, "print one JSON object instead of text")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	if c.jsonOut {
		err = json.NewEncoder(os.Stdout).Encode(rep)
	} else {
		err = rep.writeText(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// validate checks c is a bounded run against a loopback target.
func (c config) validate() error {
	u, err := url.Parse(c.url)
	if err != nil {
		return fmt.Errorf("bad -url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("-url must be http(s), got %q", c.url)
	}
	if !isLoopback(u.Hostname()) {
		return fmt.Errorf("-url host %q is not loopback: loadgen only targets this machine", u.Hostname())
	}
	switch {
	case !(c.rate > 0 && c.rate <= maxRate):
		return fmt.Errorf("-rate must be in (0, %d]", maxRate)
	case c.duration <= 0 || c.duration > maxDuration:
		return fmt.Errorf("-duration must be in (0, %s]", maxDuration)
	case c.warmup < 0 || c.warmup > maxWarmup:
		return fmt.Errorf("-warmup must be in [0, %s]", maxWarmup)
	case c.timeout <= 0:
		return errors.New("-timeout must be positive")
	case c.maxInFlight < 1:
		return errors.New("-max-inflight must be at least 1")
	case c.count(c.warmup)+c.count(c.duration) > maxRequests:
		return fmt.Errorf("rate × (warmup + duration) exceeds %d requests", maxRequests)
	}
	return nil
}

// isLoopback accepts "localhost" and loopback IP literals, without resolving
// any name.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// count is how many requests the schedule sends in d.
func (c config) count(d time.Duration) int {
	return int(math.Floor(c.rate*d.Seconds() + 1e-9)) // epsilon: 100 × 0.29s is 28.999…
}

// anthropic reports whether the target speaks the Anthropic format.
func (c config) anthropic() bool {
	u, err := url.Parse(c.url)
	return err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v1/messages")
}

// requestBody is the JSON every request sends.
func (c config) requestBody() []byte {
	m := map[string]any{
		"model":    c.model,
		"stream":   c.stream,
		"messages": []map[string]string{{"role": "user", "content": "Say hello."}},
	}
	if c.anthropic() {
		m["max_tokens"] = 64
	}
	b, _ := json.Marshal(m)
	return b
}

// result is the outcome of one measured request.
type result struct {
	kind    string        // "" when ok, else status_NNN or an error kind
	latency time.Duration // scheduled send → last byte
	ttfb    time.Duration // scheduled send → first body byte
}

// run executes the schedule and summarises the measured phase.
func run(ctx context.Context, c config) (*report, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.warmup+c.duration+c.timeout+5*time.Second)
	defer cancel()
	tr := &http.Transport{
		Proxy:               nil, // never go through a proxy from the environment
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        c.maxInFlight,
		MaxIdleConnsPerHost: c.maxInFlight,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s := &sender{cfg: c, client: client, body: c.requestBody(), anthropic: c.anthropic(),
		bufs: sync.Pool{New: func() any { return new([16 << 10]byte) }}}

	warmN, measN := c.count(c.warmup), c.count(c.duration)
	results := make([]result, measN)
	sent := make([]bool, measN)
	sem := make(chan struct{}, c.maxInFlight)
	var wg sync.WaitGroup
	interval := float64(time.Second) / c.rate
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	start := time.Now()
	measStart := start.Add(time.Duration(float64(warmN) * interval))
	var lastSend time.Time
	scheduled := 0
loop:
	for i := 0; i < warmN+measN; i++ {
		at := start.Add(time.Duration(float64(i) * interval))
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break loop
			}
		} else if ctx.Err() != nil {
			break loop
		}
		scheduled = i + 1
		m := i - warmN // index in the measured phase, negative during warmup
		select {
		case sem <- struct{}{}:
		default:
			if m >= 0 {
				results[m] = result{kind: "dropped_max_inflight"}
			}
			continue
		}
		if m >= 0 {
			sent[m] = true
			lastSend = time.Now()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.do(ctx, at)
			<-sem
			if m >= 0 {
				results[m] = r
			}
		}()
	}
	wg.Wait()
	end := time.Now()
	measured := max(scheduled-warmN, 0)
	return summarise(c, results[:measured], sent[:measured], measStart, lastSend, end), nil
}

// sender issues one request.
type sender struct {
	cfg       config
	client    *http.Client
	body      []byte
	anthropic bool
	bufs      sync.Pool // *[16 << 10]byte read buffers
}

// do sends one request scheduled at at and reads the whole answer.
func (s *sender) do(ctx context.Context, at time.Time) result {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.url, bytes.NewReader(s.body))
	if err != nil {
		return result{kind: "bad_request"}
	}
	req.Header.Set("Content-Type", "application/json")
	if s.anthropic {
		req.Header.Set("X-Api-Key", s.cfg.key)
		req.Header.Set("Anthropic-Version", "2023-06-01")
	} else {
		req.Header.Set("Authorization", "Bearer "+s.cfg.key)
	}
	if s.cfg.stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return result{kind: errKind(err)}
	}
	defer resp.Body.Close()
	var r result
	buf := s.bufs.Get().(*[16 << 10]byte)
	defer s.bufs.Put(buf)
	var tail [64]byte // last bytes seen, to check a stream's end marker
	tl := 0
	total := 0
	for {
		n, err := resp.Body.Read(buf[:])
		if n > 0 {
			if total == 0 {
				r.ttfb = time.Since(at)
			}
			total += n
			tl = keepTail(&tail, tl, buf[:n])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return result{kind: "body_" + errKind(err)}
		}
	}
	r.latency = time.Since(at)
	switch {
	case resp.StatusCode != http.StatusOK:
		r.kind = "status_" + strconv.Itoa(resp.StatusCode)
	case total == 0:
		r.kind = "empty_body"
	case s.cfg.stream && !streamComplete(tail[:tl], s.anthropic):
		r.kind = "incomplete_stream"
	}
	return r
}

// keepTail appends chunk to the tl bytes held in tail, keeping only the
// last len(tail) bytes, and returns the new length.
func keepTail(tail *[64]byte, tl int, chunk []byte) int {
	if len(chunk) >= len(tail) {
		return copy(tail[:], chunk[len(chunk)-len(tail):])
	}
	keep := min(tl, len(tail)-len(chunk))
	copy(tail[:], tail[tl-keep:tl])
	return keep + copy(tail[keep:], chunk)
}

// streamComplete reports whether a stream ended with its format's end marker.
func streamComplete(tail []byte, anthropic bool) bool {
	if anthropic {
		return bytes.Contains(tail, []byte("message_stop"))
	}
	return bytes.Contains(tail, []byte("[DONE]"))
}

// errKind names a transport error for the error table.
func errKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "conn_refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "conn_reset"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected_eof"
	case errors.Is(err, io.EOF):
		return "eof"
	case errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EMFILE):
		return "no_local_resources"
	}
	return "other"
}

// percentiles summarises a latency distribution, in microseconds.
type percentiles struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, or 0 for an empty slice.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// The epsilon keeps float noise (0.999×1000 = 999.0000000000001) from
	// bumping an exact rank to the next sample.
	rank := int(math.Ceil(p/100*float64(n) - 1e-9))
	return sorted[min(max(rank, 1), n)-1]
}

func summarize(ds []time.Duration) percentiles {
	if len(ds) == 0 {
		return percentiles{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return percentiles{
		Count: len(ds),
		Mean:  us(sum / time.Duration(len(ds))),
		P50:   us(percentile(ds, 50)),
		P90:   us(percentile(ds, 90)),
		P99:   us(percentile(ds, 99)),
		P999:  us(percentile(ds, 99.9)),
		Max:   us(ds[len(ds)-1]),
	}
}

// report is what a run prints; -json prints it as is so scripts can compare
// a direct run with a through-gateway run.
type report struct {
	URL          string         `json:"url"`
	Model        string         `json:"model"`
	Stream       bool           `json:"stream"`
	TargetRate   float64        `json:"target_rate"`
	DurationS    float64        `json:"duration_s"`
	WarmupS      float64        `json:"warmup_s"`
	Scheduled    int            `json:"scheduled"`
	Sent         int            `json:"sent"`
	OK           int            `json:"ok"`
	Errors       map[string]int `json:"errors"`
	AchievedRate float64        `json:"achieved_rate"`
	Throughput   float64        `json:"throughput"`
	Latency      percentiles    `json:"latency_us"`
	TTFB         percentiles    `json:"ttfb_us"`
}

// summarise builds the report of the measured phase: latencies of ok
// requests, errors by kind, the send rate achieved and the ok throughput.
func summarise(c config, results []result, sent []bool, measStart, lastSend, end time.Time) *report {
	rep := &report{
		URL: c.url, Model: c.model, Stream: c.stream, TargetRate: c.rate,
		DurationS: c.duration.Seconds(), WarmupS: c.warmup.Seconds(),
		Scheduled: len(results), Errors: map[string]int{},
	}
	var lat, ttfb []time.Duration
	for i, r := range results {
		if sent[i] {
			rep.Sent++
		}
		if r.kind != "" {
			rep.Errors[r.kind]++
			continue
		}
		rep.OK++
		lat = append(lat, r.latency)
		ttfb = append(ttfb, r.ttfb)
	}
	if rep.Sent > 0 {
		// The sends of the measured phase span lastSend-measStart plus one
		// interval (the slot of the last send).
		window := lastSend.Sub(measStart).Seconds() + 1/c.rate
		rep.AchievedRate = float64(rep.Sent) / window
	}
	if d := end.Sub(measStart).Seconds(); d > 0 {
		rep.Throughput = float64(rep.OK) / d
	}
	rep.Latency, rep.TTFB = summarize(lat), summarize(ttfb)
	return rep
}

// writeText prints the report for people.
func (r *report) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "target        %s (model %s, stream %v)\n", r.URL, r.Model, r.Stream)
	fmt.Fprintf(&b, "schedule      %.0f req/s for %gs (warmup %gs): %d scheduled\n", r.TargetRate, r.DurationS, r.WarmupS, r.Scheduled)
	fmt.Fprintf(&b, "sent          %d\n", r.Sent)
	fmt.Fprintf(&b, "ok            %d\n", r.OK)
	errs := 0
	for _, n := range r.Errors {
		errs += n
	}
	fmt.Fprintf(&b, "errors        %d\n", errs)
	kinds := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %-22s %d\n", k, r.Errors[k])
	}
	fmt.Fprintf(&b, "achieved rate %.1f req/s sent, %.1f ok/s completed\n", r.AchievedRate, r.Throughput)
	line := func(name string, p percentiles) {
		fmt.Fprintf(&b, "%-13s p50 %.0f  p90 %.0f  p99 %.0f  p99.9 %.0f  max %.0f  (mean %.0f, n=%d)\n",
			name, p.P50, p.P90, p.P99, p.P999, p.Max, p.Mean, p.Count)
	}
	if r.Stream {
		line("ttlb µs", r.Latency)
		line("ttfb µs", r.TTFB)
	} else {
		line("latency µs", r.Latency)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
