package prefillcap

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestBookKeepsWhatWasLearnedAcrossARestart: learned and probed states are
// written to the SQLite file and a book opened on it again (a restart)
// knows them; a declaration wins over them in what is shown.
func TestBookKeepsWhatWasLearnedAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "omniroute.db")
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := openStore(t, path)
	b, err := Open(st, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Learn("c1", "honours", true)
	b.Learn("c1", "refuses", false)
	if err := b.Probed("c2", "probed", Honoured); err != nil {
		t.Fatal(err)
	}
	if err := b.Probed("c2", "nothing", Unknown); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	b, err = Open(openStore(t, path), clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		conn, model, declared string
		want                  Entry
	}{
		{"c1", "honours", "", Entry{Honoured, Learned}},
		{"c1", "refuses", "", Entry{Refused, Learned}},
		{"c2", "probed", "", Entry{Honoured, Probe}},
		{"c2", "nothing", "", Entry{State: Unknown}},
		{"c9", "never-seen", "", Entry{State: Unknown}},
		{"c1", "refuses", "trailing", Entry{Honoured, Declared}},
		{"c1", "honours", DeclaredNone, Entry{Refused, Declared}},
	} {
		if got := b.View(tc.conn, tc.model, tc.declared); got != tc.want {
			t.Errorf("View(%s, %s, %q) = %+v, want %+v", tc.conn, tc.model, tc.declared, got, tc.want)
		}
	}
	if ok, known := b.Known("c1", "refuses"); ok || !known {
		t.Errorf("Known(refuses) = %v, %v", ok, known)
	}
	b.Forget("c1")
	if _, known := b.Known("c1", "honours"); known {
		t.Error("Forget kept c1's models")
	}
}

// countingStore counts writes and can fail them.
type countingStore struct {
	saves int
	fail  error
}

func (c *countingStore) SavePrefill(store.PrefillRow) error    { c.saves++; return c.fail }
func (c *countingStore) Prefills() ([]store.PrefillRow, error) { return nil, nil }

// TestBookWritesOnlyChanges: a continuation that shows again what is known
// writes nothing (continuations are on the request path); a change and
// every probe write. A failed write keeps the memory and reports.
func TestBookWritesOnlyChanges(t *testing.T) {
	st := &countingStore{}
	b, err := Open(st, clock.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Learn("c", "m", true)
	b.Learn("c", "m", true)
	b.Learn("c", "m", true)
	if st.saves != 1 {
		t.Fatalf("%d writes for one fact learned three times", st.saves)
	}
	b.Learn("c", "m", false)
	_ = b.Probed("c", "m", Refused)
	_ = b.Probed("c", "m", Refused)
	if st.saves != 4 {
		t.Fatalf("%d writes, want 4 (a change, a probe, a probe)", st.saves)
	}
	st.fail = errors.New("disk full")
	if err := b.Probed("c", "n", Honoured); err == nil {
		t.Fatal("a failed write was not reported")
	}
	if ok, known := b.Known("c", "n"); !ok || !known {
		t.Fatal("a failed write dropped what this run knows")
	}
}

// TestJudge reads the probe's answers.
func TestJudge(t *testing.T) {
	refusal := []byte(`{"type":"error","error":{"message":"This model does not support assistant message prefill."}}`)
	for _, tc := range []struct {
		name   string
		status int
		body   []byte
		text   string
		want   State
	}{
		{"continued, nothing left to say", 200, nil, "", Honoured},
		{"continued with punctuation", 200, nil, ".", Honoured},
		{"400 naming the prefill", 400, refusal, "", Refused},
		{"400 naming vLLM's flag", 400, []byte(`{"error":{"message":"Unrecognized request argument supplied: continue_final_message"}}`), "", Refused},
		{"started over, first token", 200, nil, "OM", Refused},
		{"started over, quoted", 200, nil, `"OMNIROUTEPREFILL`, Refused},
		{"started over, whole word", 200, nil, " omniroutePrefillProbe.", Refused},
		{"another 400", 400, []byte(`{"error":{"message":"max_tokens too small"}}`), "", Unknown},
		{"rate limited", 429, nil, "", Unknown},
		{"no answer", 0, nil, "", Unknown},
	} {
		if got := Judge(tc.status, tc.body, tc.text); got.State != tc.want || got.Message == "" {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.want)
		}
	}
}
