package anthropic

import (
	"errors"
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	long := strings.Repeat("abcd", 1000) // 4000 chars ≈ 1000 tokens
	tests := []struct {
		name     string
		in       string
		min, max int
	}{
		{"empty", `{"model":"m","messages":[]}`, 0, 0},
		{"one short message", `{"messages":[{"role":"user","content":"hello world"}]}`, 5, 15},
		{"long text ~1000 tokens", `{"messages":[{"role":"user","content":"` + long + `"}]}`, 1000, 1020},
		{"system, blocks, tools", `{"system":[{"type":"text","text":"` + long + `"}],"messages":[{"role":"user","content":[{"type":"text","text":"` + long + `"}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"` + long + `"},{"type":"tool_use","id":"t","name":"f","input":{"a":"` + long + `"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"` + long + `"}]}]}],
			"tools":[{"name":"f","description":"` + long + `","input_schema":{"type":"object"}}]}`, 6000, 6100},
		{"image counts fixed", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + long + `"}}]}]}`, 1600, 1620},
		{"multibyte counts characters", `{"messages":[{"role":"user","content":"` + strings.Repeat("é", 400) + `"}]}`, 100, 110},
		{"null fields", `{"system":null,"messages":null,"tools":null}`, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := CountTokens([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if n < tc.min || n > tc.max {
				t.Fatalf("estimate %d, want %d..%d", n, tc.min, tc.max)
			}
		})
	}
}

func TestCountTokensErrors(t *testing.T) {
	for _, in := range []string{`{`, `[]`, `{"messages":{}}`, `{"system":1}`, `{"tools":"x"}`} {
		_, err := CountTokens([]byte(in))
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: want *InputError, got %v", in, err)
		}
	}
}

// TestCountTokensMidConversationSystem: Claude Code counts conversations that
// hold role "system" messages; they are counted like any other message.
func TestCountTokensMidConversationSystem(t *testing.T) {
	without := `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`
	with := `{"model":"m","messages":[{"role":"user","content":"hello there"},{"role":"system","content":"# Environment\nlinux, bash, a long reminder"}]}`
	a, err := CountTokens([]byte(without))
	if err != nil {
		t.Fatal(err)
	}
	b, err := CountTokens([]byte(with))
	if err != nil {
		t.Fatalf("CountTokens with a system message: %v", err)
	}
	if b <= a {
		t.Fatalf("the system message was not counted: %d <= %d", b, a)
	}
}
