package server

import (
	"bytes"
	"testing"
	"time"

	"omniroute/backend/events"
	"omniroute/backend/metrics"
	"omniroute/backend/store"
)

// TestRequestLines: with --log-requests every logged request prints one line
// with its end time, key name, model, connection name, status, attempts,
// latency in human units and error code; empty fields read "-", values with
// spaces are quoted; nothing is printed without the flag.
func TestRequestLines(t *testing.T) {
	at := time.Date(2026, 12, 4, 15, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		row  store.RequestLog
		want string
	}{
		{"served", store.RequestLog{CreatedAt: at.UnixMilli(), APIKeyID: "k1", Model: "gpt-4o-mini", ConnectionID: "c1", Status: 200, AttemptCount: 1, LatencyMs: 850},
			`2026-12-04T15:30:00.850Z key="Default key" model=gpt-4o-mini conn="Lab box" status=200 attempts=1 latency=850ms code=-` + "\n"},
		{"failed over then failed", store.RequestLog{CreatedAt: at.UnixMilli(), APIKeyID: "k1", Model: "m", ConnectionID: "c1", Status: 502, AttemptCount: 2, LatencyMs: 2300, ErrorCode: "UPSTREAM_TRANSPORT_ERROR"},
			`2026-12-04T15:30:02.300Z key="Default key" model=m conn="Lab box" status=502 attempts=2 latency=2.3s code=UPSTREAM_TRANSPORT_ERROR` + "\n"},
		{"refused: no connection, unknown key id", store.RequestLog{CreatedAt: at.UnixMilli(), APIKeyID: "gone", Model: "m", Status: 503, LatencyMs: 61_000, ErrorCode: "ALL_ACCOUNTS_RATE_LIMITED"},
			`2026-12-04T15:31:01.000Z key=gone model=m conn=- status=503 attempts=0 latency=1m1s code=ALL_ACCOUNTS_RATE_LIMITED` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			lines := &requestLines{w: &out,
				keyName: func(id string) string { return map[string]string{"k1": "Default key"}[id] },
				conn:    func(id string) string { return map[string]string{"c1": "Lab box"}[id] }}
			r := requestLogs{w: &logSink{}, p: publisher{bus: events.New(time.Now)}, m: metrics.New(nil), lines: lines}
			r.Log(tt.row)
			if out.String() != tt.want {
				t.Fatalf("line\n%q\nwant\n%q", out.String(), tt.want)
			}
		})
	}
	r := requestLogs{w: &logSink{}, p: publisher{bus: events.New(time.Now)}, m: metrics.New(nil)}
	r.Log(store.RequestLog{Model: "m"}) // no lines: nothing to write to, no panic
}
