// Package pricing prices an answer's token usage: a catalogue of API prices
// shipped in the binary (each provider folder's prices.json, Module.Prices:
// USD per million tokens per provider and model, each entry with the date
// it was taken and its source), per
// connection overrides, and flat-rate connections (subscriptions and local
// servers) that cost nothing but report what the API would have charged.
//
// An unknown model's cost is unknown, never 0: Cost answers known false.
package pricing

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Price is one model's API prices in USD per million tokens. A nil optional
// price is charged at the price of the class it belongs to: cached reads and
// cache writes at InputPerMTok, reasoning at OutputPerMTok.
type Price struct {
	InputPerMTok       float64  `json:"inputPerMTok"`
	OutputPerMTok      float64  `json:"outputPerMTok"`
	CachedInputPerMTok *float64 `json:"cachedInputPerMTok,omitempty"`
	CacheWritePerMTok  *float64 `json:"cacheWritePerMTok,omitempty"`
	ReasoningPerMTok   *float64 `json:"reasoningPerMTok,omitempty"`
}

// MaxPerMTok bounds a price: no model costs more than $10,000 per million
// tokens, and a price past it (1e308) would make costs +Inf.
const MaxPerMTok = 10_000

// MaxCostUSD bounds one answer's computed cost (a price stored before prices
// were bounded can still be met): a cost is always a finite number.
const MaxCostUSD = 1e12

// Validate refuses negative or non-finite prices and prices above
// MaxPerMTok, in a fixed order (the first bad field is named).
func (p Price) Validate() error {
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{"inputPerMTok", &p.InputPerMTok}, {"outputPerMTok", &p.OutputPerMTok},
		{"cachedInputPerMTok", p.CachedInputPerMTok}, {"cacheWritePerMTok", p.CacheWritePerMTok}, {"reasoningPerMTok", p.ReasoningPerMTok}} {
		if f.v == nil {
			continue
		}
		if v := *f.v; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s must be a non-negative number", f.name)
		} else if v > MaxPerMTok {
			return fmt.Errorf("%s must be at most %d (USD per million tokens)", f.name, MaxPerMTok)
		}
	}
	return nil
}

// Entry is one row of the shipped catalogue.
type Entry struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Price
	// Date is when the price was read (YYYY-MM-DD); Source names where.
	Date   string `json:"date"`
	Source string `json:"source"`
	// Origin is where the entry comes from: the catalogue shipped in the
	// binary or the user's pricing file (which wins).
	Origin string `json:"origin"`
}

// Origins of a catalogue entry.
const (
	OriginShipped = "shipped"
	OriginFile    = "file"
)

// Usage is an answer's token counts as the upstream reported them. Prompt is
// every prompt token, CacheRead and CacheWrite included; Output every
// generated token, Reasoning included.
type Usage struct {
	Prompt, Output, CacheRead, CacheWrite, Reasoning int
}

// Of prices u at p, in USD. Each class is charged once: uncached prompt
// tokens at the input price, cached reads and cache writes at theirs,
// reasoning at its own and the rest of the output at the output price.
// Counts that do not add up (a subset larger than its total) are clamped,
// and so is the cost: within 0 … MaxCostUSD, never +Inf or NaN.
func (p Price) Of(u Usage) float64 {
	return finiteCost(p.of(u))
}

// finiteCost is usd within 0 … MaxCostUSD (NaN: MaxCostUSD).
func finiteCost(usd float64) float64 {
	if math.IsNaN(usd) {
		return MaxCostUSD
	}
	return min(max(usd, 0), MaxCostUSD)
}

func (p Price) of(u Usage) float64 {
	read, write := max(u.CacheRead, 0), max(u.CacheWrite, 0)
	fresh := max(u.Prompt-read-write, 0)
	reasoning := min(max(u.Reasoning, 0), max(u.Output, 0))
	visible := max(u.Output, 0) - reasoning
	cached, cacheWrite, reason := p.InputPerMTok, p.InputPerMTok, p.OutputPerMTok
	if p.CachedInputPerMTok != nil {
		cached = *p.CachedInputPerMTok
	}
	if p.CacheWritePerMTok != nil {
		cacheWrite = *p.CacheWritePerMTok
	}
	if p.ReasoningPerMTok != nil {
		reason = *p.ReasoningPerMTok
	}
	return (float64(fresh)*p.InputPerMTok + float64(read)*cached + float64(write)*cacheWrite +
		float64(visible)*p.OutputPerMTok + float64(reasoning)*reason) / 1e6
}

// Override is one connection's pricing settings: its own prices per model
// (which win over the catalogue's) and whether it is flat-rate.
type Override struct {
	// FlatRate marks a subscription or local connection: its requests cost 0
	// and report the API price as saved. Nil: the default for its provider.
	FlatRate *bool            `json:"flatRate,omitempty"`
	Pricing  map[string]Price `json:"pricing,omitempty"`
}

// Charge is what one answer cost.
type Charge struct {
	// USD is what was spent (0 on a flat-rate connection); Known is false
	// when no price is known for the model (USD is then 0 and means nothing).
	USD   float64
	Known bool
	// Saved is what a flat-rate connection's answer would have cost at API
	// prices (0 when unknown or not flat-rate).
	Saved float64
	// Flat reports a flat-rate connection.
	Flat bool
}

type key struct{ provider, model string }

// Table is the catalogue with the connections' overrides. Safe for
// concurrent use.
type Table struct {
	shipped []Entry
	byKey   map[key]Price
	byModel map[string][]Price // every provider's price of a model name (Estimate)
	// apiOf names the provider whose API prices a provider's models when it
	// has none of its own (a subscription priced as the API it stands in for).
	apiOf map[string]string
	// flatDefault lists the providers whose connections are flat-rate unless
	// an override says otherwise (subscriptions, local servers).
	flatDefault map[string]bool

	mu        sync.RWMutex
	overrides map[string]Override // connection id → override

	// users is the user's pricing file (nil: none), swapped whole.
	users atomic.Pointer[userSet]
}

// New returns the shipped catalogue merged from shipped: the provider
// modules' price lists (Module.Prices, gathered by the wiring place), each
// JSON {"entries": [...]} in Entry's shape. apiOf maps a provider to the
// provider whose API prices stand for it (e.g. "claude" → "anthropic");
// flatDefault lists the providers flat-rate by default.
func New(shipped [][]byte, apiOf map[string]string, flatDefault []string) (*Table, error) {
	entries, err := ParseShipped(shipped...)
	if err != nil {
		return nil, err
	}
	t := &Table{shipped: entries, byKey: make(map[key]Price, len(entries)), apiOf: maps.Clone(apiOf),
		byModel: map[string][]Price{}, flatDefault: map[string]bool{}, overrides: map[string]Override{}}
	for i, e := range entries {
		t.byKey[key{e.Provider, e.Model}] = e.Price
		t.byModel[e.Model] = append(t.byModel[e.Model], e.Price)
		t.shipped[i].Origin = OriginShipped
	}
	for _, p := range flatDefault {
		t.flatDefault[p] = true
	}
	return t, nil
}

// ParseShipped reads the shipped price lists (New's shipped) into one list,
// in order: every entry names its provider and model, its date and source,
// with valid prices, and no provider's model is priced twice.
func ParseShipped(shipped ...[]byte) ([]Entry, error) {
	var out []Entry
	seen := map[key]bool{}
	for _, data := range shipped {
		var doc struct {
			Entries []Entry `json:"entries"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("pricing: shipped catalogue: %w", err)
		}
		for _, e := range doc.Entries {
			if err := e.Validate(); err != nil || e.Provider == "" || e.Model == "" || e.Date == "" || e.Source == "" {
				return nil, fmt.Errorf("pricing: shipped entry %s/%s incomplete or invalid (%v)", e.Provider, e.Model, err)
			}
			k := key{e.Provider, e.Model}
			if seen[k] {
				return nil, fmt.Errorf("pricing: shipped entry %s/%s is priced twice", e.Provider, e.Model)
			}
			seen[k] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// Catalogue returns the user file's entries and the shipped ones, sorted by
// provider then model (a file entry first).
func (t *Table) Catalogue() []Entry {
	out := slices.Clone(t.shipped)
	if u := t.user(); u != nil {
		out = append(slices.Clone(u.entries), out...)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := strings.Compare(a.Provider, b.Provider); c != 0 {
			return c
		}
		if c := strings.Compare(a.Model, b.Model); c != 0 {
			return c
		}
		return strings.Compare(a.Origin, b.Origin) // "file" before "shipped"
	})
	return out
}

// Overrides returns a copy of the connections' overrides.
func (t *Table) Overrides() map[string]Override {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return maps.Clone(t.overrides)
}

// SetOverride replaces a connection's override (an empty one removes it).
func (t *Table) SetOverride(connID string, o Override) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o.FlatRate == nil && len(o.Pricing) == 0 {
		delete(t.overrides, connID)
		return
	}
	t.overrides[connID] = o
}

// ReplaceOverrides replaces every connection's override with all (the stored
// set, read again when another instance changed a connection).
func (t *Table) ReplaceOverrides(all map[string]Override) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.overrides = maps.Clone(all)
	if t.overrides == nil {
		t.overrides = map[string]Override{}
	}
}

// Override returns a connection's override.
func (t *Table) Override(connID string) (Override, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	o, ok := t.overrides[connID]
	return o, ok
}

// FlatRate reports whether connection connID of provider is flat-rate: its
// override says so, or its provider is flat-rate by default.
func (t *Table) FlatRate(connID, provider string) bool {
	t.mu.RLock()
	o, ok := t.overrides[connID]
	t.mu.RUnlock()
	if ok && o.FlatRate != nil {
		return *o.FlatRate
	}
	return t.flatDefault[baseProvider(provider)]
}

// Lookup finds the catalogue price of provider's model: the exact name, then
// the name without a dated suffix (-2025-08-07, -20250929) or -latest, each
// first in the user's pricing file (under provider, the provider whose API
// prices it, then any provider), then shipped under provider and under the
// provider whose API prices it.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	provider = baseProvider(provider)
	names, n := candidates(model)
	u := t.user()
	for _, m := range names[:n] {
		if u != nil {
			// The user's file first: under the provider, the provider whose
			// API prices it, then any provider.
			if p, ok := u.byKey[key{provider, m}]; ok {
				return p, true
			}
			if api := t.apiOf[provider]; api != "" {
				if p, ok := u.byKey[key{api, m}]; ok {
					return p, true
				}
			}
			if p, ok := u.byKey[key{"", m}]; ok {
				return p, true
			}
		}
		if p, ok := t.byKey[key{provider, m}]; ok {
			return p, true
		}
		if api := t.apiOf[provider]; api != "" {
			if p, ok := t.byKey[key{api, m}]; ok {
				return p, true
			}
		}
	}
	return Price{}, false
}

// Cost prices usage of provider's model at the catalogue's API price.
func (t *Table) Cost(provider, model string, u Usage) (usd float64, known bool) {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return 0, false
	}
	return p.Of(u), true
}

// Charge prices one answer served by connection connID of provider: the
// connection's own price for the model when it has one, else the catalogue's.
// A flat-rate connection is charged 0, with the API price as Saved.
func (t *Table) Charge(connID, provider, model string, u Usage) Charge {
	t.mu.RLock()
	o, hasO := t.overrides[connID]
	t.mu.RUnlock()
	flat := t.flatDefault[baseProvider(provider)]
	if hasO && o.FlatRate != nil {
		flat = *o.FlatRate
	}
	var p Price
	ok := false
	if hasO && len(o.Pricing) > 0 {
		names, n := candidates(model)
		for _, m := range names[:n] {
			if p, ok = o.Pricing[m]; ok {
				break
			}
		}
	}
	if !ok {
		p, ok = t.Lookup(provider, model)
	}
	switch {
	case flat && ok:
		return Charge{Known: true, Flat: true, Saved: p.Of(u)}
	case flat:
		return Charge{Known: true, Flat: true} // free, what it saved unknown
	case ok:
		return Charge{USD: p.Of(u), Known: true}
	}
	return Charge{}
}

// baseProvider is a breaker key's provider: "openai-compatible:host" → "openai-compatible".
func baseProvider(p string) string {
	if i := strings.IndexByte(p, ':'); i >= 0 {
		return p[:i]
	}
	return p
}

// candidates are the names model is looked up under, in order: itself, then
// without a date suffix (-YYYY-MM-DD or -YYYYMMDD) or a -latest suffix. An
// array, not a slice: a lookup per answer allocates nothing.
func candidates(model string) (names [2]string, n int) {
	names[0], n = model, 1
	if s, ok := strings.CutSuffix(model, "-latest"); ok {
		names[1], n = s, 2
	} else if l := len(model); l > 11 && model[l-11] == '-' && model[l-6] == '-' && model[l-3] == '-' &&
		isDate(model[l-10:l-6], model[l-5:l-3], model[l-2:]) {
		names[1], n = model[:l-11], 2
	} else if l > 9 && model[l-9] == '-' && isDate(model[l-8:l-4], model[l-4:l-2], model[l-2:]) {
		names[1], n = model[:l-9], 2
	}
	return names, n
}

// isDate reports a 20YY year, a month and a day in digits.
func isDate(yyyy, mm, dd string) bool {
	if len(yyyy) != 4 || len(mm) != 2 || len(dd) != 2 || yyyy[:2] != "20" {
		return false
	}
	for _, s := range [3]string{yyyy, mm, dd} {
		for i := range len(s) {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
	}
	m, d := (mm[0]-'0')*10+mm[1]-'0', (dd[0]-'0')*10+dd[1]-'0'
	return m >= 1 && m <= 12 && d >= 1 && d <= 31
}
