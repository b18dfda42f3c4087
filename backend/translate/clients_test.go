package translate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	tanthropic "omniroute/backend/translate/anthropic"
	"omniroute/backend/translate/responses"
)

// The fixtures in testdata/clients are request bodies captured from the real
// clients (tests/clients with OMNIROUTE_CAPTURE_DIR, or the client pointed at
// a capturing fake upstream): Claude Code 2.1.332 and Codex CLI 0.171.0.
// Each is translated to every upstream format it can meet and checked field
// by field against the table in doc.go. A Messages client meets an Anthropic
// upstream as a passthrough (backend/gateway; byte for byte, as
// backend/server's TestClaudeCodeFixturePassesThroughToAnthropic shows), so
// its only translation is to Chat; a Responses client meets both through Chat.

// check is one assertion on a translated body: the gjson path's value.
type check struct {
	path string
	// want is the value's raw JSON; absent asserts the path does not exist;
	// a prefix "~" asserts the raw JSON contains the rest; "^" that the
	// string value starts with the rest; "!~" that the raw JSON lacks it.
	want string
}

const absent = "<absent>"

func (c check) verify(t *testing.T, body []byte) {
	t.Helper()
	got := gjson.GetBytes(body, c.path)
	switch {
	case c.want == absent:
		if got.Exists() {
			t.Errorf("%s = %.200s, want absent", c.path, got.Raw)
		}
	case strings.HasPrefix(c.want, "!~"):
		if strings.Contains(got.Raw, c.want[2:]) {
			t.Errorf("%s contains %q", c.path, c.want[2:])
		}
	case strings.HasPrefix(c.want, "~"):
		if !strings.Contains(got.Raw, c.want[1:]) {
			t.Errorf("%s = %.300s, want it to contain %q", c.path, got.Raw, c.want[1:])
		}
	case strings.HasPrefix(c.want, "^"):
		if !strings.HasPrefix(got.String(), c.want[1:]) {
			t.Errorf("%s = %.200q, want it to start with %q", c.path, got.String(), c.want[1:])
		}
	default:
		if got.Raw != c.want {
			t.Errorf("%s = %.300s, want %s", c.path, got.Raw, c.want)
		}
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "clients", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClaudeCodeFixturesToChat(t *testing.T) {
	tests := []struct {
		fixture string
		checks  []check
	}{
		{"claude-code-glm-tool-round-trip.json", []check{
			{"model", `"glm-4.6"`},
			// The system prompt leads, without the billing attribution block
			// and without cache_control.
			{"messages.#.role", `["system","user","system","assistant","tool"]`},
			{"messages.0.content", "^You are a Claude agent"},
			{"messages.0.content", "!~x-anthropic-billing-header"},
			// The mid-conversation system message stays at its position.
			{"messages.2.content", "^# Environment"},
			// Thinking without a signature replays as reasoning_content.
			{"messages.3.reasoning_content", `"Let me think about this step by step."`},
			{"messages.3.content", `null`},
			{"messages.3.tool_calls.0.id", `"call_fake_1"`},
			{"messages.3.tool_calls.0.function.name", `"Bash"`},
			{"messages.3.tool_calls.0.function.arguments", `"{\"command\":\"echo omniroute-tool-ok\",\"description\":\"Print a marker\"}"`},
			{"messages.4.tool_call_id", `"call_fake_1"`},
			{"messages.4.content", `"omniroute-tool-ok"`},
			// Adaptive thinking + output_config.effort → reasoning_effort.
			{"reasoning_effort", `"high"`},
			{"max_tokens", `32000`},
			{"stream", `true`},
			{"stream_options", `{"include_usage":true}`},
			// Every tool is a function, deferred ones included.
			{"tools.#", `12`},
			{"tools.#.type", `["function","function","function","function","function","function","function","function","function","function","function","function"]`},
			{"tools.10.function.name", `"DeferredToolPlaceholder"`},
			{"tools.1.function.parameters.properties.command.type", `"string"`},
			{"@this", "!~defer_loading"},
			{"@this", "!~cache_control"},
			// Anthropic-only fields are dropped deliberately.
			{"system", absent}, {"thinking", absent}, {"context_management", absent},
			{"output_config", absent}, {"metadata", absent}, {"user", absent}, {"tool_choice", absent},
		}},
		{"claude-code-sonnet-thinking.json", []check{
			{"model", `"claude-sonnet-4-5"`},
			{"messages.#.role", `["system","user","assistant","tool"]`},
			// thinking enabled, budget 31999 ("ultrathink" level) → high.
			{"reasoning_effort", `"high"`},
			// The text replays as reasoning_content; the signed block as
			// LiteLLM's thinking_blocks, for an upstream that takes it back.
			{"messages.2.reasoning_content", `"Let me think about this step by step."`},
			{"messages.2.thinking_blocks", `[{"type":"thinking","thinking":"Let me think about this step by step.","signature":"fakesig=="}]`},
			{"messages.2.tool_calls.0.id", `"toolu_fake_1"`},
			{"messages.2.tool_calls.0.function.arguments", `"{\"city\":\"Paris\"}"`},
			// is_error tool results are marked for the model; the
			// system-reminder text blocks of the result stay in it.
			{"messages.3.tool_call_id", `"toolu_fake_1"`},
			{"messages.3.content", "^Error: <tool_use_error>"},
			{"messages.3.content", "~<system-reminder>"},
			{"thinking", absent}, {"context_management", absent},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			chat, err := tanthropic.RequestToChat(fixture(t, tc.fixture))
			if err != nil {
				t.Fatalf("RequestToChat: %v", err)
			}
			for _, c := range tc.checks {
				c.verify(t, chat)
			}
		})
	}
}

func TestCodexFixtures(t *testing.T) {
	tests := []struct {
		fixture   string
		chat      []check
		anthropic []check
	}{
		{"codex-glm-tool-round-trip.json",
			[]check{
				{"model", `"glm-4.6"`},
				// Both developer messages merge into the one leading system message.
				{"messages.#.role", `["system","user","user","assistant","tool"]`},
				{"messages.0.content", "^You are a coding agent running in the Codex CLI"},
				{"messages.0.content", "~<skills_instructions>"},
				{"messages.1.content", "^<environment_context>"},
				{"messages.2.content", `"Run the marker command."`},
				{"messages.3.tool_calls.0.id", `"call_fake_1"`},
				{"messages.3.tool_calls.0.function.name", `"exec_command"`},
				{"messages.3.tool_calls.0.function.arguments", `"{\"cmd\":\"echo omniroute-tool-ok\"}"`},
				{"messages.4.tool_call_id", `"call_fake_1"`},
				{"messages.4.content", "~omniroute-tool-ok"},
				// Function tools cross; the namespace and hosted web_search do not.
				{"tools.#.function.name", `["exec_command","write_stdin","request_user_input","view_image","get_goal","create_goal","update_goal"]`},
				{"tool_choice", `"auto"`},
				{"parallel_tool_calls", `true`},
				{"stream_options", `{"include_usage":true}`},
				// reasoning without an effort asks for nothing.
				{"reasoning_effort", absent},
				{"store", absent}, {"include", absent}, {"prompt_cache_key", absent}, {"client_metadata", absent}, {"input", absent},
			},
			[]check{
				{"system", "^You are a coding agent running in the Codex CLI"},
				{"messages.#.role", `["user","user","assistant","user"]`},
				{"messages.2.content.0", `{"type":"tool_use","id":"call_fake_1","name":"exec_command","input":{"cmd":"echo omniroute-tool-ok"}}`},
				{"messages.3.content.0.type", `"tool_result"`},
				{"messages.3.content.0.tool_use_id", `"call_fake_1"`},
				{"tools.#.name", `["exec_command","write_stdin","request_user_input","view_image","get_goal","create_goal","update_goal"]`},
				{"tools.0.input_schema.properties.cmd.type", `"string"`},
				{"tool_choice", `{"type":"auto"}`},
				{"max_tokens", `4096`},
				{"thinking", absent}, {"stream", `true`}, {"stream_options", absent},
			}},
		{"codex-gpt-5.5-first-turn.json",
			[]check{
				{"model", `"gpt-5.5"`},
				{"messages.#.role", `["system","user","user"]`},
				{"messages.2.content", `"say hi"`},
				{"reasoning_effort", `"medium"`},
				// The freeform apply_patch becomes a function of one string,
				// its grammar in the description; tool_search and web_search
				// (hosted) are dropped.
				{"tools.#.function.name", `["exec_command","write_stdin","request_user_input","apply_patch","view_image","get_goal","create_goal","update_goal"]`},
				{`tools.#(function.name=="apply_patch").function.parameters.required`, `["input"]`},
				{`tools.#(function.name=="apply_patch").function.description`, "~start: begin_patch hunk+ end_patch"},
				{"text", absent}, {"reasoning", absent},
			},
			[]check{
				{"system", "^You are Codex, a coding agent based on GPT-5."},
				// medium effort → a 16384-token budget, max_tokens above it.
				{"thinking", `{"type":"enabled","budget_tokens":16384}`},
				{"max_tokens", `20480`},
				{`tools.#(name=="apply_patch").input_schema.required`, `["input"]`},
				{"messages.#.role", `["user","user"]`},
			}},
		{"codex-gpt-6.1-code-mode-first-turn.json",
			[]check{
				// Code mode's additional_tools item has no Chat form: dropped,
				// the conversation itself crosses.
				{"messages.#.role", `["system","user","user"]`},
				{"tools", absent},
				{"reasoning_effort", `"low"`},
			},
			[]check{
				{"tools", absent},
				{"thinking", `{"type":"enabled","budget_tokens":4096}`},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			chat, err := responses.RequestToChat(fixture(t, tc.fixture))
			if err != nil {
				t.Fatalf("RequestToChat: %v", err)
			}
			for _, c := range tc.chat {
				c.verify(t, chat)
			}
			msgs, err := tanthropic.RequestFromChat(chat)
			if err != nil {
				t.Fatalf("RequestFromChat: %v", err)
			}
			for _, c := range tc.anthropic {
				c.verify(t, msgs)
			}
		})
	}
}
