package strategy

import (
	"math/rand/v2"
	"testing"
)

func qsTargets(inflight ...int) []Target {
	ts := make([]Target, len(inflight))
	for i, n := range inflight {
		ts[i] = Target{Key: string(rune('a' + i)), Index: i, Weight: 1, InFlight: n, Cap: 1}
	}
	return ts
}

// A target at its connection's cap is never chosen while another is below
// it, and is still returned (fail-open: deprioritised, not removed).
func TestQuotaShareDeprioritisesAtCap(t *testing.T) {
	st := NewState(rand.New(rand.NewPCG(1, 2)))
	for i := 0; i < 200; i++ {
		out := st.QuotaShare(qsTargets(1, 0, 1))
		if len(out) != 3 {
			t.Fatalf("got %d targets, want all 3 (fail-open)", len(out))
		}
		if out[0].Key != "b" {
			t.Fatalf("round %d: first = %s, want b (the only one below its cap)", i, out[0].Key)
		}
	}
	out := st.QuotaShare(qsTargets(1, 1, 1))
	if len(out) != 3 {
		t.Fatalf("every target at cap: got %d targets, want 3", len(out))
	}
}

// Deficit round robin: with equal load, picks follow the weights exactly over
// whole rounds (each round every target earns its share, the pick pays one).
func TestQuotaShareDRRFollowsWeights(t *testing.T) {
	st := NewState(rand.New(rand.NewPCG(3, 4)))
	ts := []Target{{Key: "a", Index: 0, Weight: 1}, {Key: "b", Index: 1, Weight: 3}}
	picks := map[string]int{}
	for i := 0; i < 400; i++ {
		picks[st.QuotaShare(ts)[0].Key]++
	}
	if picks["a"] < 95 || picks["a"] > 105 || picks["b"] < 295 || picks["b"] > 305 {
		t.Fatalf("picks = %v, want about 100 / 300 (weights 1:3)", picks)
	}
	if d := st.Deficit("a") + st.Deficit("b"); d > 1e-9 || d < -1e-9 {
		t.Fatalf("deficits sum to %v, want 0 (earned = paid)", d)
	}
}

// P2C: with three equal targets the deficit keeps the choice rotating: no
// target is picked twice before the others had a turn in a round.
func TestQuotaShareRotates(t *testing.T) {
	st := NewState(rand.New(rand.NewPCG(5, 6)))
	counts := map[string]int{}
	for i := 0; i < 300; i++ {
		counts[st.QuotaShare(qsTargets(0, 0, 0))[0].Key]++
	}
	for k, n := range counts {
		if n < 90 || n > 110 {
			t.Fatalf("counts = %v: %s picked %d times, want about 100", counts, k, n)
		}
	}
}
