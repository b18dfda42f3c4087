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
