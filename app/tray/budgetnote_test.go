package tray

import (
	"strings"
	"testing"
	"time"
)

// TestBudgetNotes: a key's 80 % and 100 % alerts become desktop
// notifications (100 % urgent), each once within the gap; muted or
// malformed, nothing.
func TestBudgetNotes(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	f := &fakeNotifier{}
	w := NewWatcher(f, func() time.Time { return now })
	at80 := []byte(`{"keyId":"k1","keyName":"ci","percent":80,"usd":0.008,"tokens":10,"periodStart":1,"budget":{"usd":0.01,"period":"day"}}`)
	at100 := []byte(`{"keyId":"k1","keyName":"ci","percent":100,"usd":0.0101,"tokens":12,"budget":{"usd":0.01,"period":"day"}}`)
	w.Budget(at80, true)
	if len(f.got) != 0 {
		t.Fatalf("muted: %v", f.got)
	}
	w.Budget(at80, false)
	w.Budget(at80, false) // the same level again: not twice
	w.Budget(at100, false)
	w.Budget([]byte(`{"keyId":"k1","percent":50}`), false)
	w.Budget([]byte(`not json`), false)
	if len(f.got) != 2 {
		t.Fatalf("got %d notifications, want 2: %v", len(f.got), f.got)
	}
	if n := f.got[0]; n.Urgent || n.Summary != "OmniRoute: key “ci” at 80 % of its day budget" || n.Body != "$0.0080 of $0.0100 spent." {
		t.Fatalf("80 %%: %+v", n)
	}
	if n := f.got[1]; !n.Urgent || !strings.Contains(n.Summary, "at 100 %") || !strings.Contains(n.Body, "refused") {
		t.Fatalf("100 %%: %+v", n)
	}
	tokens, _ := BudgetNote([]byte(`{"keyId":"k2","percent":80,"tokens":80,"budget":{"tokens":100,"period":"total"}}`))
	if tokens.Summary != "OmniRoute: key “k2” at 80 % of its total budget" || tokens.Body != "80 of 100 tokens used." {
		t.Fatalf("a token budget: %+v", tokens)
	}
}
