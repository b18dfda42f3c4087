package app

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestPassphrasePrompt: the environment wins; otherwise the prompt reads it
// (twice for a new backup, and two different answers are refused); no input
// at all is a clear error.
func TestPassphrasePrompt(t *testing.T) {
	for _, tc := range []struct {
		name, env, typed string
		confirm          bool
		want, err        string
	}{
		{"environment", "from env", "typed\n", true, "from env", ""},
		{"typed once for a restore", "", "restore me\n", false, "restore me", ""},
		{"typed twice for a backup", "", "twice pass\ntwice pass\n", true, "twice pass", ""},
		{"CRLF", "", "windows pass\r\nwindows pass\r\n", true, "windows pass", ""},
		{"two different answers", "", "first one\nsecond one\n", true, "", "differ"},
		{"nothing typed", "", "", false, "", "OMNIROUTE_BACKUP_PASSPHRASE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go func() {
				_, _ = io.WriteString(w, tc.typed)
				w.Close()
			}()
			term := Terminal{In: r, Getenv: func(k string) string {
				if k == PassphraseEnv {
					return tc.env
				}
				return ""
			}}
			got, err := term.passphrase(io.Discard, tc.confirm)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
