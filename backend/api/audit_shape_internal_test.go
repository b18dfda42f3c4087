package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestAuditShapeKeepsEveryChangedField: a body too long for an entry is told
// by its fields, so padding can never hide a change: a scope gained next
// to a padded field, a value among many duplicates, a nested limit, and
// with thousands of distinct values every field's name survives; secrets
// stay redacted; the entry always fits.
func TestAuditShapeKeepsEveryChangedField(t *testing.T) {
	many := make([]string, 3000)
	for i := range many {
		many[i] = fmt.Sprintf("model-%04d-%s", i, strings.Repeat("x", 40))
	}
	manyJSON, _ := json.Marshal(many)
	dup := strings.Repeat(`"chat",`, 2000)
	cases := []struct {
		name, body string
		want       []string
	}{
		{"a scope next to a padded name", `{"name":"` + strings.Repeat("n", 9000) + `","scopes":["chat","lease:exclusive"]}`,
			[]string{`"scopes[]":["chat","lease:exclusive"]`, `"name":["nnnn`}},
		{"a scope among duplicates", `{"scopes":[` + dup + `"lease:exclusive"]}`, []string{`"scopes[]":["chat","lease:exclusive"]`}},
		{"nested limits beside a long list", `{"limits":{"rpm":5,"tpm":100},"allowedModels":` + string(manyJSON) + `}`,
			[]string{`"limits.rpm":["5"]`, `"limits.tpm":["100"]`, `"allowedModels[]":["model-0000`}},
		{"a secret in a long body", `{"apiKey":"sk-SECRET-1","notes":"` + strings.Repeat("z", 9000) + `"}`,
			[]string{`"apiKey":["[redacted]"]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := auditDetail(map[string]string{"id": "k1"}, []byte(c.body))
			if len(got) > auditDetailMax || !json.Valid([]byte(got)) || !strings.Contains(got, `"truncated":true`) {
				t.Fatalf("entry of %d bytes: %.300s", len(got), got)
			}
			if strings.Contains(got, "SECRET") {
				t.Fatalf("a secret in the entry: %s", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %s in %.600s", w, got)
				}
			}
		})
	}
	// So many fields that values cannot fit: every name still can.
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 300 {
		fmt.Fprintf(&b, `"field%03d":"%s",`, i, strings.Repeat("v", 30))
	}
	b.WriteString(`"scopes":["lease:exclusive"]}`)
	got := auditShape(nil, mustJSON(b.String()))
	if len(got) > auditDetailMax || !strings.Contains(got, `"scopes`) || !strings.Contains(got, `"field299`) {
		t.Fatalf("names only: %d bytes %.300s", len(got), got)
	}
}

func mustJSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}
