package keyring

import (
	"testing"

	"omniroute/backend/errs"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// TestLoadLookupAndRefusal: a loaded key is found by its value with its
// scopes and restrictions, a rotated key's previous secret too (marked
// Previous); a key works while now < its expiry and a previous secret while
// now < its grace period's end, then is refused KEY_EXPIRED / KEY_ROTATED.
func TestLoadLookupAndRefusal(t *testing.T) {
	k := New()
	k.Load([]store.APIKey{{ID: "k1", Name: "ci", KeyHash: secrets.Hash("sk-new"), PrevKeyHash: secrets.Hash("sk-old"),
		PrevValidUntil: 2_000, ExpiresAt: 5_000, Scopes: `["inference"]`, AllowedModels: `["gpt-4o"]`, Private: true}})
	cur, ok := k.Lookup("sk-new")
	if !ok || cur.ID != "k1" || cur.Previous || len(cur.Scopes) != 1 || cur.Scopes[0] != "inference" ||
		len(cur.Access.AllowedModels) != 1 || !cur.Access.Private {
		t.Fatalf("current secret: %+v %v", cur, ok)
	}
	prev, ok := k.Lookup("sk-old")
	if !ok || !prev.Previous || prev.PrevUntilMs != 2_000 {
		t.Fatalf("previous secret: %+v %v", prev, ok)
	}
	if _, ok := k.Lookup("sk-other"); ok {
		t.Fatal("an unknown value was found")
	}
	if got := k.NameOf("k1"); got != "ci" {
		t.Fatalf("NameOf: %q", got)
	}
	for _, c := range []struct {
		key  *Info
		now  int64
		want string
	}{
		{cur, 4_999, ""}, {cur, 5_000, "KEY_EXPIRED"},
		{prev, 1_999, ""}, {prev, 2_000, "KEY_ROTATED"},
	} {
		got := ""
		if e := c.key.Refusal(c.now); e != nil {
			got = e.Code
			if e.Class != errs.Auth {
				t.Errorf("%s at %d: class %v, want Auth (401)", got, c.now, e.Class)
			}
		}
		if got != c.want {
			t.Errorf("previous=%v at %d: %q, want %q", c.key.Previous, c.now, got, c.want)
		}
	}
}

// TestTimedKeys: a key is timed exactly when Refusal can refuse it at some
// time (an expiry, a replaced secret): an untimed one is never refused, so
// the request edge reads no clock for it.
func TestTimedKeys(t *testing.T) {
	for _, c := range []struct {
		name  string
		key   Info
		timed bool
	}{
		{"no expiry", Info{Name: "a"}, false},
		{"expiry", Info{Name: "b", ExpiresAtMs: 5_000}, true},
		{"replaced secret", Info{Name: "c", Previous: true, PrevUntilMs: 2_000}, true},
		{"replaced secret, grace over at 0", Info{Name: "d", Previous: true}, true},
	} {
		if got := c.key.Timed(); got != c.timed {
			t.Errorf("%s: Timed %v, want %v", c.name, got, c.timed)
		}
		refused := false
		for _, now := range []int64{-1, 0, 1_999, 2_000, 4_999, 5_000, 1 << 62} {
			refused = refused || c.key.Refusal(now) != nil
		}
		if refused != c.timed {
			t.Errorf("%s: refused at some time %v, Timed %v", c.name, refused, c.timed)
		}
	}
}
