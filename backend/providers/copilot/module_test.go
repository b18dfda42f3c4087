package copilot_test

import (
	"context"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/copilot"
	"omniroute/backend/providers/openai"
	"omniroute/backend/providers/providerstest"
	"omniroute/backend/providers/registry"
)

// TestCopilotHeaders: the OpenAI executor serves the module's row (no
// executor of its own) with the editor headers Copilot's chat API requires,
// and says so when a request carries an image.
func TestCopilotHeaders(t *testing.T) {
	p, _ := registry.Catalog(nil).Lookup("github-copilot")
	cases := []struct {
		name, body string
		vision     bool
	}{
		{"text", `{"model":"x","messages":[{"role":"user","content":"hi"}]}`, false},
		{"image", `{"model":"x","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`, true},
	}
	for _, c := range cases {
		d := &providerstest.Capture{}
		t0 := providers.Target{Provider: p, BaseURL: "https://api.individual.githubcopilot.com", Secret: "cpt-1", AuthType: "oauth", Model: "gpt-4o"}
		if _, err := openai.New(d, "OmniRoute/test").Do(context.Background(), &t0, providers.Call{Body: []byte(c.body)}); err != nil {
			t.Fatal(err)
		}
		h := d.Req.Header
		if d.Req.URL.String() != "https://api.individual.githubcopilot.com/chat/completions" || h.Get("Authorization") != "Bearer cpt-1" ||
			h.Get("Editor-Version") != copilot.EditorVersion || h.Get("Editor-Plugin-Version") != copilot.PluginVersion ||
			h.Get("Copilot-Integration-Id") != "vscode-chat" || h.Get("User-Agent") != copilot.UserAgent {
			t.Fatalf("%s: %s %v", c.name, d.Req.URL, h)
		}
		if got := h.Get("Copilot-Vision-Request") == "true"; got != c.vision {
			t.Errorf("%s: Copilot-Vision-Request %q", c.name, h.Get("Copilot-Vision-Request"))
		}
		if gjson.GetBytes(d.Body, "model").String() != "gpt-4o" {
			t.Errorf("%s: body model %s", c.name, d.Body)
		}
	}
}
