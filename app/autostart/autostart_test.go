package autostart

import (
	"os"
	"strings"
	"testing"
)

func TestEnableDisable(t *testing.T) {
	e := Entry{ConfigDir: t.TempDir()}
	if e.Enabled() {
		t.Fatal("enabled before Enable")
	}
	if err := e.Enable("/opt/OmniRoute/omniroute"); err != nil {
		t.Fatal(err)
	}
	if !e.Enabled() {
		t.Fatal("not enabled after Enable")
	}
	b, _ := os.ReadFile(e.path())
	if !strings.Contains(string(b), `Exec="/opt/OmniRoute/omniroute" --hidden`) {
		t.Fatalf("entry %s", b)
	}
	if err := e.Disable(); err != nil || e.Enabled() {
		t.Fatalf("disable: %v", err)
	}
	if err := e.Disable(); err != nil {
		t.Fatalf("second disable: %v", err)
	}
	if err := e.Enable("/bad\npath"); err == nil {
		t.Fatal("newline accepted")
	}
}
