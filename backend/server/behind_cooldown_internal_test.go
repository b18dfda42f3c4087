package server

import (
	"testing"

	"omniroute/backend/clock"
	"omniroute/backend/store"
	"omniroute/tests/pgtest"
)

// TestBehindCooldownSteps: a connection's cooldown decisions queued behind the
// request are never replaced by newer ones (each is an outcome the stored row
// must see): they run in order in one decision, each done hears the committed
// row; while the database refuses they wait — the ones queued meanwhile after
// them — and all land once, in order, when it answers; a connection deleted
// meanwhile drops them.
func TestBehindCooldownSteps(t *testing.T) {
	pgs, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required: never a skip
	}
	t.Cleanup(pgs.Stop)
	st, err := store.OpenPostgres(pgs.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.CreateConnection(&store.Connection{ID: "c1", Provider: "openai", Name: "a", IsActive: true}); err != nil {
		t.Fatal(err)
	}
	c := &collect{}
	w := newIdleWriter(c)
	b := newBehindStore(st, clock.Real{}, w)
	var heard []store.CooldownFields
	step := func(code string) func(store.CooldownFields) store.CooldownFields {
		return func(f store.CooldownFields) store.CooldownFields {
			f.BackoffLevel++
			f.ErrorCode += code
			return f
		}
	}
	done := func(f store.CooldownFields, wrote bool) {
		if !wrote {
			t.Errorf("a step that changed the row heard wrote=false")
		}
		heard = append(heard, f)
	}
	b.DecideCooldown("c1", step("a"), done)
	b.DecideCooldown("c1", step("b"), done)
	if !w.flush() {
		t.Fatalf("flush failed: %v", c.errs)
	}
	row, err := st.Connection("c1")
	if err != nil {
		t.Fatal(err)
	}
	if row.BackoffLevel != 2 || row.ErrorCode != "ab" || len(heard) != 2 || heard[0] != heard[1] || heard[1].ErrorCode != "ab" {
		t.Fatalf("after two steps: row level %d code %q, heard %+v; want 2, \"ab\", the committed row twice", row.BackoffLevel, row.ErrorCode, heard)
	}

	// The database refuses (the table is away): the steps wait, in order.
	exec := func(sql string) {
		t.Helper()
		if err := st.DB().Exec(sql).Error; err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER TABLE provider_connections RENAME TO provider_connections_away`)
	b.DecideCooldown("c1", step("c"), done)
	if w.flush() {
		t.Fatal("flush succeeded without the table")
	}
	b.DecideCooldown("c1", step("d"), done)
	exec(`ALTER TABLE provider_connections_away RENAME TO provider_connections`)
	if !w.flush() {
		t.Fatalf("retry failed: %v", c.errs)
	}
	if row, _ = st.Connection("c1"); row.BackoffLevel != 4 || row.ErrorCode != "abcd" {
		t.Fatalf("after the outage: level %d code %q, want 4 and \"abcd\" (each step once, in order)", row.BackoffLevel, row.ErrorCode)
	}

	// A deleted connection drops its steps instead of retrying for ever.
	if err := st.DeleteConnection("c1"); err != nil {
		t.Fatal(err)
	}
	b.DecideCooldown("c1", step("e"), done)
	if !w.flush() {
		t.Fatalf("steps of a deleted connection kept failing: %v", c.errs)
	}
	if n := len(b.cd.pending); n != 0 {
		t.Fatalf("%d connections still have steps queued", n)
	}
}
