package tray

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// budgetAlert is the gateway's "budget" event: a key's spend crossed 80 % or
// 100 % of its budget (backend/budget.Alert with the key's name).
type budgetAlert struct {
	KeyID   string  `json:"keyId"`
	KeyName string  `json:"keyName"`
	Percent int     `json:"percent"`
	USD     float64 `json:"usd"`
	Tokens  int64   `json:"tokens"`
	Budget  struct {
		USD    *float64 `json:"usd"`
		Tokens *int64   `json:"tokens"`
		Period string   `json:"period"`
	} `json:"budget"`
}

// BudgetNote is the desktop notification of a "budget" event's data (ok
// false when it is not one): at 100 % urgent, the key now refused.
func BudgetNote(data []byte) (Note, bool) {
	var a budgetAlert
	if err := json.Unmarshal(data, &a); err != nil || a.KeyID == "" || (a.Percent != 80 && a.Percent != 100) {
		return Note{}, false
	}
	name := a.KeyName
	if name == "" {
		name = a.KeyID
	}
	n := Note{Summary: fmt.Sprintf("OmniRoute: key “%s” at %d %% of its %s budget", name, a.Percent, a.Budget.Period)}
	var spent string
	switch {
	case a.Budget.USD != nil:
		spent = fmt.Sprintf("$%.4f of $%.4f spent", a.USD, *a.Budget.USD)
	case a.Budget.Tokens != nil:
		spent = strconv.FormatInt(a.Tokens, 10) + " of " + strconv.FormatInt(*a.Budget.Tokens, 10) + " tokens used"
	}
	if a.Percent == 100 {
		n.Body, n.Urgent = spent+". Its requests are refused until the budget resets or is raised (API Keys).", true
	} else {
		n.Body = spent + "."
	}
	return n, true
}

// Budget announces a "budget" event (once per key and level within the
// per-connection gap, and within the burst limit); muted, nothing.
func (w *Watcher) Budget(data []byte, muted bool) {
	n, ok := BudgetNote(data)
	if !ok || muted {
		return
	}
	var a budgetAlert
	_ = json.Unmarshal(data, &a)
	if !w.allow("budget:"+a.KeyID+":"+strconv.Itoa(a.Percent), w.now()) {
		return
	}
	_ = w.send.Notify(n)
}
