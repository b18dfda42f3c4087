package server

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"omniroute/backend/events"
	"omniroute/backend/metrics"
	"omniroute/backend/store"
)

// logSink keeps the rows a requestLogs hands its writer.
type logSink struct{ rows []store.RequestLog }

func (s *logSink) Log(l store.RequestLog) { s.rows = append(s.rows, l) }

// The live log's "request" event, encoded by hand, reads back as the map the
// bus used to marshal with reflection, for rows with hostile strings too.
func TestRequestEventMatchesTheMarshalledMap(t *testing.T) {
	rows := []store.RequestLog{
		{RequestID: "0123456789abcdef", Model: "gpt-4o-mini", Status: 200, ConnectionID: "c1", Provider: "openai",
			AttemptCount: 1, LatencyMs: 412, Stream: true},
		{RequestID: "r2", Model: `quo"te\back` + "\n\t\x01", Status: 503, ConnectionID: "<c&2>", Provider: "anthropic:acct",
			AttemptCount: 3, LatencyMs: 90, QueueMs: 120, ErrorCode: "ALL_ACCOUNTS_RATE_LIMITED", QueueReason: "queue_full"},
		{RequestID: "r3", Model: "modèle-ü\u2028\xff\xfe", Status: 0},
		{},
	}
	for _, l := range rows {
		want := map[string]any{"requestId": l.RequestID, "model": l.Model, "status": l.Status,
			"connectionId": l.ConnectionID, "provider": l.Provider, "attempts": l.AttemptCount, "attemptCount": l.AttemptCount, "latencyMs": l.LatencyMs,
			"errorCode": l.ErrorCode, "stream": l.Stream, "queueMs": l.QueueMs, "upstreamMs": max(l.LatencyMs-l.QueueMs, 0), "queueReason": l.QueueReason}
		wantRaw, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		got := appendRequestEvent(nil, &l)
		var gotV, wantV map[string]any
		if err := json.Unmarshal(got, &gotV); err != nil {
			t.Fatalf("%q is not JSON: %v", got, err)
		}
		if err := json.Unmarshal(wantRaw, &wantV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("event %s\nwant  %s", got, wantRaw)
		}
	}
}

// With the dashboard subscribed, a logged request publishes its event to the
// bus; without a subscriber nothing is encoded.
func TestRequestLogsPublishOnlyToSubscribers(t *testing.T) {
	bus := events.New(func() time.Time { return time.Unix(0, 0) })
	sink := &logSink{}
	r := requestLogs{w: sink, p: publisher{bus: bus}, m: metrics.New(nil)}
	r.Log(store.RequestLog{RequestID: "quiet"})
	sub := bus.Subscribe(4)
	defer sub.Close()
	r.Log(store.RequestLog{RequestID: "seen", Model: "m", Status: 200, LatencyMs: 5, QueueMs: 7})
	if len(sink.rows) != 2 {
		t.Fatalf("%d rows reached the writer, want 2", len(sink.rows))
	}
	select {
	case ev := <-sub.C:
		var v struct {
			RequestID  string `json:"requestId"`
			UpstreamMs int64  `json:"upstreamMs"`
		}
		if ev.Type != "request" || json.Unmarshal(ev.Data, &v) != nil || v.RequestID != "seen" || v.UpstreamMs != 0 {
			t.Fatalf("event %s %s", ev.Type, ev.Data)
		}
	default:
		t.Fatal("no event published")
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("unexpected event %s %s", ev.Type, ev.Data)
	default:
	}
}

// BenchmarkRequestEvent: the live log's event per request with the dashboard
// open, encoded by hand against a map marshalled with encoding/json (as it
// was).
func BenchmarkRequestEvent(b *testing.B) {
	l := store.RequestLog{RequestID: "0123456789abcdef0123456789abcdef", Model: "gpt-4o-mini", Status: 200,
		ConnectionID: "3f2a9c1e-conn", Provider: "openai-compatible", AttemptCount: 1, LatencyMs: 412, Stream: true}
	b.Run("map-marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(map[string]any{"requestId": l.RequestID, "model": l.Model, "status": l.Status,
				"connectionId": l.ConnectionID, "provider": l.Provider, "attempts": l.AttemptCount, "attemptCount": l.AttemptCount, "latencyMs": l.LatencyMs,
				"errorCode": l.ErrorCode, "stream": l.Stream, "queueMs": l.QueueMs, "upstreamMs": max(l.LatencyMs-l.QueueMs, 0), "queueReason": l.QueueReason})
		}
	})
	b.Run("appended", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = appendRequestEvent(make([]byte, 0, 384), &l)
		}
	})
}
