package anthropic_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/providers/registry"
	"omniroute/tests/fakeupstream"
)

// TestSubscriptionWire: a Claude subscription token goes as a bearer with the
// OAuth beta, an API key as x-api-key; the call's extra headers (the usage
// wall's anthropic-usage-limit) reach the upstream.
func TestSubscriptionWire(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start()
	defer up.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	p, _ := registry.Catalog(nil).Lookup("claude")
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)
	for _, auth := range []string{"oauth", "apikey"} {
		secret := "tok-" + auth
		call := providers.Call{Body: body, Header: http.Header{"Anthropic-Usage-Limit": {"slow"}}}
		resp, err := anthropic.New(client, "test").Do(context.Background(),
			&providers.Target{Provider: p, BaseURL: base + "/v1", Secret: secret, AuthType: auth, Model: "claude-sonnet-4-5"}, call)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h, _ := up.LastRequest(secret)
		if h.Get("anthropic-usage-limit") != "slow" {
			t.Fatalf("%s: the call's header is missing: %v", auth, h)
		}
		oauth := h.Get("Authorization") == "Bearer "+secret && strings.Contains(h.Get("anthropic-beta"), "oauth-2025-04-20") && h.Get("X-Api-Key") == ""
		if (auth == "oauth") != oauth || auth == "apikey" && h.Get("X-Api-Key") != secret {
			t.Fatalf("%s: auth headers %v", auth, h)
		}
	}
}
