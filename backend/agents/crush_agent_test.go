package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCrushSetupMerges: setup writes the omniroute provider (openai-compat,
// the gateway's /v1, the key, the chosen model first with its known context
// window) and selects it for both model sizes, keeping the user's other
// providers, their own models of the provider and options; undo restores
// the file byte for byte.
func TestCrushSetupMerges(t *testing.T) {
	m, home := newTestManager(t, func(o *Options) { o.Model = "glm-4.6" })
	m = m.WithContextWindow(200000)
	path := filepath.Join(home, ".config", "crush", "crush.json")
	before := []byte(`{"options": {"debug": true}, "providers": {
  "deepseek": {"type": "openai-compat", "base_url": "https://api.deepseek.com/v1", "models": [{"id": "deepseek-chat"}]},
  "omniroute": {"base_url": "http://old/v1", "models": [{"id": "glm-4.6", "name": "stale"}, {"id": "mine"}]}}}`)
	writeFile(t, path, before, 0o600)
	if _, err := m.Setup("crush"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type model struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		ContextWindow int    `json:"context_window"`
	}
	var got struct {
		Options   map[string]any `json:"options"`
		Providers map[string]struct {
			Type    string  `json:"type"`
			BaseURL string  `json:"base_url"`
			APIKey  string  `json:"api_key"`
			Models  []model `json:"models"`
		} `json:"providers"`
		Models map[string]struct{ Provider, Model string } `json:"models"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Providers["omniroute"]
	if got.Options["debug"] != true || got.Providers["deepseek"].BaseURL != "https://api.deepseek.com/v1" ||
		p.Type != "openai-compat" || p.BaseURL != testBase+"/v1" || p.APIKey != testKey ||
		len(p.Models) != 2 || p.Models[0] != (model{"glm-4.6", "glm-4.6 (OmniRoute)", 200000}) || p.Models[1].ID != "mine" ||
		got.Models["large"].Provider != "omniroute" || got.Models["large"].Model != "glm-4.6" || got.Models["small"].Model != "glm-4.6" {
		t.Errorf("crush.json:\n%s", data)
	}
	if a := m.List(); !slices.ContainsFunc(a, func(a Agent) bool { return a.ID == "crush" && a.Configured }) {
		t.Errorf("crush not listed as configured: %+v", a)
	}
	if _, err := m.Undo("crush"); err != nil {
		t.Fatal(err)
	}
	if after := readFile(t, path); string(after) != string(before) {
		t.Errorf("undo left:\n%s", after)
	}

	// A models member that is not a list is refused, not overwritten.
	writeFile(t, path, []byte(`{"providers": {"omniroute": {"models": {"a": 1}}}}`), 0o600)
	if _, err := m.Setup("crush"); err == nil {
		t.Errorf("setup over a models object succeeded")
	}
}
