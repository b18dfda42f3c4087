package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/clock"
	"omniroute/backend/providers"
)

// acmeLogin is a made-up provider module with a device sign-in whose
// verification page is page: the API drives any module's flow.
func acmeLogin(page string) providers.Module {
	return providers.Module{ID: "acme",
		Rows: []providers.Provider{{ID: "acme", Name: "Acme Cloud", Category: providers.CategoryOAuth, Format: providers.FormatOpenAI,
			Aliases: []string{"ac"}, OAuth: &providers.OAuth{ImportSource: "acme", DeviceCodeURL: "https://acme.test/device"}}},
		Login: &providers.LoginFlow{Command: "acme", Site: "Acme", Hint: "Uses your Acme seat.",
			Start: func(_ context.Context, x providers.LoginCall) (providers.Device, error) {
				return providers.Device{DeviceCode: "dc", UserCode: "ABCD-1234", VerificationURI: page, ExpiresAt: x.Now.Add(time.Minute), Interval: time.Second}, nil
			}},
	}
}

// TestLoginRoutesAskTheModule: GET /api/providers/login lists a module's
// device sign-in as the dashboard draws it; POST starts it by id or alias;
// a verification page that is not a web URL is refused whatever the
// module let through (it becomes a link in the dashboard).
func TestLoginRoutesAskTheModule(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	start := func(page, provider string) (int, map[string]any) {
		a := &API{Deps: Deps{Catalog: providers.NewCatalog().WithModules(acmeLogin(page)), Clock: clock.NewFake(t0), HTTPClient: http.DefaultClient}}
		w := httptest.NewRecorder()
		r := mux.SetURLVars(httptest.NewRequest(http.MethodPost, "/api/providers/login/"+provider, nil), map[string]string{"provider": provider})
		a.startLogin(w, r)
		var m map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &m)
		return w.Code, m
	}
	if code, m := start("https://acme.test/activate", "ac"); code != http.StatusCreated || m["userCode"] != "ABCD-1234" || m["verificationUri"] != "https://acme.test/activate" || m["flowId"] == "" {
		t.Fatalf("start by alias: %d %v", code, m)
	}
	if code, m := start("javascript:alert(1)", "acme"); code != http.StatusBadGateway || m["error"].(map[string]any)["code"] != "DEVICE_CODE_FAILED" {
		t.Fatalf("a script as the verification page: %d %v", code, m)
	}
	if code, m := start("https://acme.test/activate", "openai"); code != http.StatusNotFound || m["error"].(map[string]any)["code"] != "UNKNOWN_PROVIDER" {
		t.Fatalf("a provider without a sign-in: %d %v", code, m)
	}

	a := &API{Deps: Deps{Catalog: providers.NewCatalog().WithModules(acmeLogin("https://acme.test/activate"))}}
	w := httptest.NewRecorder()
	a.listLogins(w, httptest.NewRequest(http.MethodGet, "/api/providers/login", nil))
	var got struct {
		Providers []map[string]string `json:"providers"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || len(got.Providers) != 1 {
		t.Fatalf("list: %s %v", w.Body, err)
	}
	want := map[string]string{"id": "acme", "name": "Acme Cloud", "kind": "device", "command": "acme", "site": "Acme", "hint": "Uses your Acme seat."}
	for k, v := range want {
		if got.Providers[0][k] != v {
			t.Errorf("list %s = %q, want %q", k, got.Providers[0][k], v)
		}
	}
}
