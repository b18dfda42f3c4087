package connprobe

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/routing"
)

// completionBody is the one-token request of model in a wire format the
// check can send (ok false: the wire has none, it is not tried).
func completionBody(format providers.Format, model string) (body []byte, ok bool) {
	switch format {
	case providers.FormatOpenAI, providers.FormatAnthropic:
		return chatPing(model), true
	case providers.FormatResponses:
		// A Responses connection with a key (the Codex subscription is OAuth,
		// not probed); some Responses upstreams take no max_output_tokens under 16.
		b, _ := json.Marshal(map[string]any{"model": model, "max_output_tokens": 16, "input": "ping"})
		return b, true
	case providers.FormatGemini:
		return []byte(`{"contents":[{"role":"user","parts":[{"text":"ping"}]}],"generationConfig":{"maxOutputTokens":1}}`), true
	}
	return nil, false
}

// chatPing is a Chat Completions or Messages request of one output token.
func chatPing(model string) []byte {
	b, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 1,
		"messages": []any{map[string]any{"role": "user", "content": "ping"}}})
	return b
}

// probeCompletion sends one minimal request (one output token) for model in
// the connection's wire format and reports what the upstream answered.
func (p *Prober) probeCompletion(ctx context.Context, c *routing.Conn, model string) CheckStep {
	step := CheckStep{Step: StepCompletion, Model: model}
	t := c.Target(model)
	if c.AuthType == "oauth" {
		// A subscription token is checked by its refresh and its usage wall;
		// a bare completion is not what its client sends (and would spend
		// it), except where the provider's module says the CLI's own call is one.
		if m := c.Provider.Module; m == nil || !m.CheckedByCompletion || p.FreshToken == nil {
			step.Skipped, step.Message = true, "not tried: subscription connections are checked by their token"
			return step
		}
		tok, err := p.FreshToken(ctx, c)
		if err != nil {
			step.Status, step.Message = http.StatusUnauthorized, capString("the access token could not be refreshed: "+err.Error())
			return step
		}
		t.Secret = tok
	}
	format := c.Provider.FormatOf(model)
	body, ok := completionBody(format, model)
	if !ok {
		step.Skipped, step.Message = true, "not tried: no minimal request for the "+string(format)+" wire format"
		return step
	}
	if p.Executors == nil {
		step.Skipped, step.Message = true, "not tried: no executor"
		return step
	}
	exec, ok := p.Executors.For(format)
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

// maxMessage caps a stored or shown message (the request log's free-text bound).
const maxMessage = 256

// capString bounds a stored string for display, on a rune boundary.
func capString(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// readQuota reads a login's quota buckets (its dialect's QuotaReader) into
// its usage windows for the Subscriptions card: the most used daily model
// quota. Nothing changes when they cannot be read.
func (p *Prober) readQuota(ctx context.Context, c *routing.Conn) {
	reader := p.Quotas[c.Provider.Dialect]
	if c.Provider.Dialect == "" || reader == nil || p.FreshToken == nil {
		return
	}
	tok, err := p.FreshToken(ctx, c)
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
	q.Daily, q.DailyModel, q.ObservedAt = routing.Window{Utilization: -1}, "", p.Clock.Now()
	for _, b := range buckets {
		if used := 1 - b.Remaining; used > q.Daily.Utilization {
			q.Daily, q.DailyModel = routing.Window{Utilization: used, ResetsAt: b.ResetsAt}, b.Model
		}
	}
	c.SetQuotaWindows(q)
}
