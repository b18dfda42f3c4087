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
		jsonPath(t, data, "ui", "theme") != "Dracula" || jsonPath(t, data, "security", "folderTrust", "enabled") != false {
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

// TestGeminiSetupFolderTrust: the CLI reads ~/.gemini/.env only in trusted
// folders, so setup turns folder trust off when the user has not chosen;
// a choice of their own (true or false) is kept, and the notes say which.
func TestGeminiSetupFolderTrust(t *testing.T) {
	for _, c := range []struct {
		name, settings string
		want           bool
		note           string
	}{
		{"no settings file", "", false, "Folder trust is off"},
		{"trust not set", `{"security": {"auth": {"selectedType": "oauth-personal"}}}`, false, "Folder trust is off"},
		{"user turned it on", `{"security": {"folderTrust": {"enabled": true}}}`, true, "Folder trust is on"},
		{"user turned it off", `{"security": {"folderTrust": {"enabled": false}}}`, false, "Folder trust is off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, home := newTestManager(t, nil)
			settings := filepath.Join(home, ".gemini", "settings.json")
			if c.settings != "" {
				writeFile(t, settings, []byte(c.settings), 0o644)
			}
			res, err := m.Setup("gemini-cli")
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonPath(t, readFile(t, settings), "security", "folderTrust", "enabled"); got != c.want {
				t.Errorf("folderTrust.enabled = %v, want %v", got, c.want)
			}
			if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, c.note) {
				t.Errorf("notes %q lack %q", notes, c.note)
			}
		})
	}
}
