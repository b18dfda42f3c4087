package bedrock

import (
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestNeedsInvoke(t *testing.T) {
	const claude, profile, nova = "anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-3-5-haiku-20241022-v1:0", "amazon.nova-pro-v1:0"
	user := `{"role":"user","content":"hi"}`
	cases := []struct {
		name, model, body string
		want              bool
	}{
		{"plain", claude, `{"messages":[` + user + `]}`, false},
		{"effort", claude, `{"reasoning_effort":"medium","messages":[` + user + `]}`, true},
		{"effort none", claude, `{"reasoning_effort":"none","messages":[` + user + `]}`, false},
		{"reasoning object", profile, `{"reasoning":{"effort":"high"},"messages":[` + user + `]}`, true},
		{"reasoning disabled", claude, `{"reasoning":{"enabled":false},"messages":[` + user + `]}`, false},
		{"prefill", profile, `{"messages":[` + user + `,{"role":"assistant","content":"So"}]}`, true},
		{"assistant tool call last", claude, `{"messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, false},
		{"not Anthropic", nova, `{"reasoning_effort":"high","messages":[` + user + `,{"role":"assistant","content":"So"}]}`, false},
	}
	for _, c := range cases {
		if got := NeedsInvoke(c.model, []byte(c.body)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestToInvoke(t *testing.T) {
	out, err := ToInvoke([]byte(`{"model":"m","stream":true,"max_tokens":4000,"reasoning_effort":"high","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := gjson.ParseBytes(out)
	if r.Get("anthropic_version").String() != AnthropicVersion || r.Get("model").Exists() || r.Get("stream").Exists() ||
		r.Get("thinking.type").String() != "enabled" || r.Get("messages.0.role").String() != "user" || !r.Get("system").Exists() {
		t.Fatalf("%s", out)
	}
}

func chunkFrame(ev string) []byte {
	return Encode([][2]string{{":event-type", "chunk"}, {":content-type", "application/json"}, {":message-type", "event"}},
		[]byte(`{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(ev))+`"}`))
}

func TestInvokeReader(t *testing.T) {
	start := chunkFrame(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":4,"output_tokens":1}}}`)
	block := chunkFrame(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	delta := chunkFrame(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`)
	stop := string(chunkFrame(`{"type":"content_block_stop","index":0}`)) +
		string(chunkFrame(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`)) +
		string(chunkFrame(`{"type":"message_stop"}`))
	exception := Encode([][2]string{{":exception-type", "throttlingException"}, {":content-type", "application/json"}, {":message-type", "exception"}},
		[]byte(`{"message":"Too many tokens"}`))
	cases := []struct {
		name, stream string
		wantErr      error
		want         []string
	}{
		{"complete", string(start) + string(block) + string(delta) + stop, nil, []string{`"content":"Hi"`, "[DONE]", `"finish_reason":"stop"`}},
		{"cut before message_stop", string(start) + string(block) + string(delta), errNoStop, []string{`"content":"Hi"`}},
		{"exception", string(start) + string(exception), nil, []string{`"code":"ThrottlingException"`}},
	}
	for _, c := range cases {
		r := NewInvokeReader(io.NopCloser(strings.NewReader(c.stream)), "m")
		out, err := io.ReadAll(r)
		if c.wantErr != nil && !errors.Is(err, c.wantErr) || c.wantErr == nil && err != nil {
			t.Errorf("%s: err %v, want %v", c.name, err, c.wantErr)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: no %s in %s", c.name, w, out)
			}
		}
		if c.wantErr != nil && strings.Contains(string(out), "[DONE]") {
			t.Errorf("%s: [DONE] after a broken stream", c.name)
		}
	}
}
