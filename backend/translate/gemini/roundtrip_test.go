package gemini

import (
	"testing"

	"github.com/tidwall/gjson"
)

// Chat → Gemini → Chat keeps what the request means.
func TestRoundTripChat(t *testing.T) {
	chat := `{"model":"m","stream":true,"messages":[
		{"role":"system","content":"be brief"},
		{"role":"user","content":[{"type":"text","text":"what is here?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]},
		{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_a","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}},{"id":"call_b","type":"function","function":{"name":"raw","arguments":"[1,2]"}}]},
		{"role":"tool","tool_call_id":"call_a","content":"a.txt\nb.txt"},
		{"role":"tool","tool_call_id":"call_b","content":"{\"n\":2}"},
		{"role":"user","content":"and?"}],
		"tools":[{"type":"function","function":{"name":"ls","description":"list","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},{"type":"function","function":{"name":"raw","parameters":{"type":"object","properties":{"x":{"type":"array","items":{"type":"integer"}}}}}}],
		"tool_choice":{"type":"function","function":{"name":"ls"}},
		"temperature":0.2,"top_p":0.8,"max_tokens":300,"stop":["END"],"reasoning_effort":"medium",
		"response_format":{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`
	gem, err := RequestFromChat([]byte(chat))
	if err != nil {
		t.Fatal(err)
	}
	back, err := RequestToChat(gem, "m", true)
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, back, map[string]string{
		"messages.0":                                 `{"role":"system","content":"be brief"}`,
		"messages.1":                                 `{"role":"user","content":[{"type":"text","text":"what is here?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]}`,
		"messages.2.content":                         `"Let me look."`,
		"messages.2.tool_calls.#.id":                 `["call_a","call_b"]`,
		"messages.2.tool_calls.#.function.name":      `["ls","raw"]`,
		"messages.2.tool_calls.#.function.arguments": `["{\"path\":\".\"}","[1,2]"]`,
		"messages.3":                                 `{"role":"tool","tool_call_id":"call_a","content":"a.txt\nb.txt"}`,
		"messages.4":                                 `{"role":"tool","tool_call_id":"call_b","content":"{\"n\":2}"}`,
		"messages.5":                                 `{"role":"user","content":"and?"}`,
		"messages.6":                                 absent,
		"tools.0.function":                           `{"name":"ls","description":"list","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`,
		"tools.1.function.parameters":                `{"type":"object","properties":{"x":{"type":"array","items":{"type":"integer"}}}}`,
		"tool_choice":                                `{"type":"function","function":{"name":"ls"}}`,
		"temperature":                                `0.2`, "top_p": `0.8`, "max_tokens": `300`, "stop": `["END"]`,
		"reasoning_effort": `"medium"`, "stream": `true`,
		"response_format": `{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}`,
	})
	// The signature placeholder rides along in extra_content and is not lost.
	if s := gjson.GetBytes(back, "messages.2.tool_calls.0.extra_content.google.thought_signature").String(); s != skipSignature {
		t.Fatalf("signature %q", s)
	}
}

// Each reasoning effort but "minimal" survives Chat → Gemini → Chat.
func TestRoundTripEffort(t *testing.T) {
	for effort, want := range map[string]string{"none": "none", "minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"} {
		gem, err := RequestFromChat([]byte(`{"messages":[{"role":"user","content":"hi"}],"reasoning_effort":"` + effort + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		back, err := RequestToChat(gem, "m", false)
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(back, "reasoning_effort").String(); got != want {
			t.Errorf("%s → %s, want %s", effort, got, want)
		}
	}
}

// A Gemini CLI-like conversation without ids: Gemini → Chat → Gemini keeps
// the calls and responses paired, sends no made-up id back, and keeps the
// thought signature.
func TestRoundTripGemini(t *testing.T) {
	gem := `{"systemInstruction":{"parts":[{"text":"You are an agent."}]},"contents":[
		{"role":"user","parts":[{"text":"list /tmp"}]},
		{"role":"model","parts":[{"text":"ok","thought":true},{"functionCall":{"name":"list_directory","args":{"path":"/tmp"}},"thoughtSignature":"REAL"}]},
		{"role":"user","parts":[{"functionResponse":{"name":"list_directory","response":{"output":"a b"}}}]},
		{"role":"model","parts":[{"text":"a and b"}]}],
		"tools":[{"functionDeclarations":[{"name":"list_directory","description":"Lists","parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]}],
		"generationConfig":{"temperature":0,"topP":1,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}`
	chat, err := RequestToChat([]byte(gem), "m", false)
	if err != nil {
		t.Fatal(err)
	}
	back, err := RequestFromChat(chat)
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, back, map[string]string{
		"systemInstruction":              `{"parts":[{"text":"You are an agent."}]}`,
		"contents.#":                     `4`,
		"contents.1":                     `{"role":"model","parts":[{"functionCall":{"name":"list_directory","args":{"path":"/tmp"}},"thoughtSignature":"REAL"}]}`,
		"contents.2":                     `{"role":"user","parts":[{"functionResponse":{"name":"list_directory","response":{"output":"a b"}}}]}`,
		"contents.3":                     `{"role":"model","parts":[{"text":"a and b"}]}`,
		"tools.0.functionDeclarations.0": `{"name":"list_directory","description":"Lists","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`,
		"generationConfig":               `{"temperature":0,"topP":1,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}`,
	})
}

// A response survives Chat → Gemini → Chat.
func TestRoundTripResponse(t *testing.T) {
	chat := `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":"r","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"},"extra_content":{"google":{"thought_signature":"S"}}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":9,"completion_tokens":6,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":2}}}`
	gem, err := ResponseFromChat([]byte(chat))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ResponseToChat(gem, "ignored")
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, back, map[string]string{
		"id": `"x"`, "model": `"m"`,
		"choices.0.message":       `{"role":"assistant","content":"hi","reasoning_content":"r","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"},"extra_content":{"google":{"thought_signature":"S"}}}],"refusal":null}`,
		"choices.0.finish_reason": `"tool_calls"`,
		"usage":                   `{"prompt_tokens":9,"completion_tokens":6,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":2}}`,
	})
}
