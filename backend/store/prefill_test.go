package store

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// TestPrefillRowsUpsertAndGoWithTheirConnection: a row is stored per
// (connection, model), a later write of the same pair replaces it, and
// deleting the connection deletes its rows (not another connection's).
func TestPrefillRowsUpsertAndGoWithTheirConnection(t *testing.T) {
	eachDialect(t, func(t *testing.T, open func(t *testing.T) *Store) {
		s := open(t)
		for _, id := range []string{"c1", "c2"} {
			if err := s.CreateConnection(&Connection{ID: id, Provider: "openai-compatible", Name: id}); err != nil {
				t.Fatal(err)
			}
		}
		a := PrefillRow{ConnectionID: "c1", Model: "m1", State: "honoured", Source: "learned", LearnedAt: 1_000}
		b := PrefillRow{ConnectionID: "c1", Model: "m2", State: "refused", Source: "probe", LearnedAt: 1_001}
		c := PrefillRow{ConnectionID: "c2", Model: "m1", State: "refused", Source: "learned", LearnedAt: 1_002}
		for _, r := range []PrefillRow{a, b, c} {
			if err := s.SavePrefill(r); err != nil {
				t.Fatal(err)
			}
		}
		a.State, a.Source, a.LearnedAt = "refused", "learned", 2_000
		if err := s.SavePrefill(a); err != nil {
			t.Fatal(err)
		}
		got, err := s.Prefills()
		if err != nil || !reflect.DeepEqual(got, []PrefillRow{a, b, c}) {
			t.Fatalf("rows %+v, %v", got, err)
		}
		if err := s.DeleteConnection("c1"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Prefills(); err != nil || !reflect.DeepEqual(got, []PrefillRow{c}) {
			t.Fatalf("after deleting c1: %+v, %v", got, err)
		}
		if err := s.DeleteConnection("c1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleting it again: %v", err)
		}
	})
}

// TestPrefillRowsSurviveReopening: what was learned is in the SQLite file,
// so a store opened again on it (a restart) reads it back.
func TestPrefillRowsSurviveReopening(t *testing.T) {
	path := filepath.Join(t.TempDir(), "omniroute.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []PrefillRow{{ConnectionID: "c1", Model: "gpt-4o-mini", State: "refused", Source: "learned", LearnedAt: 42}}
	if err := s.SavePrefill(want[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Prefills(); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopening: %+v, %v", got, err)
	}
}
