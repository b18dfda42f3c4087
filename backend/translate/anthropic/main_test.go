package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
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
// (compared compacted) or absent.
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

// sameJSON compares two JSON texts by value (object key order does not matter).
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

// ev is one parsed output event.
type ev struct {
	Event string
	Data  string
}

// parseOut parses translator output with the package's SSE parser.
func parseOut(t testing.TB, out []byte) []ev {
	t.Helper()
	var p sse.Parser
	var evs []ev
	emit := func(e sse.Event) bool {
		if !e.Comment {
			evs = append(evs, ev{e.Event, string(e.Data)})
		}
		return true
	}
	if err := p.Feed(out, emit); err != nil {
		t.Fatal(err)
	}
	p.Flush(emit)
	return evs
}

// sseInput builds upstream events from "event\tdata" lines ("" event for Chat chunks).
func sseInput(lines ...string) []sse.Event {
	var out []sse.Event
	for _, l := range lines {
		name, data, ok := strings.Cut(l, "\t")
		if !ok || strings.ContainsAny(name, "{}\" \n") {
			name, data = "", l
		}
		if data == ": keep-alive" {
			out = append(out, sse.Event{Comment: true})
			continue
		}
		out = append(out, sse.Event{Event: name, Data: []byte(data)})
	}
	return out
}

// runStream feeds events to tr and, when the upstream completed, calls End.
func runStream(t testing.TB, tr translate.StreamTranslator, in []sse.Event) (out []byte, err error) {
	t.Helper()
	for _, e := range in {
		if out, err = tr.Event(out, e); err != nil {
			return out, err
		}
	}
	if tr.Complete() {
		out = tr.End(out)
	}
	return out, nil
}

// types lists the event names (or the data "type" for unnamed events).
func types(evs []ev) []string {
	var out []string
	for _, e := range evs {
		name := e.Event
		if name == "" {
			if e.Data == "[DONE]" {
				name = "[DONE]"
			} else {
				name = "chunk"
			}
		}
		out = append(out, name)
	}
	return out
}
