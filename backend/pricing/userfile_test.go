package pricing

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseFile: a pricing file needs entries with a model and valid prices;
// an entry without a source is listed with the file's.
func TestParseFile(t *testing.T) {
	for _, c := range []struct{ name, data, err string }{
		{"not JSON", `{`, "not a pricing file"},
		{"no entries", `{}`, `no "entries" array`},
		{"no model", `{"entries":[{"inputPerMTok":1}]}`, "entries[0]: model must be"},
		{"negative", `{"entries":[{"model":"m","inputPerMTok":-1}]}`, "inputPerMTok must be a non-negative number"},
		{"twice", `{"entries":[{"model":"m"},{"model":"m"}]}`, "listed twice"},
		{"good", `{"entries":[{"model":"m","inputPerMTok":1,"outputPerMTok":2},{"provider":"openai","model":"m","inputPerMTok":3,"source":"mine"}]}`, ""},
	} {
		got, err := ParseFile([]byte(c.data), "file /x.json")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != 2 || got[0].Source != "file /x.json" || got[1].Source != "mine" || got[0].Origin != OriginFile {
			t.Errorf("%s: %+v %v", c.name, got, err)
		}
	}
}

// TestUserFileWinsOverTheCatalogue: the file's price for a provider's model,
// then its model-wide price, win over the shipped one; a connection's
// override still wins over the file; the catalogue lists both with origins.
func TestUserFileWinsOverTheCatalogue(t *testing.T) {
	tb := newTable(t)
	entries, err := ParseFile([]byte(`{"entries":[
		{"provider":"openai","model":"gpt-4o-mini","inputPerMTok":7,"outputPerMTok":8},
		{"model":"gpt-4o","inputPerMTok":5,"outputPerMTok":6},
		{"model":"my-local","inputPerMTok":0.5,"outputPerMTok":0.5}]}`), "file /p.json")
	if err != nil {
		t.Fatal(err)
	}
	tb.SetUser(entries)
	for _, c := range []struct {
		provider, model string
		in              float64
	}{
		{"openai", "gpt-4o-mini", 7},
		{"codex", "gpt-4o-mini", 7},        // priced as the API it stands in for
		{"openai", "gpt-4o-2024-08-06", 5}, // model-wide, dated name
		{"openai-compatible:h", "my-local", 0.5},
		{"openai", "gpt-4.1", 2}, // not in the file: shipped
	} {
		if p, ok := tb.Lookup(c.provider, c.model); !ok || p.InputPerMTok != c.in {
			t.Errorf("%s/%s: %+v %v, want input %v", c.provider, c.model, p, ok, c.in)
		}
	}
	tb.SetOverride("c1", Override{Pricing: map[string]Price{"gpt-4o-mini": {InputPerMTok: 100}}})
	if ch := tb.Charge("c1", "openai", "gpt-4o-mini", Usage{Prompt: 1_000_000}); ch.USD != 100 {
		t.Errorf("the connection's override: %+v", ch)
	}
	cat := tb.Catalogue()
	var file, shipped int
	for _, e := range cat {
		switch e.Origin {
		case OriginFile:
			file++
		case OriginShipped:
			shipped++
		}
	}
	if file != 3 || shipped < 20 || file+shipped != len(cat) {
		t.Errorf("catalogue: %d from the file, %d shipped of %d", file, shipped, len(cat))
	}
	tb.SetUser(nil)
	if p, _ := tb.Lookup("openai", "gpt-4o-mini"); p.InputPerMTok != 0.15 {
		t.Errorf("without the file: %+v", p)
	}
}

// TestFileLoader: a file is loaded, reloaded when it changes, a bad version
// keeps the good entries (with its error kept), a missing file is an error,
// "" removes the entries.
func TestFileLoader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prices.json")
	write := func(s string, mod time.Time) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	tb := newTable(t)
	l := NewFileLoader(tb, func() time.Time { return now })
	price := func() float64 { p, _ := tb.Lookup("openai", "gpt-4o-mini"); return p.InputPerMTok }

	if err := l.Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing: %v", err)
	}
	if err := l.Load("relative.json"); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("relative: %v", err)
	}
	write(`{"entries":[{"model":"gpt-4o-mini","inputPerMTok":9,"outputPerMTok":9}]}`, now)
	if err := l.Load(path); err != nil || price() != 9 {
		t.Fatalf("load: %v, price %v", err, price())
	}
	if st := l.State(); st.Path != path || st.Entries != 1 || st.Error != "" || !st.LoadedAt.Equal(now) {
		t.Fatalf("state %+v", st)
	}
	if changed, err := l.Poll(path); changed || err != nil {
		t.Fatalf("an unchanged file was reloaded: %v %v", changed, err)
	}
	write(`{"entries":[{"model":"gpt-4o-mini","inputPerMTok":11,"outputPerMTok":9}]}`, now.Add(time.Second))
	if changed, err := l.Poll(path); !changed || err != nil || price() != 11 {
		t.Fatalf("changed file: %v %v, price %v", changed, err, price())
	}
	write(`{"entries":[{"model":"gpt-4o-mini","inputPerMTok":-1}]}`, now.Add(2*time.Second))
	if changed, err := l.Poll(path); !changed || err == nil || price() != 11 {
		t.Fatalf("a bad version: %v %v, price %v (want the good one kept)", changed, err, price())
	}
	if st := l.State(); !strings.Contains(st.Error, "non-negative") || st.Entries != 1 {
		t.Fatalf("state after a bad version %+v", st)
	}
	if changed, _ := l.Poll(path); changed {
		t.Fatal("the same bad version was read again")
	}
	if changed, err := l.Poll(""); !changed || err != nil || price() != 0.15 || l.State() != nil {
		t.Fatalf("no file: %v %v, price %v", changed, err, price())
	}
}

// TestCheckNeverQuotesTheFile: a file that is not a pricing file (a secret,
// a binary) is refused without any of its content in the error.
func TestCheckNeverQuotesTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, data string }{
		{"text", "Secret-token-ABC\n"},
		{"number", "9876543210"},
		{"an out-of-range price", `{"entries":[{"model":"m","inputPerMTok":1e999}]}`},
		{"a price of the wrong type", `{"entries":[{"model":"m","inputPerMTok":"Qzx"}]}`},
		{"trailing data", `{"entries":[]} Zq`},
	} {
		path := filepath.Join(dir, "f.json")
		if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Check(path)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, leak := range []string{"Secret", "'", "9876", "1e999", "Qzx", "Zq"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: the error %q quotes the file (%q)", c.name, err, leak)
			}
		}
	}
}

// TestPricesAreBounded: a price above $10,000 per million tokens is refused
// (in a file too); a cost is always finite, even at a price stored before
// prices were bounded.
func TestPricesAreBounded(t *testing.T) {
	big := 1e308
	for _, p := range []Price{{InputPerMTok: 10_000.01}, {OutputPerMTok: 1e308}, {CachedInputPerMTok: &big},
		{ReasoningPerMTok: &big}, {CacheWritePerMTok: &big}} {
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "at most 10000") {
			t.Errorf("%+v: %v, want refused", p, err)
		}
	}
	if err := (Price{InputPerMTok: 10_000, OutputPerMTok: 10_000}).Validate(); err != nil {
		t.Errorf("at the bound: %v", err)
	}
	if _, err := ParseFile([]byte(`{"entries":[{"model":"m","inputPerMTok":1e308}]}`), "f"); err == nil {
		t.Error("a file price of 1e308 accepted")
	}
	for _, c := range []struct {
		p    Price
		u    Usage
		want float64
	}{
		{Price{InputPerMTok: 1e308, OutputPerMTok: 1e308}, Usage{Prompt: 1e9, Output: 1e9}, MaxCostUSD},
		{Price{InputPerMTok: math.NaN()}, Usage{Prompt: 10}, MaxCostUSD},
		{Price{InputPerMTok: 10_000, OutputPerMTok: 10_000}, Usage{Prompt: 1e9, Output: 1e9}, 2e7},
	} {
		if got := c.p.Of(c.u); got != c.want {
			t.Errorf("%+v of %+v: %v, want %v", c.p, c.u, got, c.want)
		}
	}
}
