package store

import (
	"slices"
	"testing"
)

// TestUnreadableLogRowsAreSkippedAndCounted (issue 39): a request-log row
// with text in a numeric column is left out of a page and its id reported,
// instead of failing the whole page; the page counts it towards the limit.
func TestUnreadableLogRowsAreSkippedAndCounted(t *testing.T) {
	s, _ := openTemp(t)
	rows := make([]RequestLog, 6)
	for i := range rows {
		rows[i] = RequestLog{RequestID: "r" + string(rune('a'+i)), CreatedAt: int64(1000 + i), Attempts: `[]`, Status: 200}
	}
	if err := s.InsertRequestLogs(rows); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE request_logs SET latency_ms = 'abc' WHERE id = 2`, `UPDATE request_logs SET status = 'x' WHERE id = 5`} {
		if err := s.DB().Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	got, skipped, err := s.FilteredRequestLogs(RequestLogFilter{}, 100)
	if err != nil {
		t.Fatalf("a damaged row failed the page: %v", err)
	}
	var ids []int64
	for _, l := range got {
		ids = append(ids, l.ID)
	}
	if !slices.Equal(ids, []int64{6, 4, 3, 1}) || !slices.Equal(skipped, []int64{5, 2}) {
		t.Fatalf("rows %v skipped %v; want rows [6 4 3 1], skipped [5 2]", ids, skipped)
	}
	got, skipped, err = s.FilteredRequestLogs(RequestLogFilter{}, 2)
	if err != nil || len(got)+len(skipped) != 2 || got[0].ID != 6 || skipped[0] != 5 {
		t.Fatalf("limit 2: %v %v %v", got, skipped, err)
	}
}
