package connprobe

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/tidwall/gjson"

	"omniroute/backend/gateway"
	"omniroute/backend/prefillcap"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
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

// Prefill sends, after a check whose completion passed, one request for
// that model ending with an assistant message that holds prefillcap.Marker
// (the smallest output the wire allows) and records what the answer shows.
// ran is false when there is nothing to say (no book, or the completion did
// not pass: the model was not reached).
func (p *Prober) Prefill(ctx context.Context, id string, ch Check) (out PrefillProbe, ran bool) {
	comp := ch.step(StepCompletion)
	if p.Prefills == nil || comp == nil || !comp.OK || comp.Model == "" {
		return out, false
	}
	c, ok := p.Engine.Registry().Get(id)
	if !ok {
		return out, false
	}
	model := comp.Model
	out.Model = model
	if c.Prefill != "" {
		e := p.Prefills.View(c.ID, model, string(c.Prefill))
		out.Prefill, out.PrefillSource, out.Skipped = e.State, e.Source, true
		out.Message = "declared on the connection (assistantPrefill: " + string(c.Prefill) + "): not probed"
		return out, true
	}
	format := c.Provider.FormatOf(model)
	body, ok := prefillBody(c, model, format)
	if !ok || p.Executors == nil || c.AuthType == "oauth" {
		e := p.Prefills.View(c.ID, model, "")
		out.Prefill, out.PrefillSource, out.Skipped = e.State, e.Source, true
		out.Message = "not probed: the probe covers the Chat Completions and Messages wires, not " + string(format)
		if c.AuthType == "oauth" {
			out.Message = "not probed: subscription connections are not sent test requests"
		}
		return out, true
	}
	exec, ok := p.Executors.For(format)
	if !ok {
		return out, false
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
		out.Status = resp.StatusCode
		f = prefillcap.Judge(resp.StatusCode, raw, answerText(format, raw))
	}
	if err := p.Prefills.Probed(c.ID, model, f.State); err != nil {
		f.Message += " (kept until the gateway stops: the database did not take it)" // the book logged why
	}
	e := p.Prefills.View(c.ID, model, "")
	out.Prefill, out.PrefillSource, out.Message = e.State, e.Source, f.Message
	return out, true
}

// prefillBody is the probe of a wire (ok false: the wire has none): the
// user asks for the marker word and the assistant turn already holds it,
// with one output token. Chat bodies carry the continuation flags a
// continuation on c would send.
func prefillBody(c *routing.Conn, model string, format providers.Format) (body []byte, ok bool) {
	msgs := []any{map[string]any{"role": "user", "content": prefillcap.ProbeQuestion},
		map[string]any{"role": "assistant", "content": prefillcap.Marker}}
	switch format {
	case providers.FormatOpenAI:
		b, err := json.Marshal(map[string]any{"model": model, "max_tokens": 1, "messages": msgs})
		if err != nil {
			return nil, false
		}
		b, err = gateway.PrefillFlags(c, model, b)
		return b, err == nil
	case providers.FormatAnthropic:
		b, err := json.Marshal(map[string]any{"model": model, "max_tokens": 1, "messages": msgs})
		return b, err == nil
	}
	return nil, false
}

// answerText is the answer's text: Chat's first choice, Messages' text
// blocks ("" for none, or a body it cannot read).
func answerText(format providers.Format, raw []byte) string {
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
