package anthropic

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"omniroute/backend/providers"
)

func TestMergeBetas(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"none", nil, ""},
		{"one", []string{"a-1"}, "a-1"},
		{"lists split, blanks and repeats dropped, order kept", []string{"a-1, b-2,,", " b-2 ,c-3", "a-1"}, "a-1,b-2,c-3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MergeBetas(tc.in); got != tc.want {
				t.Fatalf("MergeBetas(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestDoProtocolHeaders: the executor sends the client's anthropic-version and
// anthropic-beta when the gateway hands them over, merging the OAuth beta
// without repeats, and its own defaults otherwise.
func TestDoProtocolHeaders(t *testing.T) {
	const cc = "claude-code-20250219,context-management-2025-06-27,mid-conversation-system-2026-04-07"
	tests := []struct {
		name        string
		auth        string
		in          providers.AnthropicHeaders
		wantVersion string
		wantBeta    string
		wantKey     string
		wantBearer  string
	}{
		{"api key, no client headers", "apikey", providers.AnthropicHeaders{}, Version, "", "sk", ""},
		{"api key, client betas and version", "apikey", providers.AnthropicHeaders{Version: "2024-01-01", Betas: []string{cc}}, "2024-01-01", cc, "sk", ""},
		{"oauth, no client headers", "oauth", providers.AnthropicHeaders{}, Version, OAuthBeta, "", "Bearer sk"},
		{"oauth merges the client's betas", "oauth", providers.AnthropicHeaders{Betas: []string{cc}}, Version, OAuthBeta + "," + cc, "", "Bearer sk"},
		{"oauth beta sent by the client too is not repeated", "oauth", providers.AnthropicHeaders{Betas: []string{cc + "," + OAuthBeta, "x-1"}}, Version, OAuthBeta + "," + cc + ",x-1", "", "Bearer sk"},
		{"the provider's own beta is kept", "apikey-extra", providers.AnthropicHeaders{Betas: []string{cc}}, Version, "p-1," + cc, "sk", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan http.Header, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Clone()
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			e := New(srv.Client(), "omniroute-test")
			target := providers.Target{BaseURL: srv.URL, Secret: "sk", AuthType: tc.auth, Model: "m"}
			if tc.auth == "apikey-extra" {
				target.AuthType = "apikey"
				target.Provider.ExtraHeaders = map[string]string{"anthropic-beta": "p-1"}
			}
			resp, err := e.Do(context.Background(), new(target),
				providers.Call{Body: []byte(`{"model":"m"}`), Anthropic: tc.in})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h := <-got
			if v := h.Get("anthropic-version"); v != tc.wantVersion {
				t.Errorf("anthropic-version = %q, want %q", v, tc.wantVersion)
			}
			if v := h.Values("anthropic-beta"); (tc.wantBeta == "" && len(v) != 0) || (tc.wantBeta != "" && (len(v) != 1 || v[0] != tc.wantBeta)) {
				t.Errorf("anthropic-beta = %q, want %q", v, tc.wantBeta)
			}
			if v := h.Get("x-api-key"); v != tc.wantKey {
				t.Errorf("x-api-key = %q, want %q", v, tc.wantKey)
			}
			if v := h.Get("Authorization"); v != tc.wantBearer {
				t.Errorf("Authorization = %q, want %q", v, tc.wantBearer)
			}
		})
	}
}
