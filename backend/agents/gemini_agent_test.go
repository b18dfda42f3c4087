package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeminiSetupWritesBothFiles: setup gemini-cli writes ~/.gemini/.env and
// merges the auth type and model into ~/.gemini/settings.json; a settings.json
// it cannot edit leaves both files unchanged; undo restores both.
func TestGeminiSetupWritesBothFiles(t *testing.T) {
	m, home := newTestManager(t, func(o *Options) { o.Model = "glm-4.6" })
	env, settings := filepath.Join(home, ".gemini", ".env"), filepath.Join(home, ".gemini", "settings.json")
	orig := "{\n  \"ui\": {\"theme\": \"Dracula\"},\n  \"security\": {\"auth\": {\"selectedType\": \"oauth-personal\"}}\n}\n"
	writeFile(t, settings, []byte(orig), 0o644)

	res, err := m.Setup("gemini-cli")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, env)); got != "GOOGLE_GEMINI_BASE_URL="+testBase+"\nGEMINI_API_KEY="+testKey+"\nGEMINI_MODEL=glm-4.6\n" {
		t.Errorf(".env:\n%s", got)
	}
	data := readFile(t, settings)
	if jsonPath(t, data, "security", "auth", "selectedType") != "gemini-api-key" || jsonPath(t, data, "model", "name") != "glm-4.6" ||
		jsonPath(t, data, "ui", "theme") != "Dracula" {
		t.Errorf("settings.json:\n%s", data)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), settings) {
		t.Errorf("notes %q do not name %s", res.Notes, settings)
	}
	for _, a := range m.List() {
		if a.ID == "gemini-cli" && (!a.Configured || a.ConfigPath != env) {
			t.Errorf("listed as %+v", a)
		}
	}

	if _, err := m.Undo("gemini-cli"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(env); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".env created by setup should be removed: %v", err)
	}
	if got := string(readFile(t, settings)); got != orig {
		t.Errorf("settings.json not restored:\n%s", got)
	}

	// settings.json with comments cannot be edited safely: nothing is written.
	commented := "{\n  // mine\n  \"ui\": {}\n}\n"
	writeFile(t, settings, []byte(commented), 0o644)
	if _, err := m.Setup("gemini-cli"); !errors.Is(err, ErrUnsupportedConfig) {
		t.Fatalf("err = %v, want ErrUnsupportedConfig", err)
	}
	if _, err := os.Stat(env); !errors.Is(err, os.ErrNotExist) {
		t.Error(".env written although settings.json was refused")
	}
	if got := string(readFile(t, settings)); got != commented {
		t.Errorf("settings.json changed:\n%s", got)
	}
}
