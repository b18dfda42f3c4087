package store

import (
	"errors"
	"maps"
	"slices"
	"testing"
)

// TestRequestBodiesStore: saved bodies are read back, listed by request id,
// dropped by age, and pruned oldest first to a byte budget — in both dialects.
func TestRequestBodiesStore(t *testing.T) {
	for _, d := range []Dialect{SQLite, Postgres} {
		t.Run(string(d), func(t *testing.T) {
			s := openDialect(t, d)
			for i, id := range []string{"a", "b", "c", "d"} {
				if err := s.SaveRequestBodies(&RequestBodies{RequestID: id, CreatedAt: int64(10 * (i + 1)), ClientRequest: "x", Bytes: 100}); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := s.RequestBodies("b"); err != nil || b.CreatedAt != 20 || b.ClientRequest != "x" {
				t.Fatalf("read back: %+v %v", b, err)
			}
			if _, err := s.RequestBodies("zz"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("unknown id: %v", err)
			}
			have := func() []string {
				m, err := s.RequestIDsWithBodies([]string{"a", "b", "c", "d", "zz"}, 0)
				if err != nil {
					t.Fatal(err)
				}
				return slices.Sorted(maps.Keys(m))
			}
			if got := have(); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
				t.Fatalf("with bodies: %v", got)
			}
			if m, _ := s.RequestIDsWithBodies([]string{"a", "b"}, 20); !m["b"] || m["a"] {
				t.Fatalf("since 20: %v", m)
			}
			if err := s.DeleteRequestBodiesBefore(20); err != nil { // a (10) goes, b (20) stays
				t.Fatal(err)
			}
			if got := have(); !slices.Equal(got, []string{"b", "c", "d"}) {
				t.Fatalf("after the age cut: %v", got)
			}
			if err := s.PruneRequestBodies(200); err != nil { // the newest two fit
				t.Fatal(err)
			}
			if got := have(); !slices.Equal(got, []string{"c", "d"}) {
				t.Fatalf("after pruning to 200 bytes: %v", got)
			}
		})
	}
}
