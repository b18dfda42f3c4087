package connprobe_test

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/connprobe"
	"omniroute/backend/prefillcap"
	"omniroute/backend/providers"
	"omniroute/backend/store"
	"omniroute/tests/fakeupstream"
)

// passed is a check whose completion passed on model.
func passed(model string) connprobe.Check {
	return connprobe.Check{OK: true, Steps: []connprobe.CheckStep{{Step: connprobe.StepReach, OK: true}, {Step: connprobe.StepAuth, OK: true},
		{Step: connprobe.StepModels, OK: true}, {Step: connprobe.StepCompletion, OK: true, Status: 200, Model: model}}}
}

// TestPrefillProbe: per wire, the probe (the marker in a trailing assistant
// message, one output token; Chat with the continuation flags, Messages
// without) and what the answer records; a declaration, a subscription or a
// check whose completion failed sends none.
func TestPrefillProbe(t *testing.T) {
	tests := []struct {
		name, model string
		wire        providers.Format
		fault       fakeupstream.Mode
		edit        func(*store.Connection)
		check       connprobe.Check

		ran, skipped bool
		prefill      prefillcap.State
		source       prefillcap.Source
		status       int
		message      string
		probes       int  // requests sent
		flags        bool // the Chat continuation flag sent
	}{
		{name: "chat, honoured", wire: providers.FormatOpenAI, model: "gpt-4o-mini", fault: fakeupstream.ModeHonourPrefill, check: passed("gpt-4o-mini"),
			ran: true, prefill: prefillcap.Honoured, source: prefillcap.Probe, status: 200, message: "honoured", probes: 1, flags: true},
		{name: "chat, refused", wire: providers.FormatOpenAI, model: "gpt-4o-mini", fault: fakeupstream.ModeRejectPrefill, check: passed("gpt-4o-mini"),
			ran: true, prefill: prefillcap.Refused, source: prefillcap.Probe, status: 400, message: "refused", probes: 1, flags: true},
		{name: "messages, honoured", wire: providers.FormatAnthropic, model: "claude-fake", fault: fakeupstream.ModeHonourPrefill, check: passed("claude-fake"),
			ran: true, prefill: prefillcap.Honoured, source: prefillcap.Probe, status: 200, message: "honoured", probes: 1},
		{name: "declared", wire: providers.FormatOpenAI, model: "gpt-4o-mini", check: passed("gpt-4o-mini"),
			edit: func(r *store.Connection) { r.ProviderSpecificData = `{"assistantPrefill":"trailing"}` },
			ran:  true, skipped: true, prefill: prefillcap.Honoured, source: prefillcap.Declared, message: "declared on the connection (assistantPrefill: trailing): not probed"},
		{name: "a subscription", wire: providers.FormatOpenAI, model: "gpt-4o-mini", check: passed("gpt-4o-mini"),
			edit: func(r *store.Connection) { r.AuthType, r.AccessTokenEnc = "oauth", r.APIKeyEnc },
			ran:  true, skipped: true, prefill: prefillcap.Unknown, message: "not probed: subscription connections are not sent test requests"},
		{name: "a failed completion", wire: providers.FormatOpenAI, model: "gpt-4o-mini",
			check: connprobe.Check{Steps: []connprobe.CheckStep{{Step: connprobe.StepCompletion, Status: 401, Model: "gpt-4o-mini"}}}},
	}
	r := newRig(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.fresh(t)
			const key = "key-p"
			if tt.fault != "" {
				r.up.AddFault(key, fakeupstream.Fault{Mode: tt.fault})
			}
			id := r.conn(tt.wire, key, "", `["`+tt.model+`"]`, tt.edit)
			p, ran := r.p.Prefill(t.Context(), id, tt.check)
			if ran != tt.ran {
				t.Fatalf("ran %v, want %v (%+v)", ran, tt.ran, p)
			}
			if n := r.up.Hits(key); n != tt.probes {
				t.Errorf("%d probes sent, want %d", n, tt.probes)
			}
			if !ran {
				return
			}
			if p.Model != tt.model || p.Skipped != tt.skipped || p.Prefill != tt.prefill || p.PrefillSource != tt.source || p.Status != tt.status || !strings.HasPrefix(p.Message, tt.message) {
				t.Errorf("probe %+v", p)
			}
			if tt.probes == 0 {
				return
			}
			_, body := r.up.LastRequest(key)
			last := gjson.GetBytes(body, "messages.1")
			if last.Get("role").String() != "assistant" || last.Get("content").String() != prefillcap.Marker ||
				gjson.GetBytes(body, "max_tokens").Int() != 1 || gjson.GetBytes(body, "continue_final_message").Exists() != tt.flags {
				t.Errorf("the probe sent %s", body)
			}
		})
	}
}
