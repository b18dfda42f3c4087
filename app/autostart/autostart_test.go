package autostart

import (
	"encoding/xml"
	"os"
	"strings"
	"testing"
)

// mapRunKey stands in for the Windows Run key.
type mapRunKey map[string]string

func (m mapRunKey) Get(name string) (string, bool) { v, ok := m[name]; return v, ok }
func (m mapRunKey) Set(name, value string) error   { m[name] = value; return nil }
func (m mapRunKey) Delete(name string) error       { delete(m, name); return nil }

// TestEnableDisable: on each system the entry appears where that system reads
// it, starts the app hidden, and goes away again (twice is fine).
func TestEnableDisable(t *testing.T) {
	exe := "/opt/OmniRoute & Co/omniroute"
	for _, tt := range []struct {
		os   string
		file string // where the entry lands, under the temp home
		want string // what it holds
	}{
		{"", ".config/autostart/omniroute.desktop", `Exec="/opt/OmniRoute & Co/omniroute" --hidden`},
		{"darwin", "Library/LaunchAgents/io.omniroute.desktop.plist", "<string>/opt/OmniRoute &amp; Co/omniroute</string>\n\t\t<string>--hidden</string>"},
		{"windows", "", `"/opt/OmniRoute & Co/omniroute" --hidden`},
	} {
		t.Run("os="+tt.os, func(t *testing.T) {
			home := t.TempDir()
			reg := mapRunKey{}
			e := Entry{ConfigDir: home + "/.config", Home: home, OS: tt.os, Registry: reg}
			if e.Enabled() {
				t.Fatal("enabled before Enable")
			}
			if err := e.Enable(exe); err != nil {
				t.Fatal(err)
			}
			if !e.Enabled() {
				t.Fatal("not enabled after Enable")
			}
			got := reg[runValue]
			if tt.file != "" {
				b, err := os.ReadFile(home + "/" + tt.file)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
				if tt.os == "darwin" {
					if err := xml.Unmarshal(b, new(struct{})); err != nil {
						t.Fatalf("the LaunchAgent is not XML: %v", err)
					}
				}
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("entry %s, want %s", got, tt.want)
			}
			if err := e.Disable(); err != nil || e.Enabled() {
				t.Fatalf("disable: %v", err)
			}
			if err := e.Disable(); err != nil {
				t.Fatalf("second disable: %v", err)
			}
			for _, bad := range []string{"/bad\npath", `/bad"path`} {
				if err := e.Enable(bad); err == nil {
					t.Fatalf("%q accepted", bad)
				}
			}
		})
	}
}
