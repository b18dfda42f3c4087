package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/tidwall/gjson"

	"omniroute/backend/gateway"
	"omniroute/backend/prefillcap"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// PrefillProbe is what Test's prefill probe found of the model it tested:
// whether the model continues a trailing assistant message (how a cut
// stream is finished on another target), as now recorded for it.
type PrefillProbe struct {
	Model         string            `json:"model"`
	Prefill       prefillcap.State  `json:"prefill"`
	PrefillSource prefillcap.Source `json:"prefillSource,omitempty"`
	// Skipped: no probe was sent (the connection declares its prefill, or
	// the wire takes none); Prefill is then what stands.
	Skipped bool `json:"skipped,omitempty"`
	// Status is the probe's HTTP status (0: not sent or no answer).
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
}

// modelPrefill is the connection JSON's per-model prefill: for each served
// model, {prefill, prefillSource} (the declaration, else what was learned
// or probed, else unknown).
func (a *API) modelPrefill(row store.Connection, served []string) map[string]prefillcap.Entry {
	out := make(map[string]prefillcap.Entry, len(served))
	declared := declaredPrefill(row.ProviderSpecificData)
	if live, ok := a.Engine.Registry().Get(row.ID); ok {
		declared = string(live.Prefill)
	}
	for _, m := range served {
		out[m] = a.Prefills.View(row.ID, m, declared)
	}
	return out
}

// declaredPrefill reads providerSpecificData.assistantPrefill ("" none).
func declaredPrefill(psd string) string {
	return gjson.Get(psd, "assistantPrefill").String()
}

// prefillProbe sends, after a check whose completion passed, one request
// for that model ending with an assistant message that holds
// prefillcap.Marker (the smallest output the wire allows) and records what
// the answer shows. ran is false when there is nothing to say (no book, or
// the completion did not pass: the model was not reached).
func (a *API) prefillProbe(ctx context.Context, id string, ch Check) (p PrefillProbe, ran bool) {
	var comp *CheckStep
	for i := range ch.Steps {
		if ch.Steps[i].Step == stepCompletion {
			comp = &ch.Steps[i]
		}
	}
	if a.Prefills == nil || comp == nil || !comp.OK || comp.Model == "" {
		return p, false
	}
	c, ok := a.Engine.Registry().Get(id)
	if !ok {
		return p, false
	}
	model := comp.Model
	p.Model = model
	if c.Prefill != "" {
		e := a.Prefills.View(c.ID, model, string(c.Prefill))
		p.Prefill, p.PrefillSource, p.Skipped = e.State, e.Source, true
		p.Message = "declared on the connection (assistantPrefill: " + string(c.Prefill) + "): not probed"
		return p, true
	}
	format := c.Provider.FormatOf(model)
	body, err := prefillProbeBody(c, model, format)
	if err != nil || a.Executors == nil || c.AuthType == "oauth" {
		e := a.Prefills.View(c.ID, model, "")
		p.Prefill, p.PrefillSource, p.Skipped = e.State, e.Source, true
		p.Message = "not probed: the probe covers the Chat Completions and Messages wires, not " + string(format)
		if c.AuthType == "oauth" {
			p.Message = "not probed: subscription connections are not sent test requests"
		}
		return p, true
	}
	exec, ok := a.Executors.For(format)
	if !ok {
		return p, false
	}
	t := c.Target(model)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var f prefillcap.Finding
	resp, err := exec.Do(ctx, &t, providers.Call{Body: body})
	if err != nil {
		f = prefillcap.Judge(0, nil, "")
	} else {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
		resp.Body.Close()
		p.Status = resp.StatusCode
		f = prefillcap.Judge(resp.StatusCode, raw, probeAnswerText(format, raw))
	}
	if err := a.Prefills.Probed(c.ID, model, f.State); err != nil {
		f.Message += " (kept until the gateway stops: the database did not take it)" // the book logged why
	}
	e := a.Prefills.View(c.ID, model, "")
	p.Prefill, p.PrefillSource, p.Message = e.State, e.Source, f.Message
	return p, true
}

// prefillProbeBody is the probe: the user asks for the marker word and the
// assistant turn already holds it, with one output token. Chat bodies carry
// the continuation flags a continuation on c would send.
func prefillProbeBody(c *routing.Conn, model string, format providers.Format) ([]byte, error) {
	msgs := []any{map[string]any{"role": "user", "content": prefillcap.ProbeQuestion},
		map[string]any{"role": "assistant", "content": prefillcap.Marker}}
	switch format {
	case providers.FormatOpenAI:
		body, err := json.Marshal(map[string]any{"model": model, "max_tokens": 1, "messages": msgs})
		if err != nil {
			return nil, err
		}
		return gateway.PrefillFlags(c, model, body)
	case providers.FormatAnthropic:
		return json.Marshal(map[string]any{"model": model, "max_tokens": 1, "messages": msgs})
	}
	return nil, errNoProbe
}

// errNoProbe: the wire has no prefill probe.
var errNoProbe = errors.New("no prefill probe for this wire")

// probeAnswerText is the answer's text: Chat's first choice, Messages'
// text blocks ("" for none, or a body it cannot read).
func probeAnswerText(format providers.Format, raw []byte) string {
	if format == providers.FormatAnthropic {
		var b strings.Builder
		for _, c := range gjson.GetBytes(raw, "content").Array() {
			if c.Get("type").String() == "text" {
				b.WriteString(c.Get("text").String())
			}
		}
		return b.String()
	}
	return gjson.GetBytes(raw, "choices.0.message.content").String()
}
