package bench

import (
	"strings"
	"testing"
	"time"
)

// TestCheckHealthBudget pins the verdict of make bench-health: a p95 at the
// budget passes, one tick over fails, and any failed request fails; the p95
// of a run too short to measure (the b.N = 1 warm-up) is not held to it.
func TestCheckHealthBudget(t *testing.T) {
	tests := []struct {
		name    string
		p95     time.Duration
		errs    int64
		answers int      // 0: healthMinAnswers
		wantErr []string // substrings of the error; none means it passes
	}{
		{name: "under budget", p95: healthP95Budget - time.Millisecond},
		{name: "at budget", p95: healthP95Budget},
		{name: "over budget by 1µs", p95: healthP95Budget + time.Microsecond, wantErr: []string{"p95", "over its 50ms budget"}},
		{name: "far over budget", p95: 3 * healthP95Budget, wantErr: []string{"p95 150ms"}},
		{name: "errors under budget p95", p95: time.Millisecond, errs: 1, wantErr: []string{"1 health requests failed"}},
		{name: "both missed", p95: 2 * healthP95Budget, errs: 2, wantErr: []string{"2 health requests failed", "p95 100ms"}},
		{name: "warm-up run over budget is not judged", p95: 3 * healthP95Budget, answers: 1},
		{name: "one answer short of judged", p95: 3 * healthP95Budget, answers: healthMinAnswers - 1},
		{name: "warm-up run with an error fails", p95: time.Millisecond, errs: 1, answers: 1, wantErr: []string{"1 health requests failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers := tt.answers
			if answers == 0 {
				answers = healthMinAnswers
			}
			err := checkHealthBudget(tt.p95, tt.errs, answers)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("checkHealthBudget(%v, %d, %d) = %v, want nil", tt.p95, tt.errs, answers, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("checkHealthBudget(%v, %d, %d) = nil, want an error", tt.p95, tt.errs, answers)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
