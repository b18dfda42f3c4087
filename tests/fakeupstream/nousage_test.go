package fakeupstream

import (
	"strings"
	"testing"
)

// TestNoUsageMode: an OpenAI answer with ModeNoUsage is whole but reports no
// usage, JSON or streamed with include_usage; another key's still does.
func TestNoUsageMode(t *testing.T) {
	f := newFixture(t)
	f.u.SetFault("k-none", Fault{Mode: ModeNoUsage})
	streamBody := `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		name  string
		call  call
		usage bool
	}{
		{"JSON", call{key: "k-none"}, false},
		{"stream", call{key: "k-none", raw: streamBody}, false},
		{"JSON of another key", call{key: "k-some"}, true},
		{"stream of another key", call{key: "k-some", raw: streamBody}, true},
	} {
		resp, body := f.do(t, c.call)
		s := string(body)
		if resp.StatusCode != 200 || c.call.raw == "" && !strings.Contains(s, "Hello from "+c.call.key) {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, s)
		}
		if got := strings.Contains(s, `"usage":{`); got != c.usage {
			t.Errorf("%s: usage reported %v, want %v: %s", c.name, got, c.usage, s)
		}
		if c.call.raw != "" && !strings.Contains(s, "data: [DONE]") {
			t.Errorf("%s: the stream is not whole: %s", c.name, s)
		}
	}
}
