package gemini

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// absent marks a path that must not exist in the output.
const absent = "<absent>"

// checkPaths asserts gjson paths of out: each want value is the expected JSON
// (compared by value) or absent.
func checkPaths(t *testing.T, out []byte, want map[string]string) {
	t.Helper()
	if !gjson.ValidBytes(out) {
		t.Fatalf("output is not valid JSON: %s", out)
	}
	for path, w := range want {
		got := gjson.GetBytes(out, path)
		if w == absent {
			if got.Exists() {
				t.Errorf("%s: want absent, got %s\nin %s", path, got.Raw, out)
			}
			continue
		}
		if !got.Exists() {
			t.Errorf("%s: missing, want %s\nin %s", path, w, out)
			continue
		}
		if !sameJSON(t, got.Raw, w) {
			t.Errorf("%s: got %s, want %s\nin %s", path, got.Raw, w, out)
		}
	}
}

// sameJSON compares two JSON texts by value.
func sameJSON(t testing.TB, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("bad JSON %q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("bad JSON in test %q: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// runStream feeds wire bytes through a parser and tr, returning the output,
// the first error and whether End was written (only when Complete).
func runStream(t testing.TB, tr translate.StreamTranslator, wire []byte) ([]byte, error) {
	t.Helper()
	var p sse.Parser
	var out []byte
	var err error
	feed := func(ev sse.Event) bool {
		out, err = tr.Event(out, ev)
		return err == nil
	}
	if perr := p.Feed(wire, feed); perr != nil {
		t.Fatalf("parse: %v", perr)
	}
	if err == nil {
		p.Flush(feed)
	}
	if err == nil && tr.Complete() {
		out = tr.End(out)
	}
	return out, err
}

// events parses SSE output into its data payloads.
func events(t testing.TB, out []byte) [][]byte {
	t.Helper()
	var p sse.Parser
	var evs [][]byte
	_ = p.Feed(out, func(ev sse.Event) bool {
		evs = append(evs, append([]byte(nil), ev.Data...))
		return true
	})
	p.Flush(func(ev sse.Event) bool {
		evs = append(evs, append([]byte(nil), ev.Data...))
		return true
	})
	return evs
}
