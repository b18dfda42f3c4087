package anthropic_test

import (
	"context"
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/tests/fakeupstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOAuthBetaMergedWithTheRequestsBetas: a subscription token sends the
// OAuth beta added to the betas the call already carries, never in their place.
func TestOAuthBetaMergedWithTheRequestsBetas(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start()
	defer up.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	p, _ := providers.NewCatalog().Lookup("claude")
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)
	cases := []struct {
		name, auth, secret, client, want string
	}{
		{"oauth alone", "oauth", "tok-a", "", "oauth-2025-04-20"},
		{"oauth with client betas", "oauth", "tok-b", "interleaved-thinking-2025-05-14, context-1m-2025-08-07", "interleaved-thinking-2025-05-14,context-1m-2025-08-07,oauth-2025-04-20"},
		{"oauth beta not doubled", "oauth", "tok-c", "oauth-2025-04-20,x", "oauth-2025-04-20,x"},
		{"api key keeps client betas only", "apikey", "tok-d", "x", "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := providers.Call{Body: body}
			if c.client != "" {
				call.Header = http.Header{"Anthropic-Beta": {c.client}}
			}
			resp, err := anthropic.New(client, "test").Do(context.Background(),
				providers.Target{Provider: p, BaseURL: base + "/v1", Secret: c.secret, AuthType: c.auth, Model: "claude-sonnet-4-5"}, call)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h, _ := up.LastRequest(c.secret)
			if got := h.Get("anthropic-beta"); got != c.want {
				t.Fatalf("anthropic-beta %q, want %q", got, c.want)
			}
			if c.auth == "oauth" && (h.Get("Authorization") != "Bearer "+c.secret || h.Get("X-Api-Key") != "") {
				t.Fatalf("auth headers %v", h)
			}
		})
	}
}
