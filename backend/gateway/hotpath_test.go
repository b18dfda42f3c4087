package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestServedHeaderNamesAreCanonical keeps the fast-path header names in step
// with the exported ones clients read.
func TestServedHeaderNamesAreCanonical(t *testing.T) {
	for exported, canon := range map[string]string{HeaderConnectionID: canonConnectionID, HeaderProvider: canonProvider,
		HeaderModel: canonModel, HeaderAttempts: canonAttempts} {
		if got := http.CanonicalHeaderKey(exported); got != canon {
			t.Errorf("%s: canonical %q, fast path uses %q", exported, got, canon)
		}
	}
}

// TestQuotaHeadersAbsentAllocateNothing: reading the quota and usage-window
// headers of an answer that has none (every OpenAI-compatible answer without
// rate-limit headers) costs no allocation.
func TestQuotaHeadersAbsentAllocateNothing(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}, "Date": {"Thu, 01 Jan 2026 00:00:00 GMT"}, "Content-Length": {"312"}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	allocs := testing.AllocsPerRun(100, func() {
		if frac, reset := quotaFromHeaders(h, now); frac != -1 || !reset.IsZero() {
			t.Fatalf("quota from no headers: %v %v", frac, reset)
		}
		if _, ok := WindowsFromHeaders(h, now); ok {
			t.Fatal("windows from no headers")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per answer without quota headers, want 0", allocs)
	}
}

// TestAppendTimelineMatchesEncodingJSON: the hand-written attempts column is
// what encoding/json makes of the same records (byte for byte when no string
// needs HTML escaping, which encoding/json adds and readers undo).
func TestAppendTimelineMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		recs []AttemptRecord
	}{
		{"nil", nil},
		{"empty", []AttemptRecord{}},
		{"success", []AttemptRecord{{ConnectionID: "c1", Provider: "openai-compatible", Model: "gpt-4o-mini", Status: 200,
			Verdict: "success", StartMs: 0, LatencyMs: 12}}},
		{"every field", []AttemptRecord{
			{ConnectionID: "c1", Provider: "p", Model: "m", Status: 429, Verdict: "rate_limit", Code: "RATE_LIMITED",
				Detail: "quota \"exceeded\"\n\tretry", StartMs: 1, LatencyMs: 2, RemainingMs: 3, ContinuedFromChars: 4, Splice: "restarted-spliced"},
			{Verdict: "wait", Code: "cooldown_wait", StartMs: 5, LatencyMs: -1},
			{ConnectionID: "c2", Verdict: "excluded", Code: "circuit_open", Detail: "h\u00e9 \u2028 \x01 \\", StartMs: 7, RemainingMs: 9000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.recs)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendTimeline(nil, tt.recs); !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
	// HTML-sensitive and invalid UTF-8 text: not byte-identical, same value.
	recs := []AttemptRecord{{ConnectionID: "<c&1>", Verdict: "server", Detail: "bad \xff byte"}}
	want, _ := json.Marshal(recs)
	var a, b []AttemptRecord
	if err := json.Unmarshal(appendTimeline(nil, recs), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if a[0] != b[0] {
		t.Fatalf("decoded %+v, encoding/json's decodes to %+v", a[0], b[0])
	}
}
