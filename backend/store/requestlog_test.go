package store

import (
	"fmt"
	"testing"
)

// TestInsertRequestLogsChunks writes batches around the multi-row INSERT's
// chunk size and reads every row back with all its columns.
func TestInsertRequestLogsChunks(t *testing.T) {
	s, _ := openTemp(t)
	total := 0
	for _, n := range []int{1, requestLogInsertChunk - 1, requestLogInsertChunk, requestLogInsertChunk + 1, 2*requestLogInsertChunk + 3} {
		rows := make([]RequestLog, n)
		for i := range rows {
			id := total + i
			rows[i] = RequestLog{RequestID: fmt.Sprintf("req_%04d", id), CreatedAt: int64(1000 + id), APIKeyID: "k", ClientFormat: "openai",
				Model: "m", Provider: "p", ConnectionID: "c", Status: 200 + id%2, Stream: id%2 == 1, AttemptCount: 1 + id%3,
				Attempts: `[]`, LatencyMs: int64(id), ErrorCode: fmt.Sprint("E", id), PromptTokens: id, CompletionTokens: 2 * id,
				QueueMs: int64(3 * id), QueueReason: "q", CachedTokens: 4 * id}
		}
		if err := s.InsertRequestLogs(rows); err != nil {
			t.Fatalf("batch of %d: %v", n, err)
		}
		total += n
	}
	got, err := s.RecentRequestLogs(total + 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != total {
		t.Fatalf("%d rows read back, want %d", len(got), total)
	}
	for i, r := range got {
		id := total - 1 - i // newest first
		want := RequestLog{ID: r.ID, RequestID: fmt.Sprintf("req_%04d", id), CreatedAt: int64(1000 + id), APIKeyID: "k", ClientFormat: "openai",
			Model: "m", Provider: "p", ConnectionID: "c", Status: 200 + id%2, Stream: id%2 == 1, AttemptCount: 1 + id%3,
			Attempts: `[]`, LatencyMs: int64(id), ErrorCode: fmt.Sprint("E", id), PromptTokens: id, CompletionTokens: 2 * id,
			QueueMs: int64(3 * id), QueueReason: "q", CachedTokens: 4 * id}
		if r != want {
			t.Fatalf("row %d:\n got %+v\nwant %+v", id, r, want)
		}
	}
}
