package redact

import (
	"strings"
	"testing"
)

func TestURLCredentials(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://user:PW-secret@api.example.com/v1":                true,
		"https://PWonly@api.example.com/v1":                        true,
		"https://api.example.com/v1?api-key=PW-secret":             true,
		"https://api.example.com/v1?key=PW-secret":                 true,
		"https://api.example.com/v1?token=PW-secret":               true,
		"https://api.example.com/v1?Access_Token=PW-secret":        true,
		"https://x.blob.core.windows.net/c?sv=2020&sig=PW-secret":  true,
		"https://api.example.com/sk-proj-abcdefghijklmnop1234/v1":  true,
		"https://api.example.com/v1":                               false,
		"https://x.openai.azure.com/openai?api-version=2024-10-21": false,
		"http://127.0.0.1:11434":                                   false,
	} {
		if got := URLCredentials(raw); got != want {
			t.Errorf("URLCredentials(%q) = %v, want %v", raw, got, want)
		}
		masked := URL(raw)
		if want && strings.Contains(masked, "PW") || want && strings.Contains(masked, "abcdefghij") {
			t.Errorf("URL(%q) = %q: the credential shows", raw, masked)
		}
		if !want && masked != raw {
			t.Errorf("URL(%q) = %q: a plain URL changed", raw, masked)
		}
		if want && !strings.Contains(masked, Mark) {
			t.Errorf("URL(%q) = %q: nothing marked", raw, masked)
		}
	}
	if got := URL("https://u:p@h/v1?api-key=zz&x=1"); got != "https://[redacted]@h/v1?api-key=[redacted]&x=1" {
		t.Errorf("masked %q", got)
	}
}
