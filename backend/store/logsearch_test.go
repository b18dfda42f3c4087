package store

import (
	"slices"
	"testing"
)

// TestLogSearchFindsRefusedRows (issue 42): the text search finds a refused
// row by the connection its refusal excluded (in its attempts), by an error
// code whose words match (ErrorCodes), by the code read with spaces, and by
// Refused (no connection, status >= 400) — never a served row by Refused.
func TestLogSearchFindsRefusedRows(t *testing.T) {
	s, _ := openTemp(t)
	rows := []RequestLog{
		{RequestID: "served", CreatedAt: 1, Status: 200, ConnectionID: "conn-a", Attempts: `[{"connectionId":"conn-a","verdict":"success"}]`},
		{RequestID: "excluded", CreatedAt: 2, Status: 503, ErrorCode: "ALL_TARGETS_EXCLUDED", Attempts: `[{"connectionId":"conn-a","verdict":"excluded","code":"connection_cooldown"}]`},
		{RequestID: "paused", CreatedAt: 3, Status: 503, ErrorCode: "GATEWAY_PAUSED", Attempts: `null`},
		{RequestID: "failed", CreatedAt: 4, Status: 502, ConnectionID: "conn-b", ErrorCode: "UPSTREAM_RATE_LIMITED", Attempts: `[]`},
	}
	if err := s.InsertRequestLogs(rows); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		f    RequestLogFilter
		want []string
	}{
		{"connection name → excluded in attempts", RequestLogFilter{Text: "Lab box", ConnectionIDs: []string{"conn-a"}}, []string{"excluded", "served"}},
		{"words of a code", RequestLogFilter{Text: "until you resume", ErrorCodes: []string{"GATEWAY_PAUSED"}}, []string{"paused"}},
		{"code with spaces", RequestLogFilter{Text: "rate limited"}, []string{"failed"}},
		{"refused", RequestLogFilter{Text: "refused", Refused: true}, []string{"paused", "excluded"}},
		{"a wildcard in an id is plain", RequestLogFilter{Text: "zzz", ConnectionIDs: []string{"conn_%"}}, nil},
	} {
		got, _, err := s.FilteredRequestLogs(tt.f, 100)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var ids []string
		for _, l := range got {
			ids = append(ids, l.RequestID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, ids, tt.want)
		}
	}
}
