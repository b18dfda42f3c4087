package usagestats

import (
	"fmt"
	"sort"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/store"
)

// Range is one chart window the Usage page offers: Buckets buckets of Bucket each.
type Range struct {
	Name    string
	Bucket  time.Duration
	Buckets int
}

// RangeNamed is the range "hour", "day" or "week"; each is at most 96
// buckets, so a chart never has more points than that per series, whatever
// the log holds.
func RangeNamed(name string) (Range, bool) {
	switch name {
	case "hour":
		return Range{"hour", time.Minute, 60}, true
	case "day":
		return Range{"day", 15 * time.Minute, 96}, true
	case "week":
		return Range{"week", 2 * time.Hour, 84}, true
	}
	return Range{}, false
}

// Window is one report's window: [From, To) in Buckets buckets of Bucket;
// Name is the range ("hour", "day", "week" or "custom").
type Window struct {
	Name    string
	Bucket  time.Duration
	Buckets int
	From    time.Time
	To      time.Time
}

// At is the range's window ending at the bucket boundary after now.
func (rg Range) At(now time.Time) Window {
	b := rg.Bucket.Milliseconds()
	to := (now.UnixMilli()/b + 1) * b
	return Window{Name: rg.Name, Bucket: rg.Bucket, Buckets: rg.Buckets,
		From: time.UnixMilli(to - int64(rg.Buckets)*b).UTC(), To: time.UnixMilli(to).UTC()}
}

// MaxCustomBuckets bounds a custom range's buckets (a chart's points per series).
const MaxCustomBuckets = 200

// invalidQuery is the INVALID_QUERY error of one query parameter.
func invalidQuery(param, msg string) error {
	return errs.New(errs.Invalid, "INVALID_QUERY", "%s", msg).WithParam(param)
}

// CustomWindow is the window of [from, to) (Unix ms; to after from) at now:
// the finest rollup resolution still kept at from whose buckets over the
// span number at most MaxCustomBuckets, from rounded down and to up to its
// buckets (to at most the bucket after now). A from older than the usage
// kept is INVALID_QUERY on "from", a to not after from on "to".
func CustomWindow(from, to, now int64) (Window, error) {
	if to <= from {
		return Window{}, invalidQuery("to", "to must be after from")
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
		if n := (end - start) / b; n <= MaxCustomBuckets {
			return Window{Name: "custom", Bucket: time.Duration(b) * time.Millisecond, Buckets: int(n),
				From: time.UnixMilli(start).UTC(), To: time.UnixMilli(end).UTC()}, nil
		}
	}
	last := store.RollupResolutions[len(store.RollupResolutions)-1]
	return Window{}, invalidQuery("from", fmt.Sprintf("usage is kept for %d days: from must be at or after %s",
		last.KeepMs/86_400_000, time.UnixMilli(now-last.KeepMs+last.Res).UTC().Format(time.RFC3339)))
}

// FittingRange is the default range: the shortest of hour, day and week
// that holds every request of the last week (first is the first one's Unix
// ms, 0 for none), so a new install's few minutes of traffic fill the chart
// instead of a one-pixel sliver of a day.
func FittingRange(first int64, now time.Time) string {
	if first == 0 {
		return "hour"
	}
	for _, name := range []string{"hour", "day"} {
		rg, _ := RangeNamed(name)
		if first >= rg.At(now).From.UnixMilli() {
			return name
		}
	}
	return "week"
}

// Dimension is the store dimension a report splits by: "connection",
// "model", "key" or "provider".
func Dimension(by string) (store.UsageDimension, bool) {
	switch by {
	case "connection":
		return store.ByConnection, true
	case "model":
		return store.ByModel, true
	case "key":
		return store.ByKey, true
	case "provider":
		return store.ByProvider, true
	}
	return "", false
}

// Top is how many series a chart shows before folding the rest into "Other".
const Top = 8

// Series is one line of a chart: per-bucket values and their totals.
type Series struct {
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
	CostUSD  []float64 `json:"costUsd"`
	SavedUSD []float64 `json:"savedUsd"`
	Unpriced []int64   `json:"unpriced"`
	Total    Totals    `json:"total"`
}

// Totals sums a series (or everything).
type Totals struct {
	Requests     int64   `json:"requests"`
	Errors       int64   `json:"errors"`
	TokensIn     int64   `json:"tokensIn"`
	TokensOut    int64   `json:"tokensOut"`
	TokensCached int64   `json:"tokensCached"`
	CostUSD      float64 `json:"costUsd"`
	SavedUSD     float64 `json:"savedUsd"`
	Unpriced     int64   `json:"unpriced"`
}

// add adds one cell to the totals.
func (t *Totals) add(c store.UsageCell) {
	t.CostUSD += c.CostUSD
	t.SavedUSD += c.SavedUSD
	t.Unpriced += c.Unpriced
	t.Requests += c.Requests
	t.Errors += c.Errors
	t.TokensIn += c.TokensIn
	t.TokensOut += c.TokensOut
	t.TokensCached += c.TokensCached
}

// Report is the Usage page's chart data (GET /api/usage).
type Report struct {
	Range    string    `json:"range"`
	By       string    `json:"by"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	BucketMs int64     `json:"bucketMs"`
	Buckets  int       `json:"buckets"`
	Series   []Series  `json:"series"`
	Totals   Totals    `json:"totals"`
	Latency  Latency   `json:"latency"`
	// Points is how many numbers the report carries (bounded by buckets × series).
	Points int `json:"points"`
}

// Build makes the report of one window split by by from the store's cells
// of that window: the Top keys by requests get a series each (most
// requests first, then by key), the rest fold into store.OtherKey; label
// names a series' key. Cells outside the window's buckets are dropped.
func Build(win Window, by string, cells []store.UsageCell, label func(key string) string) Report {
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
	for _, k := range keys[:min(len(keys), Top)] {
		top[k] = true
	}
	rep := Report{Range: win.Name, By: by, From: win.From, To: win.To, BucketMs: win.Bucket.Milliseconds(), Buckets: win.Buckets, Series: []Series{}}
	index := map[string]int{}
	add := func(key string) *Series {
		i, ok := index[key]
		if !ok {
			n := win.Buckets
			rep.Series = append(rep.Series, Series{Key: key, Label: label(key), Requests: make([]int64, n),
				Errors: make([]int64, n), TokensIn: make([]int64, n), TokensOut: make([]int64, n), TokensCached: make([]int64, n),
				CostUSD: make([]float64, n), SavedUSD: make([]float64, n), Unpriced: make([]int64, n)})
			i = len(rep.Series) - 1
			index[key] = i
		}
		return &rep.Series[i]
	}
	for _, k := range keys[:min(len(keys), Top)] {
		add(k)
	}
	hist := make([][]int64, win.Buckets)
	for _, c := range cells {
		if c.Bucket < 0 || c.Bucket >= win.Buckets {
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
		s.Total.add(c)
		rep.Totals.add(c)
		if hist[c.Bucket] == nil {
			hist[c.Bucket] = make([]int64, len(c.Latency))
		}
		for i, n := range c.Latency {
			hist[c.Bucket][i] += n
		}
	}
	rep.Latency = Percentiles(hist)
	rep.Points = len(rep.Series)*8*win.Buckets + 3*win.Buckets
	return rep
}

// FixedLabel is the label of a key every dimension names the same way
// ("Other", "Refused before routing", "(none)"); ok is false for a key
// the caller names (a connection's or key's name, a provider's display name).
func FixedLabel(by, key string) (label string, ok bool) {
	if key == store.OtherKey {
		return "Other", true
	}
	if key == "" {
		if by == "connection" || by == "provider" {
			return "Refused before routing", true
		}
		return "(none)", true
	}
	return "", false
}
