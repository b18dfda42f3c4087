package metrics

import (
	"strconv"
	"testing"
)

// TestStatusLabelIsItoa: the status label is the decimal status, whether it
// comes from the fixed strings or from strconv.
func TestStatusLabelIsItoa(t *testing.T) {
	for s := 0; s < 1000; s++ {
		if got, want := statusLabel(s), strconv.Itoa(s); got != want {
			t.Fatalf("statusLabel(%d) = %q, want %q", s, got, want)
		}
	}
}
