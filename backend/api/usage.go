package api

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/store"
	"omniroute/backend/usagestats"
)

// timelineLimit bounds the state changes one timeline reads.
const timelineLimit = 2000

func (a *API) usageRoutes(m *mux.Router) {
	m.HandleFunc("/usage", a.management(a.usage)).Methods(http.MethodGet)
	m.HandleFunc("/usage.csv", a.management(a.usageCSV)).Methods(http.MethodGet)
	m.HandleFunc("/usage/timeline", a.management(a.usageTimeline)).Methods(http.MethodGet)
}

// usageParams reads the window (range, or from / to) and the dimension of a
// usage request.
func (a *API) usageParams(r *http.Request) (usagestats.Window, string, error) {
	q := r.URL.Query()
	by := q.Get("by")
	if by == "" {
		by = "connection"
	}
	if _, ok := usagestats.Dimension(by); !ok {
		return usagestats.Window{}, "", errInvalidQuery("by", "by must be connection, model, key or provider")
	}
	if q.Get("from") != "" || q.Get("to") != "" {
		win, err := a.customWindow(q.Get("from"), q.Get("to"))
		return win, by, err
	}
	name := q.Get("range")
	if name == "" || name == "auto" {
		name = a.fittingRange()
	}
	rg, ok := usagestats.RangeNamed(name)
	if !ok {
		return usagestats.Window{}, "", errInvalidQuery("range", "range must be auto, hour, day or week")
	}
	return rg.At(a.Clock.Now()), by, nil
}

// customWindow reads from / to (RFC 3339 or Unix ms; from required, to
// defaulting to now) into usagestats.CustomWindow.
func (a *API) customWindow(fromQ, toQ string) (usagestats.Window, error) {
	now := a.Clock.Now().UnixMilli()
	if fromQ == "" {
		return usagestats.Window{}, errInvalidQuery("from", "a custom range needs from (to defaults to now)")
	}
	from, ok := parseInstant(fromQ)
	if !ok {
		return usagestats.Window{}, errInvalidQuery("from", "from must be an RFC 3339 time or Unix milliseconds")
	}
	to := now
	if toQ != "" {
		if to, ok = parseInstant(toQ); !ok {
			return usagestats.Window{}, errInvalidQuery("to", "to must be an RFC 3339 time or Unix milliseconds")
		}
	}
	return usagestats.CustomWindow(from, to, now)
}

// fittingRange is the default range (usagestats.FittingRange) over the
// first request of the last week.
func (a *API) fittingRange() string {
	now := a.Clock.Now()
	first, err := a.Store.FirstRequestLogSince(now.Add(-7 * 24 * time.Hour).UnixMilli())
	if err != nil {
		first = 0
	}
	return usagestats.FittingRange(first, now)
}

// usageReport builds the chart data of one window split by by from the
// store's cells (usagestats.Build).
func (a *API) usageReport(win usagestats.Window, by string) (usagestats.Report, error) {
	dim, ok := usagestats.Dimension(by)
	if !ok {
		return usagestats.Report{}, errs.New(errs.Invalid, "INVALID_QUERY", "unknown range or dimension")
	}
	cells, err := a.Store.Usage(store.UsageQuery{From: win.From.UnixMilli(), To: win.To.UnixMilli(), BucketMs: win.Bucket.Milliseconds(), Dim: dim})
	if err != nil {
		return usagestats.Report{}, err
	}
	return usagestats.Build(win, by, cells, func(key string) string { return a.usageLabel(by, key) }), nil
}

// usageLabel names a series the way every page does: the connection's name, the
// key's name, the provider's display name, the model as is.
func (a *API) usageLabel(by, key string) string {
	if l, ok := usagestats.FixedLabel(by, key); ok {
		return l
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
func (a *API) usageFor(w http.ResponseWriter, r *http.Request) (rep usagestats.Report, rangeName, by string, ok bool) {
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
