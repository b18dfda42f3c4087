package api

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/store"
	"omniroute/backend/usagestats"
)

// usageRange is one chart window: Buckets buckets of Bucket each.
type usageRange struct {
	Name    string
	Bucket  time.Duration
	Buckets int
}

// usageRanges are the windows the Usage page offers; each is at most 96 buckets,
// so a chart never has more points than that per series, whatever the log holds.
var usageRanges = map[string]usageRange{
	"hour": {"hour", time.Minute, 60},
	"day":  {"day", 15 * time.Minute, 96},
	"week": {"week", 2 * time.Hour, 84},
}

// usageTop is how many series a chart shows before folding the rest into "Other".
const usageTop = 8

// timelineLimit bounds the state changes one timeline reads.
const timelineLimit = 2000

var usageDims = map[string]store.UsageDimension{
	"connection": store.ByConnection, "model": store.ByModel, "key": store.ByKey, "provider": store.ByProvider,
}

func (a *API) usageRoutes(m *mux.Router) {
	m.HandleFunc("/usage", a.management(a.usage)).Methods(http.MethodGet)
	m.HandleFunc("/usage.csv", a.management(a.usageCSV)).Methods(http.MethodGet)
	m.HandleFunc("/usage/timeline", a.management(a.usageTimeline)).Methods(http.MethodGet)
}

// UsageSeries is one line of a chart: per-bucket values and their totals.
type UsageSeries struct {
	Key          string  `json:"key"`
	Label        string  `json:"label"`
	Requests     []int64 `json:"requests"`
	Errors       []int64 `json:"errors"`
	TokensIn     []int64 `json:"tokensIn"`
	TokensOut    []int64 `json:"tokensOut"`
	TokensCached []int64 `json:"tokensCached"`
	// CostUSD is the spend per bucket at the connections' prices, SavedUSD
	// what flat-rate answers would have cost at API prices, Unpriced the
	// served requests whose price is unknown (their cost is not in CostUSD).
	CostUSD  []float64   `json:"costUsd"`
	SavedUSD []float64   `json:"savedUsd"`
	Unpriced []int64     `json:"unpriced"`
	Total    UsageTotals `json:"total"`
}

// UsageTotals sums a series (or everything).
type UsageTotals struct {
	Requests     int64   `json:"requests"`
	Errors       int64   `json:"errors"`
	TokensIn     int64   `json:"tokensIn"`
	TokensOut    int64   `json:"tokensOut"`
	TokensCached int64   `json:"tokensCached"`
	CostUSD      float64 `json:"costUsd"`
	SavedUSD     float64 `json:"savedUsd"`
	Unpriced     int64   `json:"unpriced"`
}

// UsageLatency is the report's latency percentiles (usagestats).
type UsageLatency = usagestats.Latency

// UsageReport is GET /api/usage.
type UsageReport struct {
	Range    string        `json:"range"`
	By       string        `json:"by"`
	From     time.Time     `json:"from"`
	To       time.Time     `json:"to"`
	BucketMs int64         `json:"bucketMs"`
	Buckets  int           `json:"buckets"`
	Series   []UsageSeries `json:"series"`
	Totals   UsageTotals   `json:"totals"`
	Latency  UsageLatency  `json:"latency"`
	// Points is how many numbers the report carries (bounded by buckets × series).
	Points int `json:"points"`
}

// usageWindow is one report's window: [From, To) in Buckets buckets of
// Bucket; Name is the range ("hour", "day", "week" or "custom").
type usageWindow struct {
	Name    string
	Bucket  time.Duration
	Buckets int
	From    time.Time
	To      time.Time
}

// maxCustomBuckets bounds a custom range's buckets (a chart's points per series).
const maxCustomBuckets = 200

func (a *API) usageParams(r *http.Request) (usageWindow, string, error) {
	q := r.URL.Query()
	by := q.Get("by")
	if by == "" {
		by = "connection"
	}
	if _, ok := usageDims[by]; !ok {
		return usageWindow{}, "", errInvalidQuery("by", "by must be connection, model, key or provider")
	}
	if q.Get("from") != "" || q.Get("to") != "" {
		win, err := a.customWindow(q.Get("from"), q.Get("to"))
		return win, by, err
	}
	name := q.Get("range")
	if name == "" || name == "auto" {
		name = a.fittingRange()
	}
	rg, ok := usageRanges[name]
	if !ok {
		return usageWindow{}, "", errInvalidQuery("range", "range must be auto, hour, day or week")
	}
	from, to := window(rg, a.Clock.Now())
	return usageWindow{Name: rg.Name, Bucket: rg.Bucket, Buckets: rg.Buckets, From: from, To: to}, by, nil
}

// customWindow is the window of from / to (RFC 3339 or Unix ms; from
// required, to defaulting to now): the finest rollup resolution still kept
// at from whose buckets over the span number at most maxCustomBuckets, from
// rounded down and to up to its buckets (to at most the bucket after now).
func (a *API) customWindow(fromQ, toQ string) (usageWindow, error) {
	now := a.Clock.Now().UnixMilli()
	if fromQ == "" {
		return usageWindow{}, errInvalidQuery("from", "a custom range needs from (to defaults to now)")
	}
	from, ok := parseInstant(fromQ)
	if !ok {
		return usageWindow{}, errInvalidQuery("from", "from must be an RFC 3339 time or Unix milliseconds")
	}
	to := now
	if toQ != "" {
		if to, ok = parseInstant(toQ); !ok {
			return usageWindow{}, errInvalidQuery("to", "to must be an RFC 3339 time or Unix milliseconds")
		}
	}
	if to <= from {
		return usageWindow{}, errInvalidQuery("to", "to must be after from")
	}
	for _, res := range store.RollupResolutions {
		if from < now-res.KeepMs+res.Res {
			continue // this resolution no longer holds from
		}
		b := res.Res
		start, end := from/b*b, min((to+b-1)/b*b, (now/b+1)*b)
		if end <= start {
			end = start + b
		}
		if n := (end - start) / b; n <= maxCustomBuckets {
			return usageWindow{Name: "custom", Bucket: time.Duration(b) * time.Millisecond, Buckets: int(n),
				From: time.UnixMilli(start).UTC(), To: time.UnixMilli(end).UTC()}, nil
		}
	}
	last := store.RollupResolutions[len(store.RollupResolutions)-1]
	return usageWindow{}, errInvalidQuery("from", fmt.Sprintf("usage is kept for %d days: from must be at or after %s",
		last.KeepMs/86_400_000, time.UnixMilli(now-last.KeepMs+last.Res).UTC().Format(time.RFC3339)))
}

// fittingRange is the default range: the shortest of hour, day and week
// that holds every request of the last week, so a new install's few minutes
// of traffic fill the chart instead of a one-pixel sliver of a day.
func (a *API) fittingRange() string {
	now := a.Clock.Now()
	first, err := a.Store.FirstRequestLogSince(now.Add(-7 * 24 * time.Hour).UnixMilli())
	if err != nil || first == 0 {
		return "hour"
	}
	for _, name := range []string{"hour", "day"} {
		if from, _ := window(usageRanges[name], now); first >= from.UnixMilli() {
			return name
		}
	}
	return "week"
}

// window returns [from, to) ending at the bucket boundary after now.
func window(rg usageRange, now time.Time) (time.Time, time.Time) {
	b := rg.Bucket.Milliseconds()
	to := (now.UnixMilli()/b + 1) * b
	return time.UnixMilli(to - int64(rg.Buckets)*b).UTC(), time.UnixMilli(to).UTC()
}

// UsageReport builds the chart data for a range ("hour", "day", "week") split by
// "connection", "model", "key" or "provider" with two bounded index scans and
// one histogram scan of the request log.
func (a *API) UsageReport(rangeName, by string) (UsageReport, error) {
	rg, ok := usageRanges[rangeName]
	if !ok {
		return UsageReport{}, errs.New(errs.Invalid, "INVALID_QUERY", "unknown range or dimension")
	}
	from, to := window(rg, a.Clock.Now())
	return a.usageReport(usageWindow{Name: rg.Name, Bucket: rg.Bucket, Buckets: rg.Buckets, From: from, To: to}, by)
}

// usageReport builds the chart data of one window.
func (a *API) usageReport(rg usageWindow, by string) (UsageReport, error) {
	dim, okDim := usageDims[by]
	if !okDim {
		return UsageReport{}, errs.New(errs.Invalid, "INVALID_QUERY", "unknown range or dimension")
	}
	from, to := rg.From, rg.To
	q := store.UsageQuery{From: from.UnixMilli(), To: to.UnixMilli(), BucketMs: rg.Bucket.Milliseconds(), Dim: dim}
	cells, err := a.Store.Usage(q)
	if err != nil {
		return UsageReport{}, err
	}
	// The top keys by requests get a series each; the rest fold into "Other".
	counts := map[string]int64{}
	for _, c := range cells {
		counts[c.Key] += c.Requests
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	top := map[string]bool{}
	for _, k := range keys[:min(len(keys), usageTop)] {
		top[k] = true
	}
	rep := UsageReport{Range: rg.Name, By: by, From: from, To: to, BucketMs: q.BucketMs, Buckets: rg.Buckets, Series: []UsageSeries{}}
	index := map[string]int{}
	add := func(key string) *UsageSeries {
		i, ok := index[key]
		if !ok {
			n := rg.Buckets
			rep.Series = append(rep.Series, UsageSeries{Key: key, Label: a.usageLabel(by, key), Requests: make([]int64, n),
				Errors: make([]int64, n), TokensIn: make([]int64, n), TokensOut: make([]int64, n), TokensCached: make([]int64, n),
				CostUSD: make([]float64, n), SavedUSD: make([]float64, n), Unpriced: make([]int64, n)})
			i = len(rep.Series) - 1
			index[key] = i
		}
		return &rep.Series[i]
	}
	for _, k := range keys[:min(len(keys), usageTop)] {
		add(k)
	}
	hist := make([][]int64, rg.Buckets)
	for _, c := range cells {
		if c.Bucket < 0 || c.Bucket >= rg.Buckets {
			continue
		}
		key := c.Key
		if !top[key] {
			key = store.OtherKey
		}
		s := add(key)
		s.Requests[c.Bucket] += c.Requests
		s.Errors[c.Bucket] += c.Errors
		s.TokensIn[c.Bucket] += c.TokensIn
		s.TokensOut[c.Bucket] += c.TokensOut
		s.TokensCached[c.Bucket] += c.TokensCached
		s.CostUSD[c.Bucket] += c.CostUSD
		s.SavedUSD[c.Bucket] += c.SavedUSD
		s.Unpriced[c.Bucket] += c.Unpriced
		for _, t := range []*UsageTotals{&s.Total, &rep.Totals} {
			t.CostUSD += c.CostUSD
			t.SavedUSD += c.SavedUSD
			t.Unpriced += c.Unpriced
			t.Requests += c.Requests
			t.Errors += c.Errors
			t.TokensIn += c.TokensIn
			t.TokensOut += c.TokensOut
			t.TokensCached += c.TokensCached
		}
		if hist[c.Bucket] == nil {
			hist[c.Bucket] = make([]int64, len(c.Latency))
		}
		for i, n := range c.Latency {
			hist[c.Bucket][i] += n
		}
	}
	rep.Latency = usagestats.Percentiles(hist)
	rep.Points = len(rep.Series)*8*rg.Buckets + 3*rg.Buckets
	return rep, nil
}

// usageLabel names a series the way every page does: the connection's name, the
// key's name, the provider's display name, the model as is.
func (a *API) usageLabel(by, key string) string {
	if key == store.OtherKey {
		return "Other"
	}
	if key == "" {
		if by == "connection" || by == "provider" {
			return "Refused before routing"
		}
		return "(none)"
	}
	switch by {
	case "connection":
		if c, ok := a.Engine.Registry().Get(key); ok {
			return c.Name
		}
		return key + " (deleted)"
	case "key":
		if n := a.Keys.NameOf(key); n != "" {
			return n
		}
		return key + " (deleted)"
	case "provider":
		for _, c := range a.Engine.Registry().All() {
			if c.BreakerKey == key {
				return providerDisplayName(c)
			}
		}
	}
	return key
}

func (a *API) usage(w http.ResponseWriter, r *http.Request) {
	if rep, _, _, ok := a.usageFor(w, r); ok {
		httpx.WriteJSON(w, http.StatusOK, rep)
	}
}

// usageFor reads the request's range and dimension and builds the report; on
// an error it has answered it and ok is false.
func (a *API) usageFor(w http.ResponseWriter, r *http.Request) (rep UsageReport, rangeName, by string, ok bool) {
	rg, by, err := a.usageParams(r)
	if err == nil {
		rep, err = a.usageReport(rg, by)
	}
	if err != nil {
		httpx.WriteError(w, err)
		return rep, "", "", false
	}
	return rep, rg.Name, by, true
}

// usageCSV exports the same data as one row per bucket and series.
func (a *API) usageCSV(w http.ResponseWriter, r *http.Request) {
	rep, rangeName, by, ok := a.usageFor(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="omniroute-usage-`+rangeName+`-by-`+by+`.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"bucket_start", by, "label", "requests", "errors", "tokens_in", "tokens_out", "tokens_cached", "cost_usd", "saved_usd"})
	for i := 0; i < rep.Buckets; i++ {
		at := rep.From.Add(time.Duration(int64(i)*rep.BucketMs) * time.Millisecond).Format(time.RFC3339)
		for _, s := range rep.Series {
			if s.Requests[i] == 0 {
				continue
			}
			_ = cw.Write([]string{at, s.Key, s.Label, i64(s.Requests[i]), i64(s.Errors[i]), i64(s.TokensIn[i]),
				i64(s.TokensOut[i]), i64(s.TokensCached[i]), usd(s.CostUSD[i]), usd(s.SavedUSD[i])})
		}
	}
	cw.Flush()
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// usd writes an amount with the precision a price per token needs.
func usd(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// TimelineSegment and TimelineRow are the timeline's JSON (usagestats).
type (
	TimelineSegment = usagestats.TimelineSegment
	TimelineRow     = usagestats.TimelineRow
)

// usageTimeline answers the breaker / cooldown timeline per provider for a range.
func (a *API) usageTimeline(w http.ResponseWriter, r *http.Request) {
	rg, _, err := a.usageParams(r)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	now := a.Clock.Now()
	from, to := rg.From, rg.To
	events, err := a.Store.StateEvents(from.UnixMilli(), to.UnixMilli(), timelineLimit)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	end := now
	if to.Before(now) {
		end = to
	}
	rows := usagestats.Timeline(events, from, end)
	for i := range rows {
		rows[i].Name = a.usageLabel("provider", rows[i].Provider)
		for j := range rows[i].Segments {
			if id := rows[i].Segments[j].ConnectionID; id != "" {
				rows[i].Segments[j].Connection = a.usageLabel("connection", id)
			}
		}
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"range": rg.Name, "from": from, "to": to, "providers": rows})
}
