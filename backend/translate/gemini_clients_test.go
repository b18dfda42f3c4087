package translate_test

import (
	"bytes"
	"testing"

	tanthropic "omniroute/backend/translate/anthropic"
	tgemini "omniroute/backend/translate/gemini"
)

// TestGeminiCLIFixture: the Gemini CLI 0.61.0's second request of a shell
// tool round trip (captured by tests/clients TestGeminiCLIToolRoundTrip
// against an OpenAI-format upstream) translated to Chat and on to Anthropic
// Messages field by field, and passed to a Gemini upstream unchanged.
func TestGeminiCLIFixture(t *testing.T) {
	body := fixture(t, "gemini-cli-glm-tool-round-trip.json")
	chat, err := tgemini.RequestToChat(body, "glm-4.6", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []check{
		{"model", `"glm-4.6"`},
		{"stream", `true`},
		{"stream_options.include_usage", `true`},
		// systemInstruction first, then the session context and prompt, the
		// call and its result with the call's id.
		{"messages.#.role", `["system","user","assistant","tool"]`},
		{"messages.0.content", "^You are Gemini CLI"},
		{"messages.1.content", `~Run the marker command.`},
		{"messages.2.tool_calls.0.id", `"call_fake_1"`},
		{"messages.2.tool_calls.0.function.name", `"run_shell_command"`},
		{"messages.2.tool_calls.0.function.arguments", `"{\"command\":\"echo omniroute-tool-ok\",\"description\":\"Print a marker\"}"`},
		{"messages.3.tool_call_id", `"call_fake_1"`},
		{"messages.3.content", "~Output: omniroute-tool-ok"},
		// The CLI's 15 tools with their JSON Schemas (parametersJsonSchema).
		{"tools.#", `15`},
		{"tools.8.function.name", `"run_shell_command"`},
		{"tools.8.function.parameters.properties.command.type", `"string"`},
		{"temperature", `1`},
		{"top_p", `0.95`},
		// topK has no Chat counterpart; includeThoughts alone asks for no effort.
		{"top_k", absent},
		{"reasoning_effort", absent},
	} {
		c.verify(t, chat)
	}
	msgs, err := tanthropic.RequestFromChat(chat)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []check{
		{"system", "~You are Gemini CLI"},
		{"messages.#.role", `["user","assistant","user"]`},
		{"messages.1.content.0.type", `"tool_use"`},
		{"messages.1.content.0.id", `"call_fake_1"`},
		{"messages.1.content.0.input.command", `"echo omniroute-tool-ok"`},
		{"messages.2.content.0.type", `"tool_result"`},
		{"messages.2.content.0.tool_use_id", `"call_fake_1"`},
		{"tools.#", `15`},
	} {
		c.verify(t, msgs)
	}
	// To a Gemini upstream the body passes as it is: it holds no part
	// without data for the gateway to drop.
	if out := tgemini.DropEmptyTextParts(body); !bytes.Equal(out, body) {
		t.Fatal("the CLI's body was rewritten")
	}
}
