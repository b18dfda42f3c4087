package connprobe_test

import (
	"net/http"
	"strings"
	"testing"

	"omniroute/backend/connprobe"
	"omniroute/backend/providers"
	"omniroute/backend/store"
	"omniroute/tests/fakeupstream"
)

// closedURL is a loopback base URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	u, err := fakeupstream.ClosedURL()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// step is what a case expects of one step ("ok", "failed" or "skipped",
// and the upstream's status when not 0).
type step struct {
	is     string
	status int
}

func (s step) matches(got connprobe.CheckStep) bool {
	is := "failed"
	switch {
	case got.Skipped:
		is = "skipped"
	case got.OK:
		is = "ok"
	}
	return is == s.is && got.Status == s.status
}

// TestRunDecides: what each upstream answer makes of the check: its steps,
// whether it passed, the state and warning it leaves, the testStatus and
// error code stored (a terminal key_rejected / endpoint_not_found, lifted by
// a check that passes), what the model list stores, and the completions
// the upstream saw.
func TestRunDecides(t *testing.T) {
	const model = "gpt-4o-mini"
	rejected := func(r *store.Connection) {
		r.TestStatus, r.LastError, r.ErrorCode, r.LastErrorType, r.LastErrorAt = connprobe.KeyRejected, "the provider rejected this key (401)", "KEY_REJECTED", "auth", t0.UnixMilli()
	}
	tests := []struct {
		name     string
		wire     providers.Format
		models   string // listed by hand
		faults   []fakeupstream.Fault
		upModels []string // the upstream's list (nil: the fake's default)
		closed   bool     // the base URL answers nothing
		edit     func(*store.Connection)

		ok, rejected             bool
		state, warning           string
		reach, auth, list, comp  step
		testStatus, errorCode    string
		modelsError, completedOn string
		completions              int
	}{
		{name: "a working key", wire: providers.FormatOpenAI, models: `["` + model + `"]`,
			ok: true, state: connprobe.Serving, reach: step{"ok", 0}, auth: step{"ok", 0}, list: step{"ok", 0}, comp: step{"ok", 200},
			testStatus: "active", completedOn: model, completions: 1},
		{name: "a rejected key", wire: providers.FormatOpenAI, models: `["` + model + `"]`, faults: []fakeupstream.Fault{{Mode: fakeupstream.ModeStatus, Status: 401}},
			rejected: true, state: connprobe.KeyRejected, warning: "the provider rejected this key (401",
			reach: step{"ok", 0}, auth: step{"failed", 401}, list: step{"failed", 401}, comp: step{"failed", 401},
			testStatus: connprobe.KeyRejected, errorCode: "KEY_REJECTED", modelsError: "x", completedOn: model, completions: 1},
		{name: "a forbidden completion after a listed model list", wire: providers.FormatOpenAI,
			faults:   []fakeupstream.Fault{{Mode: fakeupstream.ModeStatus, Status: 403, Models: []string{model}}},
			rejected: true, state: connprobe.KeyRejected, warning: "the provider rejected this key (403",
			reach: step{"ok", 0}, auth: step{"failed", 403}, list: step{"ok", 0}, comp: step{"failed", 403},
			testStatus: connprobe.KeyRejected, errorCode: "KEY_REJECTED", completedOn: model, completions: 1},
		{name: "a model list refused, the completion passing", wire: providers.FormatOpenAI, models: `["` + model + `"]`,
			faults: []fakeupstream.Fault{{Mode: fakeupstream.ModeStatus, Status: 401, Times: 1}},
			ok:     true, state: connprobe.Serving, reach: step{"ok", 0}, auth: step{"ok", 0}, list: step{"failed", 401}, comp: step{"ok", 200},
			testStatus: "active", modelsError: "x", completedOn: model, completions: 1},
		{name: "a URL answering 404 to both", wire: providers.FormatAnthropic, models: `["claude-fake"]`, faults: []fakeupstream.Fault{{Mode: fakeupstream.ModeStatus, Status: 404}},
			state: connprobe.EndpointNotFound, warning: "this URL answers 404: check the base URL (claude-fake at http://127.0.0.1:",
			reach: step{"ok", 0}, auth: step{"ok", 0}, list: step{"failed", 404}, comp: step{"failed", 404},
			testStatus: connprobe.EndpointNotFound, errorCode: "ENDPOINT_NOT_FOUND", modelsError: "x", completedOn: "claude-fake", completions: 1},
		{name: "a model the upstream does not serve", wire: providers.FormatOpenAI, models: `["` + model + `"]`,
			faults: []fakeupstream.Fault{{Mode: fakeupstream.ModeStatus, Status: 404, Models: []string{model}}},
			reach:  step{"ok", 0}, auth: step{"ok", 0}, list: step{"ok", 0}, comp: step{"failed", 404},
			testStatus: "active", completedOn: model, completions: 1},
		{name: "a redirect", wire: providers.FormatOpenAI, models: `["` + model + `"]`,
			faults: []fakeupstream.Fault{{Mode: fakeupstream.ModeStatus, Status: 302, Headers: map[string]string{"Location": "/login"}}},
			reach:  step{"ok", 0}, auth: step{"failed", 302}, list: step{"failed", 302}, comp: step{"failed", 302},
			testStatus: "active", modelsError: "x", completedOn: model, completions: 1},
		{name: "a server error", wire: providers.FormatOpenAI, models: `["` + model + `"]`, faults: []fakeupstream.Fault{{Mode: fakeupstream.ModeStatus, Status: 500}},
			reach: step{"ok", 0}, auth: step{"ok", 0}, list: step{"failed", 500}, comp: step{"failed", 500},
			testStatus: "active", modelsError: "x", completedOn: model, completions: 1},
		{name: "nothing listening", wire: providers.FormatOpenAI, models: `["` + model + `"]`, closed: true,
			state: connprobe.Unreachable, warning: "the upstream could not be reached: ",
			reach: step{"failed", 0}, auth: step{"skipped", 0}, list: step{"failed", 0}, comp: step{"skipped", 0},
			testStatus: "active", modelsError: "x"},
		{name: "no model served yet", wire: providers.FormatOpenAI, upModels: []string{},
			reach: step{"ok", 0}, auth: step{"ok", 0}, list: step{"failed", 0}, comp: step{"skipped", 0},
			testStatus: "active", modelsError: "x"},
		{name: "a chat model before embeddings", wire: providers.FormatOpenAI, upModels: []string{"text-embedding-3-small", "whisper-1", model},
			ok: true, state: connprobe.Serving, reach: step{"ok", 0}, auth: step{"ok", 0}, list: step{"ok", 0}, comp: step{"ok", 200},
			testStatus: "active", completedOn: model, completions: 1},
		{name: "a passing check lifts key_rejected", wire: providers.FormatOpenAI, models: `["` + model + `"]`, edit: rejected,
			ok: true, state: connprobe.Serving, reach: step{"ok", 0}, auth: step{"ok", 0}, list: step{"ok", 0}, comp: step{"ok", 200},
			testStatus: "active", completedOn: model, completions: 1},
	}
	r := newRig(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.fresh(t)
			const key = "key-1"
			if tt.upModels != nil {
				r.up.SetModels(tt.upModels)
			}
			for _, f := range tt.faults {
				r.up.AddFault(key, f)
			}
			base, models := "", tt.models
			if tt.closed {
				base = closedURL(t)
			}
			if models == "" {
				models = "[]"
			}
			id := r.conn(tt.wire, key, base, models, tt.edit)
			ch, _ := r.run(id)
			st := steps(ch)
			if ch.OK != tt.ok || ch.Rejected != tt.rejected || ch.State != tt.state || !strings.HasPrefix(ch.Warning, tt.warning) || (tt.warning == "") != (ch.Warning == "") {
				t.Errorf("ok %v rejected %v state %q warning %q; want %v %v %q %q", ch.OK, ch.Rejected, ch.State, ch.Warning, tt.ok, tt.rejected, tt.state, tt.warning)
			}
			for name, want := range map[string]step{"reach": tt.reach, "auth": tt.auth, "models": tt.list, "completion": tt.comp} {
				if !want.matches(st[name]) {
					t.Errorf("step %s = %+v, want %+v", name, st[name], want)
				}
			}
			if st["completion"].Model != tt.completedOn {
				t.Errorf("completion on %q, want %q", st["completion"].Model, tt.completedOn)
			}
			row := r.row(id)
			if row.TestStatus != tt.testStatus || row.ErrorCode != tt.errorCode || (tt.modelsError == "") != (row.ModelsError == "") {
				t.Errorf("stored testStatus %q errorCode %q modelsError %q; want %q %q (error: %v)", row.TestStatus, row.ErrorCode, row.ModelsError, tt.testStatus, tt.errorCode, tt.modelsError != "")
			}
			if tt.errorCode != "" && row.LastError != ch.Warning {
				t.Errorf("stored lastError %q, want the warning %q", row.LastError, ch.Warning)
			}
			if n := r.up.ModelHits(key, tt.completedOn); tt.completedOn != "" && n != tt.completions {
				t.Errorf("%d completions on %s, want %d", n, tt.completedOn, tt.completions)
			}
			if s, failed := ch.Failed(); failed == ch.OK || (failed && s.OK) {
				t.Errorf("Failed() = %+v, %v for a check ok=%v", s, failed, ch.OK)
			}
		})
	}
}

// TestRunKeepsAHandListUnstored: a save's check of a connection whose
// models are listed by hand asks GET /models without storing its answer.
func TestRunKeepsAHandListUnstored(t *testing.T) {
	r := newRig(t)
	id := r.conn(providers.FormatOpenAI, "key-1", "", `["gpt-4o-mini"]`, nil)
	ch, res, err := r.p.Run(t.Context(), id, false)
	if err != nil || !ch.OK || len(res.Models) == 0 {
		t.Fatalf("check %+v, %d listed, %v", ch, len(res.Models), err)
	}
	if row := r.row(id); row.DiscoveredModels != "[]" || row.ModelsSource != "" {
		t.Fatalf("stored %s from %q, want nothing", row.DiscoveredModels, row.ModelsSource)
	}
	if hits := r.up.Hits("key-1"); hits != 2 {
		t.Fatalf("%d upstream requests, want the list and one completion", hits)
	}
}

// TestRunRedactsTheKey: the upstream's message quoted in a step never
// carries the connection's key.
func TestRunRedactsTheKey(t *testing.T) {
	r := newRig(t)
	const key = "sk-secret-key-0123456789"
	r.up.AddFault(key, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`})
	id := r.conn(providers.FormatOpenAI, key, "", `["gpt-4o-mini"]`, nil)
	ch, _ := r.run(id)
	for _, s := range ch.Steps {
		if strings.Contains(s.Message, key) {
			t.Errorf("step %s shows the key: %q", s.Step, s.Message)
		}
	}
	if strings.Contains(ch.Warning, key) || !strings.Contains(ch.Warning, "[redacted]") {
		t.Errorf("warning %q", ch.Warning)
	}
	if http.StatusUnauthorized != steps(ch)["auth"].Status {
		t.Errorf("auth %+v", steps(ch)["auth"])
	}
}
