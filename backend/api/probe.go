package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	credredact "omniroute/backend/redact"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// Executors picks the upstream executor of a wire format (the gateway's own
// set, so a credential check sends exactly what a request would).
type Executors interface {
	For(f providers.Format) (providers.Executor, bool)
}

// KeyRejected is the terminal state a connection enters when its upstream
// answers 401/403 to the credential check: "the provider rejected this key".
// It is persisted in test_status like banned / expired and left only by new
// credentials (or a check that passes).
const KeyRejected = "key_rejected"

// codeKeyRejected is the error code stored with a key_rejected state.
const codeKeyRejected = "KEY_REJECTED"

// EndpointNotFound is the terminal state a connection enters when its base
// URL answers 404 to the credential check's completion and gives no model
// list either (an anthropic-compatible URL without /v1): "this URL answers
// 404: check the base URL". Persisted in test_status like key_rejected and
// left by an edit whose check passes, or a Test that passes.
const EndpointNotFound = "endpoint_not_found"

// codeEndpointNotFound is the error code stored with an endpoint_not_found state.
const codeEndpointNotFound = "ENDPOINT_NOT_FOUND"

// Outcomes a check names in Check.State (the health state it leaves).
const (
	checkUnreachable = "unreachable"
	checkServing     = "serving"
)

// Check steps, in order.
const (
	stepReach      = "reach"
	stepAuth       = "auth"
	stepModels     = "models"
	stepCompletion = "completion"
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

// probeTimeout bounds the one-token completion.
const probeTimeout = 20 * time.Second

// probeBodyLimit bounds how much of the probe's answer is read.
const probeBodyLimit = 64 << 10

// checkConnection runs model discovery (storing the list, as refreshModels
// does) and one minimal completion, then records the outcome on the
// connection: a 401/403 makes it key_rejected (not serving); a passing check
// lifts an earlier terminal state (key_rejected, endpoint_not_found, banned,
// expired, credits_exhausted): the operator's reset.
func (a *API) checkConnection(ctx context.Context, id string) (Check, discovery.Result, error) {
	return a.runCheck(ctx, id, true)
}

// runCheck is checkConnection; keep false asks GET /models without storing
// its answer (a save's check of a connection whose models are listed by
// hand: the list stays the user's).
func (a *API) runCheck(ctx context.Context, id string, keep bool) (Check, discovery.Result, error) {
	row, res, err := a.discoverModels(ctx, id, true, keep)
	if err != nil {
		return Check{}, res, err
	}
	c, ok := a.Engine.Registry().Get(id)
	if !ok {
		return Check{}, res, store.ErrNotFound
	}
	var ch Check
	reach := CheckStep{Step: stepReach, OK: true}
	auth := CheckStep{Step: stepAuth, OK: true}
	models := CheckStep{Step: stepModels, OK: res.Err == nil}
	discoveryAuth := false
	if res.Err != nil {
		models.Status, models.Message = res.Err.Status, res.Err.Message
		if res.Err.Code == discovery.CodeUnreachable {
			reach.OK, reach.Message = false, res.Err.Message
		}
		if res.Err.Status == http.StatusUnauthorized || res.Err.Status == http.StatusForbidden {
			discoveryAuth = true
		}
	} else {
		models.Message = strconv.Itoa(len(res.Models)) + " models listed"
	}
	comp := CheckStep{Step: stepCompletion}
	served := routing.ServedModels(row)
	switch {
	case !reach.OK:
		comp.Skipped, comp.Message = true, "not tried: the upstream could not be reached"
	case len(served) == 0:
		comp.Skipped, comp.Message = true, "not tried: the connection serves no model yet"
	default:
		comp = a.probeCompletion(ctx, c, probeModel(served))
		if comp.Status == 0 && !comp.OK && !comp.Skipped {
			reach.OK, reach.Message = false, comp.Message
		}
	}
	switch {
	case comp.Status == http.StatusUnauthorized || comp.Status == http.StatusForbidden:
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
	if comp.OK {
		a.readQuota(ctx, c)
	}
	// The completion is an attempt like any other for the connection's reach
	// (discovery noted its own in refreshModels).
	if !comp.Skipped {
		c.NoteReach(comp.Status != 0, comp.Message, a.Clock.Now())
	}
	ch.Steps = []CheckStep{reach, auth, models, comp}
	ch.OK = true
	for _, s := range ch.Steps {
		// A model list the upstream will not give is no failure when the
		// completion passed: the names the connection routes answer.
		if !s.OK && !s.Skipped && !(s.Step == stepModels && comp.OK) {
			ch.OK = false
		}
	}
	// A subscription (OAuth) token that fails is refreshed, not replaced: only
	// a key the user typed is called rejected.
	ch.Rejected = !auth.OK && !auth.Skipped && c.AuthType != "oauth" &&
		(auth.Status == http.StatusUnauthorized || auth.Status == http.StatusForbidden)
	// A 404 to the completion from an upstream that gave no model list
	// either: the base URL is wrong (a missing /v1), not the model.
	notFound := !ch.Rejected && comp.Status == http.StatusNotFound && res.Source != discovery.SourceUpstream
	st := c.Cooldown()
	switch {
	case ch.OK:
		ch.State = checkServing
	case ch.Rejected:
		ch.State = KeyRejected
	case notFound:
		ch.State = EndpointNotFound
	case !reach.OK:
		ch.State = checkUnreachable
		ch.Warning = "the upstream could not be reached: " + orElseStr(reach.Message, "no answer") + "; check the base URL and the network"
	}
	switch {
	case notFound:
		msg := "this URL answers 404: check the base URL (" + comp.Model + " at " + credredact.URL(c.Endpoint()) + ")"
		ch.Warning = msg
		next := cooldown.State{Terminal: EndpointNotFound, TestStatus: EndpointNotFound, LastError: capString(msg),
			LastErrorType: "not_found", ErrorCode: codeEndpointNotFound, LastErrorAt: a.Clock.Now()}
		if err := a.Engine.SetCooldown(c, next); err != nil {
			return ch, res, err
		}
	case ch.Rejected:
		msg := "the provider rejected this key (" + strconv.Itoa(auth.Status)
		if auth.Message != "" {
			msg += ": " + auth.Message
		}
		msg += ")"
		ch.Warning = msg
		next := cooldown.State{Terminal: KeyRejected, TestStatus: KeyRejected, LastError: capString(msg),
			LastErrorType: "auth", ErrorCode: codeKeyRejected, LastErrorAt: a.Clock.Now()}
		if err := a.Engine.SetCooldown(c, next); err != nil {
			return ch, res, err
		}
	case comp.OK && cooldown.TerminalOf(st) != "":
		// A passing check is the operator's reset of a terminal state (guide
		// §2: terminal until the credentials change or an operator resets
		// it): the account answered, so banned, expired or out of credits no
		// longer holds (credits topped up, a ban lifted, a login renewed).
		if err := a.Engine.SetCooldown(c, cooldown.ClearTerminal(st)); err != nil {
			return ch, res, err
		}
	}
	if ch.OK {
		a.Engine.Breakers().Get(c.BreakerKey).ConnectionTestPassed()
	}
	return ch, res, nil
}

// orElseStr is s, or def when s is empty.
func orElseStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// isRedirect reports a 3xx status (the gateway follows no upstream redirect).
func isRedirect(status int) bool { return status >= 300 && status <= 399 }

// probeCompletion sends one minimal request (one output token) for model in
// the connection's wire format and reports what the upstream answered.
func (a *API) probeCompletion(ctx context.Context, c *routing.Conn, model string) CheckStep {
	step := CheckStep{Step: stepCompletion, Model: model}
	t := c.Target(model)
	if c.AuthType == "oauth" {
		// A subscription token is checked by its refresh and its usage wall;
		// a bare completion is not what its client sends (and would spend
		// it), except where the provider's module says the CLI's own call is one.
		if m := c.Provider.Module; m == nil || !m.CheckedByCompletion || a.FreshToken == nil {
			step.Skipped, step.Message = true, "not tried: subscription connections are checked by their token"
			return step
		}
		tok, err := a.FreshToken(ctx, c)
		if err != nil {
			step.Status, step.Message = http.StatusUnauthorized, capString("the access token could not be refreshed: "+err.Error())
			return step
		}
		t.Secret = tok
	}
	format := c.Provider.FormatOf(model)
	var body []byte
	switch format {
	case providers.FormatOpenAI:
		body, _ = json.Marshal(map[string]any{"model": model, "max_tokens": 1,
			"messages": []any{map[string]any{"role": "user", "content": "ping"}}})
	case providers.FormatAnthropic:
		body, _ = json.Marshal(map[string]any{"model": model, "max_tokens": 1,
			"messages": []any{map[string]any{"role": "user", "content": "ping"}}})
	case providers.FormatResponses:
		// A Responses connection with a key (the Codex subscription is OAuth,
		// not probed); some Responses upstreams take no max_output_tokens under 16.
		body, _ = json.Marshal(map[string]any{"model": model, "max_output_tokens": 16, "input": "ping"})
	case providers.FormatGemini:
		body = []byte(`{"contents":[{"role":"user","parts":[{"text":"ping"}]}],"generationConfig":{"maxOutputTokens":1}}`)
	default:
		step.Skipped, step.Message = true, "not tried: no minimal request for the "+string(format)+" wire format"
		return step
	}
	if a.Executors == nil {
		step.Skipped, step.Message = true, "not tried: no executor"
		return step
	}
	exec, ok := a.Executors.For(format)
	if !ok {
		step.Skipped, step.Message = true, "not tried: no executor for the "+string(format)+" wire format"
		return step
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	resp, err := exec.Do(ctx, &t, providers.Call{Body: body})
	if err != nil {
		step.Message = "upstream unreachable: " + redactIn(transportMessage(err), t.Secret)
		if ctx.Err() != nil {
			step.Message = "the upstream did not answer in time"
		}
		return step
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
	step.Status = resp.StatusCode
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		step.OK, step.Message = true, "answered "+strconv.Itoa(resp.StatusCode)
		return step
	}
	msg := upstreamMessage(raw)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	step.Message = capString(redactIn(msg, t.Secret))
	return step
}

// nonChat marks model names that do not answer a chat completion
// (embeddings, speech, images, moderation): a discovered list may start with
// one, and a 404 from it would say nothing about the key.
var nonChat = []string{"embed", "whisper", "tts", "dall-e", "image", "moderation", "transcribe", "audio", "rerank"}

// probeModel is the first served model that looks like a chat model (the
// user's own list comes first), else the first one.
func probeModel(served []string) string {
	for _, m := range served {
		lower := strings.ToLower(m)
		if !slices.ContainsFunc(nonChat, func(p string) bool { return strings.Contains(lower, p) }) {
			return m
		}
	}
	return served[0]
}

// upstreamMessage reads an error body's message in OpenAI's, Anthropic's or a
// plain shape; "" when it has none.
func upstreamMessage(raw []byte) string {
	if gjson.ValidBytes(raw) {
		r := gjson.ParseBytes(raw)
		for _, p := range []string{"error.message", "message", "error", "detail"} {
			if v := r.Get(p); v.Type == gjson.String && v.String() != "" {
				return v.String()
			}
		}
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// transportMessage is a transport error without the request URL Go's
// *url.Error puts in front (it may carry a key in its query).
func transportMessage(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// redactIn removes the connection's own secret from s by value.
func redactIn(s, secret string) string {
	if len(secret) < 4 {
		return s
	}
	s = strings.ReplaceAll(s, secret, "[redacted]")
	if q := url.QueryEscape(secret); q != secret {
		s = strings.ReplaceAll(s, q, "[redacted]")
	}
	return s
}

// readQuota reads a login's quota buckets (its dialect's QuotaReader) into
// its usage windows for the Subscriptions card: the most used daily model
// quota. Nothing changes when they cannot be read.
func (a *API) readQuota(ctx context.Context, c *routing.Conn) {
	reader := a.Quotas[c.Provider.Dialect]
	if c.Provider.Dialect == "" || reader == nil || a.FreshToken == nil {
		return
	}
	tok, err := a.FreshToken(ctx, c)
	if err != nil {
		return
	}
	t := c.Target("")
	t.Secret = tok
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	buckets, status, err := reader.QuotaBuckets(ctx, &t)
	if err != nil || status != http.StatusOK || len(buckets) == 0 {
		return
	}
	q := c.QuotaWindows()
	q.Daily, q.DailyModel, q.ObservedAt = routing.Window{Utilization: -1}, "", a.Clock.Now()
	for _, b := range buckets {
		if used := 1 - b.Remaining; used > q.Daily.Utilization {
			q.Daily, q.DailyModel = routing.Window{Utilization: used, ResetsAt: b.ResetsAt}, b.Model
		}
	}
	c.SetQuotaWindows(q)
}
