package usagestats

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/store"
)

func TestRangeAt(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 34, 56, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		from, to time.Time
		buckets  int
	}{
		{"hour", time.Date(2026, 12, 3, 11, 35, 0, 0, time.UTC), time.Date(2026, 12, 3, 12, 35, 0, 0, time.UTC), 60},
		{"day", time.Date(2026, 12, 2, 12, 45, 0, 0, time.UTC), time.Date(2026, 12, 3, 12, 45, 0, 0, time.UTC), 96},
		{"week", time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC), time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC), 84},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rg, ok := RangeNamed(tc.name)
			if !ok {
				t.Fatal("unknown")
			}
			w := rg.At(now)
			if w.Name != tc.name || !w.From.Equal(tc.from) || !w.To.Equal(tc.to) || w.Buckets != tc.buckets ||
				w.To.Sub(w.From) != time.Duration(w.Buckets)*w.Bucket {
				t.Errorf("got %+v", w)
			}
		})
	}
	for _, name := range []string{"", "auto", "year", "Hour"} {
		if _, ok := RangeNamed(name); ok {
			t.Errorf("RangeNamed(%q) is a range", name)
		}
	}
}

func TestCustomWindow(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 30, 0, time.UTC).UnixMilli()
	const minute, quarter, twoHours, day = int64(60_000), int64(900_000), int64(7_200_000), int64(86_400_000)
	for _, tc := range []struct {
		name     string
		from, to int64
		bucket   int64
		start    int64
		buckets  int
		param    string
	}{
		{name: "last 30 minutes by minute", from: now - 30*minute, to: now, bucket: minute, start: (now - 30*minute) / minute * minute, buckets: 31},
		{name: "to past now stops at the bucket after now", from: now - 10*minute, to: now + day, bucket: minute, start: (now - 10*minute) / minute * minute, buckets: 11},
		{name: "170 minutes by minute", from: now - 170*minute, to: now, bucket: minute, start: (now - 170*minute) / minute * minute, buckets: 171},
		{name: "190 minutes: minutes no longer kept at from", from: now - 190*minute, to: now, bucket: quarter, start: (now - 190*minute) / quarter * quarter, buckets: 14},
		{name: "a day takes quarter hours", from: now - day, to: now, bucket: quarter, start: (now - day) / quarter * quarter, buckets: 97},
		{name: "past 3 hours: minutes no longer kept", from: now - 4*3_600_000, to: now - 3*3_600_000 - 30*minute, bucket: quarter, start: (now - 4*3_600_000) / quarter * quarter, buckets: 3},
		{name: "a week takes two hours", from: now - 7*day, to: now, bucket: twoHours, start: (now - 7*day) / twoHours * twoHours, buckets: 85},
		{name: "to before from", from: now - minute, to: now - 2*minute, param: "to"},
		{name: "to equal to from", from: now - minute, to: now - minute, param: "to"},
		{name: "older than kept", from: now - 10*day, to: now, param: "from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := CustomWindow(tc.from, tc.to, now)
			if tc.param != "" {
				e := errs.As(err)
				if err == nil || e.Code != "INVALID_QUERY" || e.Class != errs.Invalid || e.Param != tc.param {
					t.Fatalf("err = %+v, want INVALID_QUERY on %s", e, tc.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != "custom" || w.Bucket.Milliseconds() != tc.bucket || w.From.UnixMilli() != tc.start || w.Buckets != tc.buckets ||
				w.To.UnixMilli() != tc.start+int64(tc.buckets)*tc.bucket {
				t.Errorf("got %+v (from %d, %d buckets of %d), want from %d, %d buckets of %d", w, w.From.UnixMilli(), w.Buckets, w.Bucket.Milliseconds(), tc.start, tc.buckets, tc.bucket)
			}
		})
	}
}

func TestFittingRange(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 30, 0, time.UTC)
	hour, _ := RangeNamed("hour")
	day, _ := RangeNamed("day")
	for _, tc := range []struct {
		name  string
		first int64
		want  string
	}{
		{"no request", 0, "hour"},
		{"a minute ago", now.Add(-time.Minute).UnixMilli(), "hour"},
		{"at the hour's start", hour.At(now).From.UnixMilli(), "hour"},
		{"just before the hour", hour.At(now).From.UnixMilli() - 1, "day"},
		{"at the day's start", day.At(now).From.UnixMilli(), "day"},
		{"just before the day", day.At(now).From.UnixMilli() - 1, "week"},
	} {
		if got := FittingRange(tc.first, now); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestDimensionAndFixedLabel(t *testing.T) {
	for by, want := range map[string]store.UsageDimension{"connection": store.ByConnection, "model": store.ByModel, "key": store.ByKey, "provider": store.ByProvider} {
		if got, ok := Dimension(by); !ok || got != want {
			t.Errorf("Dimension(%q) = %q, %v", by, got, ok)
		}
	}
	if _, ok := Dimension("team"); ok {
		t.Error("team is a dimension")
	}
	for _, tc := range []struct {
		by, key, want string
		ok            bool
	}{
		{"model", store.OtherKey, "Other", true},
		{"connection", "", "Refused before routing", true},
		{"provider", "", "Refused before routing", true},
		{"key", "", "(none)", true},
		{"model", "", "(none)", true},
		{"connection", "c1", "", false},
	} {
		if got, ok := FixedLabel(tc.by, tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("FixedLabel(%q, %q) = %q, %v", tc.by, tc.key, got, ok)
		}
	}
}

func TestBuild(t *testing.T) {
	win := Window{Name: "hour", Bucket: time.Minute, Buckets: 3, From: time.UnixMilli(0).UTC(), To: time.UnixMilli(180_000).UTC()}
	label := func(key string) string { return "L:" + key }
	cell := func(bucket int, key string, requests int64) store.UsageCell {
		return store.UsageCell{Bucket: bucket, Key: key, Requests: requests, Errors: 1, TokensIn: 10 * requests, TokensOut: 2,
			TokensCached: 1, CostUSD: 0.5, SavedUSD: 0.25, Unpriced: 1, Latency: []int64{requests, 0}}
	}
	t.Run("empty", func(t *testing.T) {
		rep := Build(win, "model", nil, label)
		if rep.Series == nil || len(rep.Series) != 0 || rep.Totals != (Totals{}) || rep.Points != 9 || rep.BucketMs != 60_000 || rep.Range != "hour" || rep.By != "model" {
			t.Errorf("got %+v", rep)
		}
	})
	t.Run("series, totals and the out of window cell", func(t *testing.T) {
		rep := Build(win, "model", []store.UsageCell{cell(0, "b", 2), cell(2, "a", 2), cell(1, "a", 1), cell(3, "a", 100), cell(-1, "c", 100)}, label)
		var keys []string
		for _, s := range rep.Series {
			keys = append(keys, s.Key+"/"+s.Label)
		}
		// a has 103 requests in the cells (the ordering counts every cell), b 2, c 100.
		if want := []string{"a/L:a", "c/L:c", "b/L:b"}; !reflect.DeepEqual(keys, want) {
			t.Fatalf("series %v, want %v", keys, want)
		}
		a := rep.Series[0]
		if !reflect.DeepEqual(a.Requests, []int64{0, 1, 2}) || a.Total.Requests != 3 || a.Total.CostUSD != 1 || a.Total.TokensIn != 30 {
			t.Errorf("a = %+v", a)
		}
		if c := rep.Series[1]; c.Total != (Totals{}) {
			t.Errorf("c's only cell is outside the window, got %+v", c.Total)
		}
		want := Totals{Requests: 5, Errors: 3, TokensIn: 50, TokensOut: 6, TokensCached: 3, CostUSD: 1.5, SavedUSD: 0.75, Unpriced: 3}
		if rep.Totals != want {
			t.Errorf("totals %+v, want %+v", rep.Totals, want)
		}
		if rep.Points != 3*8*3+3*3 {
			t.Errorf("points %d", rep.Points)
		}
	})
	t.Run("keys past the top fold into Other", func(t *testing.T) {
		var cells []store.UsageCell
		for i := range Top + 3 {
			cells = append(cells, cell(0, fmt.Sprintf("k%02d", i), int64(100-i)))
		}
		rep := Build(win, "key", cells, label)
		if len(rep.Series) != Top+1 {
			t.Fatalf("%d series, want %d", len(rep.Series), Top+1)
		}
		other := rep.Series[Top]
		if other.Key != store.OtherKey || other.Requests[0] != int64(100-Top)+int64(100-Top-1)+int64(100-Top-2) || other.Label != "L:"+store.OtherKey {
			t.Errorf("other = %+v", other)
		}
		if rep.Series[0].Key != "k00" || rep.Series[Top-1].Key != fmt.Sprintf("k%02d", Top-1) {
			t.Errorf("top order %s … %s", rep.Series[0].Key, rep.Series[Top-1].Key)
		}
	})
	t.Run("ties by key", func(t *testing.T) {
		rep := Build(win, "model", []store.UsageCell{cell(0, "z", 1), cell(0, "m", 1), cell(0, "a", 1)}, label)
		if rep.Series[0].Key != "a" || rep.Series[1].Key != "m" || rep.Series[2].Key != "z" {
			t.Errorf("order %v", rep.Series)
		}
	})
}
