package bedrock

import (
	"errors"
	"testing"

	"github.com/tidwall/gjson"
)

// TestToConverse: Chat turns become alternating Converse messages (two tool
// results in one user turn, the assistant's tool calls as toolUse with
// parsed input), system text goes to system, a data-URL image to bytes,
// tool_choice to Converse's, stop and token limits to inferenceConfig; what
// Converse cannot express is ErrUnsupported.
func TestToConverse(t *testing.T) {
	body := `{"model":"m","max_completion_tokens":64,"stop":"END","tool_choice":"required",
	 "tools":[{"type":"function","function":{"name":"f","description":"d"}}],
	 "messages":[{"role":"system","content":"sys"},
	  {"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/jpg;base64,AAAA"}}]},
	  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":""}}]},
	  {"role":"tool","tool_call_id":"c1","content":"one"},{"role":"tool","tool_call_id":"c2","content":"two"},
	  {"role":"user","content":"and?"}]}`
	out, err := ToConverse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"system.0.text": "sys", "messages.#": "3", "messages.0.role": "user", "messages.0.content.1.image.format": "jpeg",
		"messages.0.content.1.image.source.bytes": "AAAA", "messages.1.content.0.toolUse.input.a": "1",
		"messages.1.content.1.toolUse.toolUseId": "c2", "messages.2.role": "user", "messages.2.content.#": "3",
		"messages.2.content.1.toolResult.toolUseId": "c2", "messages.2.content.2.text": "and?",
		"inferenceConfig.maxTokens": "64", "inferenceConfig.stopSequences.0": "END",
		"toolConfig.toolChoice.any": "{}", "toolConfig.tools.0.toolSpec.inputSchema.json.type": "object",
	} {
		if got := gjson.GetBytes(out, path).String(); got != want {
			t.Errorf("%s = %q, want %q in %s", path, got, want, out)
		}
	}
	for name, bad := range map[string]string{
		"no user turn":   `{"messages":[{"role":"system","content":"x"}]}`,
		"unknown role":   `{"messages":[{"role":"critic","content":"x"}]}`,
		"bad arguments":  `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{"}}]}]}`,
		"audio part":     `{"messages":[{"role":"user","content":[{"type":"input_audio"}]}]}`,
		"not JSON":       `{"messages":`,
		"bad toolChoice": `{"messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f"}}],"tool_choice":{"type":"function"}}`,
	} {
		if _, err := ToConverse([]byte(bad)); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v", name, err)
		}
	}
	none, _ := ToConverse([]byte(`{"messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f"}}],"tool_choice":"none"}`))
	if gjson.GetBytes(none, "toolConfig").Exists() {
		t.Errorf("tool_choice none kept the tools: %s", none)
	}
}
