package connprobe_test

import (
	"testing"

	"omniroute/backend/connprobe"
	"omniroute/backend/store"
)

// TestOnCreate: a create is checked unless verify is false; the check keeps
// the list it reads unless models are listed by hand and neither discovery
// nor the check was asked for; without a check, an unlisted connection
// discovers its models.
func TestOnCreate(t *testing.T) {
	yes, no := new(bool), new(bool)
	*yes = true
	tests := []struct {
		name             string
		verify, discover *bool
		listed           bool
		want             connprobe.Plan
	}{
		{"default, no list", nil, nil, false, connprobe.Plan{Check: true, Keep: true}},
		{"default, a hand list", nil, nil, true, connprobe.Plan{Check: true}},
		{"verify asked, a hand list", yes, nil, true, connprobe.Plan{Check: true, Keep: true}},
		{"discovery asked, a hand list", nil, yes, true, connprobe.Plan{Check: true, Keep: true}},
		{"discovery refused, no list", nil, no, false, connprobe.Plan{Check: true}},
		{"no verify, no list", no, nil, false, connprobe.Plan{Discover: true}},
		{"no verify, a hand list", no, nil, true, connprobe.Plan{}},
		{"no verify, discovery asked", no, yes, true, connprobe.Plan{Discover: true}},
		{"neither", no, no, false, connprobe.Plan{}},
	}
	for _, tt := range tests {
		if got := connprobe.OnCreate(tt.verify, tt.discover, tt.listed); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestOnEdit: an edit is checked when it changes the base URL, the key,
// the token or the hand list (or verify asks); verify false never checks.
func TestOnEdit(t *testing.T) {
	yes, no := new(bool), new(bool)
	*yes = true
	before := store.Connection{BaseURL: "https://x.example/v1", APIKeyEnc: "k1", AccessTokenEnc: "t1", Models: `["m"]`, Name: "a"}
	edit := func(f func(*store.Connection)) store.Connection {
		r := before
		f(&r)
		return r
	}
	tests := []struct {
		name   string
		verify *bool
		after  store.Connection
		want   connprobe.Plan
	}{
		{"a rename", nil, edit(func(r *store.Connection) { r.Name = "b" }), connprobe.Plan{}},
		{"a new base URL", nil, edit(func(r *store.Connection) { r.BaseURL = "https://y.example/v1" }), connprobe.Plan{Check: true}},
		{"a new key", nil, edit(func(r *store.Connection) { r.APIKeyEnc = "k2" }), connprobe.Plan{Check: true}},
		{"a new token", nil, edit(func(r *store.Connection) { r.AccessTokenEnc = "t2" }), connprobe.Plan{Check: true}},
		{"the hand list emptied", nil, edit(func(r *store.Connection) { r.Models = "[]" }), connprobe.Plan{Check: true, Keep: true}},
		{"a rename, verify asked", yes, edit(func(r *store.Connection) { r.Name = "b" }), connprobe.Plan{Check: true, Keep: true}},
		{"a new key, verify false", no, edit(func(r *store.Connection) { r.APIKeyEnc = "k2" }), connprobe.Plan{}},
	}
	for _, tt := range tests {
		if got := connprobe.OnEdit(tt.verify, before, tt.after); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
