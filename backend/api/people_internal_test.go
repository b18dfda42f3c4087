package api

import (
	"strings"
	"testing"
)

// TestAuditDetailRedactsSecrets: every secret-looking field, at any depth and
// in any spelling, is replaced; the rest is kept; a huge body is cut.
func TestAuditDetailRedactsSecrets(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"top level", `{"name":"c1","apiKey":"sk-1"}`, `{"body":{"apiKey":"[redacted]","name":"c1"},"vars":{"id":"x"}}`},
		{"nested and in arrays", `{"providerSpecificData":{"secretAccessKey":"a","region":"eu"},"list":[{"accessToken":"t"}]}`,
			`{"body":{"list":[{"accessToken":"[redacted]"}],"providerSpecificData":{"region":"eu","secretAccessKey":"[redacted]"}},"vars":{"id":"x"}}`},
		{"passwords, cookies, authorization", `{"password":"p","Cookie":"c","AUTHORIZATION":"b","refresh_token":"r","key":"k","value":"v"}`,
			`{"body":{"AUTHORIZATION":"[redacted]","Cookie":"[redacted]","key":"[redacted]","password":"[redacted]","refresh_token":"[redacted]","value":"[redacted]"},"vars":{"id":"x"}}`},
		{"passphrases and every pass/phrase/secret/token/key name, any case, any depth (issue 39)",
			`{"passphrase":"p1","a":{"b":[{"backupPassPhrase":"p2","PASSCODE":"p3","recoveryPhrase":"p4","clientSecret":"p5","idToken":"p6","signingKEY":"p7","keyId":"p8","name":"n"}]}}`,
			`{"body":{"a":{"b":[{"PASSCODE":"[redacted]","backupPassPhrase":"[redacted]","clientSecret":"[redacted]","idToken":"[redacted]","keyId":"[redacted]","name":"n","recoveryPhrase":"[redacted]","signingKEY":"[redacted]"}]},"passphrase":"[redacted]"},"vars":{"id":"x"}}`},
		{"not JSON", `not json`, `{"vars":{"id":"x"}}`},
		{"huge", `{"models":["` + strings.Repeat("m", 5000) + `"]}`, `{"fields":{"models[]":["` + strings.Repeat("m", 200) + `…"]},"truncated":true,"vars":{"id":"x"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := auditDetail(map[string]string{"id": "x"}, []byte(c.body)); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	if got := auditDetail(nil, nil); got != "" {
		t.Fatalf("nothing to say: %q", got)
	}
}

// TestOpaqueWritesAuditNothingOfTheirBody (issue 39): a backup's and a
// restore's entry say what happened, never anything of the body.
func TestOpaqueWritesAuditNothingOfTheirBody(t *testing.T) {
	for _, c := range []struct {
		kind   string
		ev     auditEvent
		status int
		want   string
	}{
		{"backup", auditEvent{event: "backup made"}, 200, `{"event":"backup made"}`},
		{"backup", auditEvent{code: "BACKUP_PASSPHRASE_TOO_SHORT"}, 400, `{"code":"BACKUP_PASSPHRASE_TOO_SHORT","event":"backup refused"}`},
		{"restore", auditEvent{event: "restore applied"}, 200, `{"event":"restore applied"}`},
		{"restore", auditEvent{code: "BACKUP_TAMPERED"}, 400, `{"code":"BACKUP_TAMPERED","event":"restore refused"}`},
	} {
		if got := opaqueDetail(c.kind, c.ev, c.status); got != c.want {
			t.Errorf("%s %+v: %s, want %s", c.kind, c.ev, got, c.want)
		}
	}
}
