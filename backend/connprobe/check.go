package connprobe

import (
	"context"
	"net/http"
	"strconv"

	"omniroute/backend/health"
	"omniroute/backend/providers/discovery"
	credredact "omniroute/backend/redact"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// CheckStep is one step of a credential check as Test reports it.
type CheckStep struct {
	Step string `json:"step"`
	OK   bool   `json:"ok"`
	// Skipped: the step could not run (an earlier one failed, or the wire
	// format has no minimal request); it counts neither way.
	Skipped bool `json:"skipped,omitempty"`
	// Status is the upstream's HTTP status (0: none, e.g. unreachable).
	Status int `json:"status,omitempty"`
	// Message is the upstream's own message (credential redacted), or ours.
	Message string `json:"message,omitempty"`
	// Model is the model the completion step asked for.
	Model string `json:"model,omitempty"`
}

// Check is a connection's credential check: discovery (GET /models) and one
// minimal completion on its first served model in its wire format.
type Check struct {
	OK    bool        `json:"ok"`
	Steps []CheckStep `json:"steps"`
	// Rejected: the upstream answered 401/403 to the completion (or, without
	// a completion, to the model list): the key was rejected.
	Rejected bool `json:"rejected"`
	// Warning is the sentence a create / edit answer carries when the check
	// failed: a rejected key, a base URL answering 404, an upstream that
	// could not be reached.
	Warning string `json:"warning,omitempty"`
	// State names the outcome as the health model will show it: serving,
	// key_rejected, endpoint_not_found or unreachable ("" when the check
	// failed otherwise, e.g. a model the upstream does not serve).
	State string `json:"state,omitempty"`
}

// Failed is the first step that failed (ok false: the check passed, or no
// step failed outright): Test's status, error and message.
func (ch Check) Failed() (CheckStep, bool) {
	if ch.OK {
		return CheckStep{}, false
	}
	for _, s := range ch.Steps {
		if !s.OK && !s.Skipped {
			return s, true
		}
	}
	return CheckStep{}, false
}

// step is the check's step named name (nil: none).
func (ch Check) step(name string) *CheckStep {
	for i := range ch.Steps {
		if ch.Steps[i].Step == name {
			return &ch.Steps[i]
		}
	}
	return nil
}

// Run checks connection id: discovery (its list stored when keep, as a
// refresh does; keep false asks GET /models without storing the answer, for
// a connection whose models are listed by hand) and one minimal completion,
// then records the outcome on the connection: a 401/403 makes it
// key_rejected (not serving), a 404 from an upstream that listed nothing
// endpoint_not_found; a passing check lifts every terminal state
// (key_rejected, endpoint_not_found, banned, expired, credits_exhausted): the
// operator's reset.
func (p *Prober) Run(ctx context.Context, id string, keep bool) (Check, discovery.Result, error) {
	row, res, err := p.Discover(ctx, id, true, keep)
	if err != nil {
		return Check{}, res, err
	}
	c, ok := p.Engine.Registry().Get(id)
	if !ok {
		return Check{}, res, store.ErrNotFound
	}
	var comp CheckStep
	served := routing.ServedModels(row)
	reach, models := discoveryReach(res)
	switch {
	case !reach.OK:
		comp = CheckStep{Step: StepCompletion, Skipped: true, Message: "not tried: the upstream could not be reached"}
	case len(served) == 0:
		comp = CheckStep{Step: StepCompletion, Skipped: true, Message: "not tried: the connection serves no model yet"}
	default:
		comp = p.probeCompletion(ctx, c, probeModel(served))
		if comp.Status == 0 && !comp.OK && !comp.Skipped {
			reach.OK, reach.Message = false, comp.Message
		}
	}
	if comp.OK {
		p.readQuota(ctx, c)
	}
	// The completion is an attempt like any other for the connection's reach
	// (discovery noted its own).
	if !comp.Skipped {
		c.NoteReach(comp.Status != 0, comp.Message, p.Clock.Now())
	}
	ch := judge(reach, models, comp, res, c.AuthType == "oauth", credredact.URL(c.Endpoint()))
	return ch, res, p.record(c, ch)
}

// discoveryReach is what discovery's answer says of the reach and models
// steps.
func discoveryReach(res discovery.Result) (reach, models CheckStep) {
	reach = CheckStep{Step: StepReach, OK: true}
	models = CheckStep{Step: StepModels, OK: res.Err == nil}
	if res.Err == nil {
		models.Message = strconv.Itoa(len(res.Models)) + " models listed"
		return reach, models
	}
	models.Status, models.Message = res.Err.Status, res.Err.Message
	if res.Err.Code == discovery.CodeUnreachable {
		reach.OK, reach.Message = false, res.Err.Message
	}
	return reach, models
}

// judge is the check's verdict from its steps: the auth step (the
// completion's 401/403, a redirect, or discovery's 401/403 when no
// completion passed), whether the check passed, and the state and warning
// it leaves. oauth: a subscription token (refreshed, never called
// rejected); endpoint is the connection's base URL for the warning.
func judge(reach, models, comp CheckStep, res discovery.Result, oauth bool, endpoint string) Check {
	auth := CheckStep{Step: StepAuth, OK: true}
	discoveryAuth := res.Err != nil && authStatus(res.Err.Status)
	switch {
	case authStatus(comp.Status):
		auth.OK, auth.Status, auth.Message = false, comp.Status, comp.Message
	case isRedirect(comp.Status) || (!comp.OK && res.Err != nil && isRedirect(res.Err.Status)):
		// A redirect is no API answer: the key was never judged (a login
		// page, a moved endpoint), so it is not "ok" either.
		st := comp.Status
		if !isRedirect(st) {
			st = res.Err.Status
		}
		auth.OK, auth.Status = false, st
		auth.Message = "not known: the upstream answered " + strconv.Itoa(st) + " (a redirect, not an API answer); check the base URL"
	case comp.OK:
		// The completion passed: the key works, whatever GET /models said.
	case discoveryAuth:
		auth.OK, auth.Status, auth.Message = false, models.Status, models.Message
	}
	if !reach.OK {
		auth.Skipped, auth.OK = true, false
		auth.Message = "not known: the upstream could not be reached"
	}
	ch := Check{Steps: []CheckStep{reach, auth, models, comp}, OK: true}
	for _, s := range ch.Steps {
		// A model list the upstream will not give is no failure when the
		// completion passed: the names the connection routes answer.
		if !s.OK && !s.Skipped && !(s.Step == StepModels && comp.OK) {
			ch.OK = false
		}
	}
	// A subscription (OAuth) token that fails is refreshed, not replaced: only
	// a key the user typed is called rejected.
	ch.Rejected = !auth.OK && !auth.Skipped && !oauth && authStatus(auth.Status)
	// A 404 to the completion from an upstream that gave no model list
	// either: the base URL is wrong (a missing /v1), not the model.
	notFound := !ch.Rejected && comp.Status == http.StatusNotFound && res.Source != discovery.SourceUpstream
	switch {
	case ch.OK:
		ch.State = Serving
	case ch.Rejected:
		ch.State = KeyRejected
		msg := "the provider rejected this key (" + strconv.Itoa(auth.Status)
		if auth.Message != "" {
			msg += ": " + auth.Message
		}
		ch.Warning = msg + ")"
	case notFound:
		ch.State = EndpointNotFound
		ch.Warning = "this URL answers 404: check the base URL (" + comp.Model + " at " + endpoint + ")"
	case !reach.OK:
		ch.State = Unreachable
		ch.Warning = "the upstream could not be reached: " + orElse(reach.Message, "no answer") + "; check the base URL and the network"
	}
	return ch
}

// record keeps the check's outcome on c: a rejected key or a base URL
// answering 404 is a terminal state (testStatus key_rejected /
// endpoint_not_found); a passing completion lifts any terminal state (guide
// §2: terminal until the credentials change or an operator resets it: the
// account answered, so banned, expired or out of credits no longer holds); a
// passing check tells the provider's breaker.
func (p *Prober) record(c *routing.Conn, ch Check) error {
	st := c.Cooldown()
	comp := ch.step(StepCompletion)
	switch {
	case ch.State == EndpointNotFound:
		next := cooldown.State{Terminal: EndpointNotFound, TestStatus: EndpointNotFound, LastError: capString(ch.Warning),
			LastErrorType: "not_found", ErrorCode: codeEndpointNotFound, LastErrorAt: p.Clock.Now()}
		if err := p.Engine.SetCooldown(c, next); err != nil {
			return err
		}
	case ch.State == KeyRejected:
		next := cooldown.State{Terminal: KeyRejected, TestStatus: KeyRejected, LastError: capString(ch.Warning),
			LastErrorType: "auth", ErrorCode: codeKeyRejected, LastErrorAt: p.Clock.Now()}
		if err := p.Engine.SetCooldown(c, next); err != nil {
			return err
		}
	case comp != nil && comp.OK && cooldown.TerminalOf(st) != "":
		if err := p.Engine.SetCooldown(c, cooldown.ClearTerminal(st)); err != nil {
			return err
		}
	}
	if ch.OK {
		p.Engine.Breakers().Get(c.BreakerKey).ConnectionTestPassed()
	}
	return nil
}

// authStatus reports a 401 or 403: the upstream judged the credential.
func authStatus(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// isRedirect reports a 3xx status (the gateway follows no upstream redirect).
func isRedirect(status int) bool { return status >= 300 && status <= 399 }

// orElse is s, or def when s is empty.
func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestStatus is a connection's testStatus as the health model sees it: a
// connection whose upstream nothing has answered (discovery or attempts:
// health's unreachable) reads "unreachable", not "active"; a cooldown or
// terminal state keeps its own name.
func TestStatus(status string, r routing.Reach) string {
	if status == cooldown.StatusActive && (health.Reach{Reached: r.Reached, Misses: r.Misses}).Unreachable() {
		return Unreachable
	}
	return status
}
