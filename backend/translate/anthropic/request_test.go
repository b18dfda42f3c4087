package anthropic

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestRequestToChat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{
			name: "scalars, system string, stream",
			in: `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"be brief","messages":[{"role":"user","content":"hi"}],
				"temperature":0.5,"top_p":0.9,"top_k":5,"stop_sequences":["END","STOP"],"stream":true,"metadata":{"user_id":"u-1"}}`,
			want: map[string]string{
				"model":          `"claude-sonnet-4-5"`,
				"messages.#":     `2`,
				"messages.0":     `{"role":"system","content":"be brief"}`,
				"messages.1":     `{"role":"user","content":"hi"}`,
				"max_tokens":     `1024`,
				"temperature":    `0.5`,
				"top_p":          `0.9`,
				"top_k":          absent,
				"stop":           `["END","STOP"]`,
				"stream":         `true`,
				"stream_options": `{"include_usage":true}`,
				"user":           `"u-1"`,
				"metadata":       absent,
			},
		},
		{
			name: "no stream: no stream_options",
			in:   `{"model":"m","max_tokens":10,"stream":false,"messages":[{"role":"user","content":"hi"}]}`,
			want: map[string]string{"stream": absent, "stream_options": absent, "tools": absent, "reasoning_effort": absent},
		},
		{
			name: "system blocks joined, cache_control dropped",
			in: `{"model":"m","max_tokens":10,"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"Be careful."}],
				"messages":[{"role":"user","content":"hi"}]}`,
			want: map[string]string{"messages.0": `{"role":"system","content":"You are Claude Code.\n\nBe careful."}`},
		},
		{
			name: "single text block becomes a string",
			in:   `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hello","cache_control":{"type":"ephemeral"}}]}]}`,
			want: map[string]string{"messages.0": `{"role":"user","content":"hello"}`},
		},
		{
			name: "multi-part user content with images",
			in: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[
				{"type":"text","text":"<system-reminder>x</system-reminder>"},
				{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}},
				{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}},
				{"type":"text","text":"what is this?"}]}]}`,
			want: map[string]string{
				"messages.0.content": `[{"type":"text","text":"<system-reminder>x</system-reminder>"},
					{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ"}},
					{"type":"image_url","image_url":{"url":"https://example.com/a.png"}},
					{"type":"text","text":"what is this?"}]`,
			},
		},
		{
			name: "documents: pdf as file part, text as text",
			in: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[
				{"type":"document","title":"spec.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0"}},
				{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain words"}}]}]}`,
			want: map[string]string{
				"messages.0.content": `[{"type":"file","file":{"filename":"spec.pdf","file_data":"data:application/pdf;base64,JVBERi0"}},{"type":"text","text":"plain words"}]`,
			},
		},
		{
			name: "assistant thinking, text and parallel tool calls",
			in: `{"model":"m","max_tokens":10,"messages":[
				{"role":"user","content":"weather?"},
				{"role":"assistant","content":[
					{"type":"thinking","thinking":"Need both cities.","signature":"EqoBsig"},
					{"type":"redacted_thinking","data":"opaque"},
					{"type":"text","text":"Checking."},
					{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris","units":{"c":true}}},
					{"type":"tool_use","id":"toolu_01B","name":"get_weather","input":{"city":"Oslo"}}]}]}`,
			want: map[string]string{
				"messages.1.role":              `"assistant"`,
				"messages.1.content":           `"Checking."`,
				"messages.1.reasoning_content": `"Need both cities."`,
				"messages.1.tool_calls": `[
					{"id":"toolu_01A","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"units\":{\"c\":true}}"}},
					{"id":"toolu_01B","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]`,
			},
		},
		{
			name: "assistant with only tool calls has null content",
			in: `{"model":"m","max_tokens":10,"messages":[{"role":"assistant","content":[
				{"type":"tool_use","id":"t1","name":"ls","input":{}},
				{"type":"tool_use","id":"t2","name":"noinput"},
				{"type":"tool_use","id":"t3","name":"raw","input":{"_arguments":"{not json"}}]}]}`,
			want: map[string]string{
				"messages.0.content":                         `null`,
				"messages.0.tool_calls.0.function.arguments": `"{}"`,
				"messages.0.tool_calls.1.function.arguments": `"{}"`,
				"messages.0.tool_calls.2.function.arguments": `"{not json"`,
			},
		},
		{
			name: "several tool results become consecutive tool messages, then the user text",
			in: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_01A","content":"18C"},
				{"type":"tool_result","tool_use_id":"toolu_01B","content":[{"type":"text","text":"line1"},{"type":"text","text":"line2"}]},
				{"type":"tool_result","tool_use_id":"toolu_01C","content":"not found","is_error":true},
				{"type":"tool_result","tool_use_id":"toolu_01D"},
				{"type":"text","text":"thanks"}]}]}`,
			want: map[string]string{
				"messages.#": `5`,
				"messages.0": `{"role":"tool","content":"18C","tool_call_id":"toolu_01A"}`,
				"messages.1": `{"role":"tool","content":"line1\nline2","tool_call_id":"toolu_01B"}`,
				"messages.2": `{"role":"tool","content":"Error: not found","tool_call_id":"toolu_01C"}`,
				"messages.3": `{"role":"tool","content":"","tool_call_id":"toolu_01D"}`,
				"messages.4": `{"role":"user","content":"thanks"}`,
			},
		},
		{
			name: "tool results only: no empty user message",
			in:   `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}]}`,
			want: map[string]string{"messages.#": `1`, "messages.0.role": `"tool"`},
		},
		{
			name: "image inside a tool result moves to a user message",
			in: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_9","content":[{"type":"text","text":"screenshot"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}]}]}`,
			want: map[string]string{
				"messages.#": `2`,
				"messages.0": `{"role":"tool","content":"screenshot","tool_call_id":"toolu_9"}`,
				"messages.1": `{"role":"user","content":[{"type":"text","text":"[attachments from tool result toolu_9]"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBOR"}}]}`,
			},
		},
		{
			name: "tools and tool_choice tool with parallel disabled; server tools dropped",
			in: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}],
				"tools":[{"name":"get_weather","description":"Get weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"cache_control":{"type":"ephemeral"}},
					{"name":"noschema"},
					{"type":"web_search_20250305","name":"web_search","max_uses":5}],
				"tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true}}`,
			want: map[string]string{
				"tools.#":             `2`,
				"tools.0":             `{"type":"function","function":{"name":"get_weather","description":"Get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`,
				"tools.1":             `{"type":"function","function":{"name":"noschema","parameters":{"type":"object","properties":{}}}}`,
				"tool_choice":         `{"type":"function","function":{"name":"get_weather"}}`,
				"parallel_tool_calls": `false`,
			},
		},
		{
			name: "tool_choice any",
			in:   `{"model":"m","max_tokens":10,"messages":[],"tools":[{"name":"a","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"}}`,
			want: map[string]string{"tool_choice": `"required"`, "parallel_tool_calls": absent},
		},
		{
			name: "tool_choice auto",
			in:   `{"model":"m","max_tokens":10,"messages":[],"tools":[{"name":"a","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto"}}`,
			want: map[string]string{"tool_choice": `"auto"`},
		},
		{
			name: "tool_choice none",
			in:   `{"model":"m","max_tokens":10,"messages":[],"tools":[{"name":"a","input_schema":{"type":"object"}}],"tool_choice":{"type":"none","disable_parallel_tool_use":true}}`,
			want: map[string]string{"tool_choice": `"none"`, "parallel_tool_calls": absent},
		},
		{
			name: "tool_choice without tools is dropped",
			in:   `{"model":"m","max_tokens":10,"messages":[],"tool_choice":{"type":"any"}}`,
			want: map[string]string{"tool_choice": absent, "tools": absent},
		},
		{
			name: "thinking budget 4000 is low",
			in:   `{"model":"m","max_tokens":20000,"messages":[],"thinking":{"type":"enabled","budget_tokens":4000}}`,
			want: map[string]string{"reasoning_effort": `"low"`, "thinking": absent},
		},
		{
			name: "thinking budget 8192 is medium",
			in:   `{"model":"m","max_tokens":20000,"messages":[],"thinking":{"type":"enabled","budget_tokens":8192}}`,
			want: map[string]string{"reasoning_effort": `"medium"`},
		},
		{
			name: "thinking budget 10000 is medium",
			in:   `{"model":"m","max_tokens":20000,"messages":[],"thinking":{"type":"enabled","budget_tokens":10000}}`,
			want: map[string]string{"reasoning_effort": `"medium"`},
		},
		{
			name: "thinking budget 31999 is high",
			in:   `{"model":"m","max_tokens":32000,"messages":[],"thinking":{"type":"enabled","budget_tokens":31999}}`,
			want: map[string]string{"reasoning_effort": `"high"`},
		},
		{
			name: "thinking disabled",
			in:   `{"model":"m","max_tokens":32000,"messages":[],"thinking":{"type":"disabled"}}`,
			want: map[string]string{"reasoning_effort": absent},
		},
		{
			name: "adaptive thinking with effort",
			in:   `{"model":"m","max_tokens":32000,"messages":[],"thinking":{"type":"adaptive"},"output_config":{"effort":"max"}}`,
			want: map[string]string{"reasoning_effort": `"high"`},
		},
		{
			name: "string content for assistant",
			in:   `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`,
			want: map[string]string{"messages.1": `{"role":"assistant","content":"b"}`},
		},
		{
			name: "unknown fields and blocks dropped",
			in: `{"model":"m","max_tokens":1,"service_tier":"auto","container":"c","mcp_servers":[],
				"messages":[{"role":"user","content":[{"type":"search_result","source":"s","title":"t","content":[]},{"type":"text","text":"q","citations":[]}]}]}`,
			want: map[string]string{"messages.0": `{"role":"user","content":"q"}`, "service_tier": absent, "container": absent},
		},
		{
			name: "mid-conversation system messages stay at their position",
			in: `{"model":"glm-4.6","max_tokens":1,"system":"top","messages":[
				{"role":"user","content":"a"},
				{"role":"system","content":"# Environment\nlinux"},
				{"role":"assistant","content":"b"},
				{"role":"system","content":[{"type":"text","text":"reminder","cache_control":{"type":"ephemeral"}},{"type":"text","text":"two"}]},
				{"role":"user","content":"c"}]}`,
			want: map[string]string{
				"messages.#": `6`,
				"messages.0": `{"role":"system","content":"top"}`,
				"messages.1": `{"role":"user","content":"a"}`,
				"messages.2": `{"role":"system","content":"# Environment\nlinux"}`,
				"messages.3": `{"role":"assistant","content":"b"}`,
				"messages.4": `{"role":"system","content":"reminder\n\ntwo"}`,
				"messages.5": `{"role":"user","content":"c"}`,
			},
		},
		{
			name: "a system message right after the system prompt joins it",
			in: `{"model":"m","max_tokens":1,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332;"},{"type":"text","text":"top"}],
				"messages":[{"role":"system","content":"more"},{"role":"user","content":"a"}]}`,
			want: map[string]string{
				"messages.#": `2`,
				"messages.0": `{"role":"system","content":"top\n\nmore"}`,
				"messages.1": `{"role":"user","content":"a"}`,
			},
		},
		{
			name: "a leading system message without a system prompt",
			in:   `{"model":"m","max_tokens":1,"messages":[{"role":"system","content":[]},{"role":"system","content":"s"},{"role":"user","content":"a"}]}`,
			want: map[string]string{"messages.#": `2`, "messages.0": `{"role":"system","content":"s"}`},
		},
		{
			name: "Claude Code's JSON user_id is not forwarded",
			in:   `{"model":"m","max_tokens":1,"messages":[],"metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"s\"}"}}`,
			want: map[string]string{"user": absent},
		},
		{
			name: "structured output becomes response_format json_schema",
			in:   `{"model":"m","max_tokens":1,"messages":[],"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`,
			want: map[string]string{
				"response_format":  `{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true}}`,
				"reasoning_effort": absent,
				"output_config":    absent,
			},
		},
		{
			name: "tool_reference blocks in a tool result name the tool",
			in: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1",
				"content":[{"type":"tool_reference","tool_name":"WebFetch"}]}]}]}`,
			want: map[string]string{"messages.#": `1`, "messages.0": `{"role":"tool","content":"Tool loaded: WebFetch","tool_call_id":"toolu_1"}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RequestToChat([]byte(tc.in))
			if err != nil {
				t.Fatalf("RequestToChat: %v", err)
			}
			checkPaths(t, out, tc.want)
		})
	}
}

func TestRequestToChatErrors(t *testing.T) {
	tests := []struct{ name, in, field string }{
		{"not json", `{"model":`, ""},
		{"not an object", `[1,2]`, ""},
		{"messages not array", `{"messages":{}}`, "messages"},
		{"bad role", `{"messages":[{"role":"tool","content":"x"}]}`, "messages[0].role"},
		{"system with an image", `{"messages":[{"role":"system","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}`, "messages[0].content[0]"},
		{"content number", `{"messages":[{"role":"user","content":5}]}`, "messages[0].content"},
		{"content missing", `{"messages":[{"role":"user"}]}`, "messages[0].content"},
		{"block not object", `{"messages":[{"role":"user","content":[1]}]}`, "messages[0].content[0]"},
		{"tool_result without id", `{"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"system number", `{"system":5,"messages":[]}`, "system"},
		{"system non-text block", `{"system":[{"type":"image"}],"messages":[]}`, "system[0]"},
		{"tools not array", `{"messages":[],"tools":{}}`, "tools"},
		{"tool without name", `{"messages":[],"tools":[{"input_schema":{}}]}`, "tools[0].name"},
		{"image file source", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages[0].content[0].source.type"},
		{"unknown tool_choice", `{"messages":[],"tools":[{"name":"a"}],"tool_choice":{"type":"maybe"}}`, "tool_choice.type"},
		{"max_tokens string", `{"max_tokens":"10","messages":[]}`, "max_tokens"},
		{"max_tokens fraction", `{"max_tokens":1.5,"messages":[]}`, "max_tokens"},
		{"temperature string", `{"temperature":"hot","messages":[]}`, "temperature"},
		{"model number", `{"model":1,"messages":[]}`, "model"},
		{"stream string", `{"stream":"yes","messages":[]}`, "stream"},
		{"text not string", `{"messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`, "messages[0].content[0].text"},
		{"block without type", `{"messages":[{"role":"user","content":[{"text":"x"}]}]}`, "messages[0].content[0].type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RequestToChat([]byte(tc.in))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want *InputError, got %v", err)
			}
			if ie.Field != tc.field {
				t.Fatalf("field %q, want %q (%v)", ie.Field, tc.field, err)
			}
		})
	}
}

func TestRequestFromChat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{
			name: "scalars and defaults",
			in: `{"model":"gpt-x","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],
				"temperature":1.5,"top_p":0.9,"stop":"END","stream":true,"stream_options":{"include_usage":true},"user":"u-1",
				"presence_penalty":1,"seed":3,"logprobs":true}`,
			want: map[string]string{
				"model":            `"gpt-x"`,
				"system":           `"be brief"`,
				"messages":         `[{"role":"user","content":[{"type":"text","text":"hi"}]}]`,
				"max_tokens":       `4096`,
				"temperature":      `1`,
				"top_p":            `0.9`,
				"stop_sequences":   `["END"]`,
				"stream":           `true`,
				"stream_options":   absent,
				"metadata":         `{"user_id":"u-1"}`,
				"presence_penalty": absent,
				"seed":             absent,
			},
		},
		{
			name: "max_completion_tokens wins over max_tokens; whitespace stops dropped",
			in:   `{"model":"m","max_tokens":100,"max_completion_tokens":200,"stop":["\n"," ","###"],"messages":[{"role":"user","content":"x"}]}`,
			want: map[string]string{"max_tokens": `200`, "stop_sequences": `["###"]`},
		},
		{
			name: "max_tokens kept",
			in:   `{"model":"m","max_tokens":100,"temperature":0,"messages":[{"role":"user","content":"x"}]}`,
			want: map[string]string{"max_tokens": `100`, "temperature": `0`},
		},
		{
			name: "several system and developer messages, anywhere, become system blocks",
			in: `{"model":"m","messages":[{"role":"system","content":"one"},{"role":"developer","content":[{"type":"text","text":"two"}]},
				{"role":"user","content":"hi"},{"role":"system","content":"three"}]}`,
			want: map[string]string{
				"system":     `[{"type":"text","text":"one"},{"type":"text","text":"two"},{"type":"text","text":"three"}]`,
				"messages.#": `1`,
			},
		},
		{
			name: "images and files",
			in: `{"model":"m","messages":[{"role":"user","content":[
				{"type":"text","text":"look"},
				{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBOR","detail":"high"}},
				{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}},
				{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0"}}]}]}`,
			want: map[string]string{
				"messages.0.content": `[{"type":"text","text":"look"},
					{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},
					{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},
					{"type":"document","title":"a.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0"}}]`,
			},
		},
		{
			name: "tool calls and consecutive tool messages, user text merged after them",
			in: `{"model":"m","messages":[
				{"role":"user","content":"weather?"},
				{"role":"assistant","content":null,"reasoning_content":"think","tool_calls":[
					{"id":"call_A","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
					{"id":"call_B","type":"function","function":{"name":"get_time","arguments":""}},
					{"id":"call_C","type":"function","function":{"name":"broken","arguments":"{oops"}}]},
				{"role":"tool","tool_call_id":"call_A","content":"18C"},
				{"role":"tool","tool_call_id":"call_B","content":[{"type":"text","text":"noon"}]},
				{"role":"tool","tool_call_id":"call_C","content":null},
				{"role":"user","content":"and tomorrow?"}]}`,
			want: map[string]string{
				"messages.#": `3`,
				"messages.1": `{"role":"assistant","content":[
					{"type":"tool_use","id":"call_A","name":"get_weather","input":{"city":"Paris"}},
					{"type":"tool_use","id":"call_B","name":"get_time","input":{}},
					{"type":"tool_use","id":"call_C","name":"broken","input":{"_arguments":"{oops"}}]}`,
				"messages.2": `{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"call_A","content":"18C"},
					{"type":"tool_result","tool_use_id":"call_B","content":"noon"},
					{"type":"tool_result","tool_use_id":"call_C","content":""},
					{"type":"text","text":"and tomorrow?"}]}`,
			},
		},
		{
			name: "assistant text with tool call",
			in: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"Let me check.","tool_calls":[
				{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
			want: map[string]string{
				"messages.1.content": `[{"type":"text","text":"Let me check."},{"type":"tool_use","id":"c1","name":"f","input":{}}]`,
				"messages.2.content": `[{"type":"tool_result","tool_use_id":"c1","content":"ok"}]`,
			},
		},
		{
			name: "tools, required choice, parallel off",
			in: `{"model":"m","messages":[{"role":"user","content":"x"}],
				"tools":[{"type":"function","function":{"name":"get_weather","description":"Get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}},
					{"type":"function","function":{"name":"bare"}},{"type":"custom","custom":{"name":"grammar"}}],
				"tool_choice":"required","parallel_tool_calls":false}`,
			want: map[string]string{
				"tools":       `[{"name":"get_weather","description":"Get weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},{"name":"bare","input_schema":{"type":"object","properties":{}}}]`,
				"tool_choice": `{"type":"any","disable_parallel_tool_use":true}`,
			},
		},
		{
			name: "named tool choice",
			in:   `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
			want: map[string]string{"tool_choice": `{"type":"tool","name":"f"}`},
		},
		{
			name: "tool choice none and auto with parallel off",
			in:   `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none","parallel_tool_calls":false}`,
			want: map[string]string{"tool_choice": `{"type":"none"}`},
		},
		{
			name: "parallel off alone",
			in:   `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`,
			want: map[string]string{"tool_choice": `{"type":"auto","disable_parallel_tool_use":true}`},
		},
		{
			name: "reasoning_effort low without max_tokens: headroom added, temperature dropped",
			in:   `{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"low","temperature":0.2,"top_p":0.5}`,
			want: map[string]string{
				"thinking":    `{"type":"enabled","budget_tokens":4096}`,
				"max_tokens":  `8192`,
				"temperature": absent,
				"top_p":       absent,
			},
		},
		{
			name: "reasoning_effort medium with room",
			in:   `{"model":"m","max_tokens":32000,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"medium","top_p":0.97}`,
			want: map[string]string{"thinking": `{"type":"enabled","budget_tokens":16384}`, "max_tokens": `32000`, "top_p": `0.97`},
		},
		{
			name: "reasoning_effort high shrinks to fit max_tokens",
			in:   `{"model":"m","max_tokens":8000,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"}`,
			want: map[string]string{"thinking": `{"type":"enabled","budget_tokens":7999}`, "max_tokens": `8000`},
		},
		{
			name: "reasoning_effort too small for max_tokens: no thinking",
			in:   `{"model":"m","max_tokens":500,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"high","temperature":0.3}`,
			want: map[string]string{"thinking": absent, "max_tokens": `500`, "temperature": `0.3`},
		},
		{
			name: "minimal and none",
			in:   `{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"minimal"}`,
			want: map[string]string{"thinking": `{"type":"enabled","budget_tokens":1024}`, "max_tokens": `5120`},
		},
		{
			name: "none disables",
			in:   `{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"none"}`,
			want: map[string]string{"thinking": absent, "max_tokens": `4096`},
		},
		{
			name: "openrouter reasoning.max_tokens is the budget",
			in:   `{"model":"m","max_tokens":20000,"messages":[{"role":"user","content":"x"}],"reasoning":{"max_tokens":6000}}`,
			want: map[string]string{"thinking": `{"type":"enabled","budget_tokens":6000}`},
		},
		{
			name: "forced tool use: no thinking",
			in:   `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","reasoning_effort":"high"}`,
			want: map[string]string{"thinking": absent},
		},
		{
			name: "tool loop without signed thinking: no thinking",
			in: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","reasoning_content":"hmm","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}],"reasoning_effort":"high"}`,
			want: map[string]string{"thinking": absent, "messages.1.content.0.type": `"tool_use"`},
		},
		{
			name: "tool loop with signed thinking_blocks keeps thinking",
			in: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","reasoning_content":"hmm",
				"thinking_blocks":[{"type":"thinking","thinking":"hmm","signature":"sig1"},{"type":"redacted_thinking","data":"opaque"}],
				"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}],"reasoning_effort":"high"}`,
			want: map[string]string{
				"thinking":           `{"type":"enabled","budget_tokens":24576}`,
				"max_tokens":         `28672`,
				"messages.1.content": `[{"type":"thinking","thinking":"hmm","signature":"sig1"},{"type":"redacted_thinking","data":"opaque"},{"type":"tool_use","id":"c","name":"f","input":{}}]`,
			},
		},
		{
			name: "empty assistant and user messages are dropped",
			in:   `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":""},{"role":"user","content":[]}]}`,
			want: map[string]string{"messages.#": `1`},
		},
		{
			name: "assistant refusal part becomes text",
			in:   `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}]}`,
			want: map[string]string{"messages.1.content": `[{"type":"text","text":"no"}]`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RequestFromChat([]byte(tc.in))
			if err != nil {
				t.Fatalf("RequestFromChat: %v", err)
			}
			checkPaths(t, out, tc.want)
		})
	}
}

func TestRequestFromChatErrors(t *testing.T) {
	tests := []struct{ name, in, field string }{
		{"not json", `nope`, ""},
		{"messages missing", `{"model":"m"}`, "messages"},
		{"n > 1", `{"model":"m","n":2,"messages":[]}`, "n"},
		{"bad role", `{"messages":[{"role":"function","content":"x"}]}`, "messages[0].role"},
		{"role missing", `{"messages":[{"content":"x"}]}`, "messages[0].role"},
		{"tool without id", `{"messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id"},
		{"audio part", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}]}`, "messages[0].content[0].type"},
		{"file id", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, "messages[0].content[0].file"},
		{"non-base64 data url", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/svg+xml,<svg/>"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"arguments number", `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":5}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"tool_calls object", `{"messages":[{"role":"assistant","tool_calls":{}}]}`, "messages[0].tool_calls"},
		{"content number", `{"messages":[{"role":"user","content":1}]}`, "messages[0].content"},
		{"unknown tool_choice", `{"messages":[],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"sometimes"}`, "tool_choice"},
		{"stop number", `{"messages":[],"stop":3}`, "stop"},
		{"max_tokens string", `{"messages":[],"max_tokens":"3"}`, "max_tokens"},
		{"tool parameters string", `{"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":"x"}}]}`, "tools[0].function.parameters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RequestFromChat([]byte(tc.in))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want *InputError, got %v", err)
			}
			if ie.Field != tc.field {
				t.Fatalf("field %q, want %q (%v)", ie.Field, tc.field, err)
			}
		})
	}
}

// TestGeneratedIDs: ids are generated only when missing, and never collide.
func TestGeneratedIDs(t *testing.T) {
	out, err := RequestFromChat([]byte(`{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"a"}},{"function":{"name":"b"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := gjson.GetBytes(out, "messages.0.content.0.id").String()
	b := gjson.GetBytes(out, "messages.0.content.1.id").String()
	if !strings.HasPrefix(a, "toolu_") || a == b {
		t.Fatalf("generated ids %q %q", a, b)
	}
}
