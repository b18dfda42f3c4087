package server

import (
	"sync"
	"testing"
	"time"

	"omniroute/backend/budget"
	"omniroute/backend/clock"
	"omniroute/backend/errs"
	"omniroute/backend/gateway"
	"omniroute/backend/pricing"
	"omniroute/backend/store"
)

// TestTPMKeyHoldsItsEstimateInFlight: the cost hook estimates the requests
// of a key with a TPM limit and no budget, as it does a budgeted key's, so
// concurrent requests against tpm 100 (each estimated past it) admit one,
// and a served answer's hold is replaced by its tokens.
func TestTPMKeyHoldsItsEstimateInFlight(t *testing.T) {
	prices, err := pricing.New(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ledger := budget.New(clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	tpm := int64(100)
	ledger.Set("k", nil, &budget.Limits{TPM: &tpm}, budget.Spend{})
	h := costHook{prices: prices, ledger: ledger}
	body := []byte(`{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`)
	var (
		mu       sync.Mutex
		admitted []gateway.Hold
		refused  int
		wg       sync.WaitGroup
	)
	for range 40 {
		wg.Go(func() {
			hold, err := h.Admit("k", "m", body)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if errs.As(err).Code != "KEY_RATE_LIMITED" {
					t.Errorf("refusal %v", err)
				}
				refused++
				return
			}
			admitted = append(admitted, hold)
		})
	}
	wg.Wait()
	if len(admitted) != 2 || refused != 38 {
		t.Fatalf("admitted %d, refused %d of 40 against tpm 100 (each held at ~70 tokens); want 2 and 38", len(admitted), refused)
	}
	for _, hold := range admitted {
		if hold.Rate <= 50 || hold.Held {
			t.Fatalf("hold %+v: want the estimate held against the limit, no budget hold", hold)
		}
		h.Release("k", hold)
	}
	hold, err := h.Admit("k", "m", body)
	if err != nil {
		t.Fatalf("after the holds were given back: %v", err)
	}
	h.Charge(store.RequestLog{APIKeyID: "k"}, "m", pricing.Usage{Prompt: 60, Output: 40}, hold)
	if _, err := h.Admit("k", "m", body); err == nil || errs.As(err).RetryAfter != time.Minute {
		t.Fatalf("after 100 tokens were charged: %v, want refused for the window", err)
	}
}
