package backup

import (
	"encoding/json"
	"sort"

	"omniroute/backend/store"
)

// Item names one thing a restore adds, changes or removes.
type Item struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Change is what a restore does to one kind of thing.
type Change struct {
	Added   []Item `json:"added"`
	Changed []Item `json:"changed"`
	Removed []Item `json:"removed"`
}

// Empty reports a kind the restore leaves as it is.
func (c Change) Empty() bool { return len(c.Added)+len(c.Changed)+len(c.Removed) == 0 }

// Preview is what restoring next over cur would change, per kind:
// connections, keys, combos, settings (general and resilience), rules (the
// provider error rules), pricing (connection overrides), budgets (a key's
// budget and limits) and, when the backup holds it, log (request-log rows,
// counted by id).
type Preview map[string]Change

// Diff compares the current state with the one a restore would write.
func Diff(cur, next State) Preview {
	p := Preview{}
	p["connections"] = diffRows(cur["provider_connections"], next["provider_connections"], idOf("id"), nameOf("name"), nil)
	p["keys"] = diffRows(cur["api_keys"], next["api_keys"], idOf("id"), nameOf("name"), nil)
	p["combos"] = diffRows(cur["combos"], next["combos"], idOf("id"), nameOf("name"), nil)
	p["settings"] = diffRows(ns(cur, "settings"), ns(next, "settings"), idOf("key"), nil, withoutRules)
	p["pricing"] = diffRows(ns(cur, "pricing"), ns(next, "pricing"), idOf("key"), nil, nil)
	p["budgets"] = diffRows(budgets(cur), budgets(next), idOf("id"), nameOf("name"), nil)
	p["rules"] = diffRows(rules(cur), rules(next), idOf("id"), nil, nil)
	if next.HasLog() {
		p["log"] = diffRows(cur["request_logs"], next["request_logs"], idOf("id"), nil, nil)
	}
	for k, c := range p {
		p[k] = c.normal()
	}
	return p
}

func (c Change) normal() Change {
	for _, l := range []*[]Item{&c.Added, &c.Changed, &c.Removed} {
		if *l == nil {
			*l = []Item{}
		}
		sort.Slice(*l, func(i, j int) bool { return (*l)[i].ID < (*l)[j].ID })
	}
	return c
}

func idOf(col string) func(store.Row) string {
	return func(r store.Row) string {
		switch v := r[col].(type) {
		case string:
			return v
		default:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
}

func nameOf(col string) func(store.Row) string {
	return func(r store.Row) string { s, _ := r[col].(string); return s }
}

// diffRows keys both sides with id and compares each pair's canonical JSON
// (after norm, when given).
func diffRows(cur, next []store.Row, id, name func(store.Row) string, norm func(store.Row) store.Row) Change {
	item := func(r store.Row) Item {
		it := Item{ID: id(r)}
		if name != nil {
			it.Name = name(r)
		}
		return it
	}
	enc := func(r store.Row) string {
		if norm != nil {
			r = norm(r)
		}
		b, _ := json.Marshal(r)
		return string(b)
	}
	have := make(map[string]store.Row, len(cur))
	for _, r := range cur {
		have[id(r)] = r
	}
	var c Change
	seen := make(map[string]bool, len(next))
	for _, r := range next {
		k := id(r)
		seen[k] = true
		old, ok := have[k]
		switch {
		case !ok:
			c.Added = append(c.Added, item(r))
		case enc(old) != enc(r):
			c.Changed = append(c.Changed, item(r))
		}
	}
	for _, r := range cur {
		if !seen[id(r)] {
			c.Removed = append(c.Removed, item(r))
		}
	}
	return c
}

// ns is the key_value rows of one namespace, compared by value only (the
// write time is not a change).
func ns(s State, namespace string) []store.Row {
	var out []store.Row
	for _, r := range s["key_value"] {
		if r["namespace"] == namespace {
			out = append(out, store.Row{"key": r["key"], "value": r["value"]})
		}
	}
	return out
}

// withoutRules drops the provider error rules from the general settings:
// they are their own kind.
func withoutRules(r store.Row) store.Row {
	if r["key"] != "general" {
		return r
	}
	var g map[string]any
	s, _ := r["value"].(string)
	if json.Unmarshal([]byte(s), &g) != nil {
		return r
	}
	delete(g, "providerErrorRules")
	b, _ := json.Marshal(g)
	return store.Row{"key": r["key"], "value": string(b)}
}

// rules are the provider error rules of the general settings, one row each.
func rules(s State) []store.Row {
	var out []store.Row
	for _, r := range ns(s, "settings") {
		if r["key"] != "general" {
			continue
		}
		var g struct {
			Rules []map[string]any `json:"providerErrorRules"`
		}
		v, _ := r["value"].(string)
		_ = json.Unmarshal([]byte(v), &g)
		for _, rule := range g.Rules {
			row := store.Row{}
			for k, v := range rule {
				row[k] = v
			}
			out = append(out, row)
		}
	}
	return out
}

// budgets are the keys that have a budget or limits, with just those.
func budgets(s State) []store.Row {
	var out []store.Row
	for _, r := range s["api_keys"] {
		b, _ := r["budget"].(string)
		l, _ := r["limits"].(string)
		if b == "" && l == "" {
			continue
		}
		out = append(out, store.Row{"id": r["id"], "name": r["name"], "budget": b, "limits": l})
	}
	return out
}
