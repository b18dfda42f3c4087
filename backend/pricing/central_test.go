package pricing

import (
	"os"
	"reflect"
	"testing"

	"omniroute/backend/providers/registry"
)

// TestModulePricesMatchTheCentralTable: the provider modules' merged price
// lists give the same catalogue, lookups and costs as the central
// catalogue.json they were split from (kept until this passes, then deleted).
func TestModulePricesMatchTheCentralTable(t *testing.T) {
	central, err := os.ReadFile("catalogue.json")
	if err != nil {
		t.Fatal(err)
	}
	apiOf := map[string]string{"claude": "anthropic", "codex": "openai"}
	old, err := New([][]byte{central}, apiOf, nil)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := New(registry.Catalog(nil).Prices(), apiOf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := old.Catalogue(), merged.Catalogue(); !reflect.DeepEqual(a, b) || len(a) != 25 {
		t.Fatalf("catalogues differ (%d vs %d entries)", len(a), len(b))
	}
	u := Usage{Prompt: 1_234_567, CacheRead: 200_000, CacheWrite: 100_000, Output: 345_678, Reasoning: 12_345}
	for _, e := range old.Catalogue() {
		for _, prov := range []string{e.Provider, "claude", "codex", "other"} {
			for _, m := range []string{e.Model, e.Model + "-latest", e.Model + "-20250101"} {
				p1, ok1 := old.Lookup(prov, m)
				p2, ok2 := merged.Lookup(prov, m)
				c1, k1 := old.Cost(prov, m, u)
				c2, k2 := merged.Cost(prov, m, u)
				if ok1 != ok2 || !reflect.DeepEqual(p1, p2) || c1 != c2 || k1 != k2 {
					t.Errorf("%s/%s: central %v %v %v, modules %v %v %v", prov, m, p1, ok1, c1, p2, ok2, c2)
				}
			}
		}
		e1, f1 := old.Estimate(e.Model)
		e2, f2 := merged.Estimate(e.Model)
		if f1 != f2 || !reflect.DeepEqual(e1, e2) {
			t.Errorf("estimate %s differs", e.Model)
		}
	}
}
