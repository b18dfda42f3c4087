package responses

import (
	"errors"
	"strings"
	"testing"
)

func TestRequestToChat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "string input and instructions",
			in:   `{"model":"m","instructions":"be brief","input":"hi"}`,
			want: `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
		},
		{
			name: "no input at all",
			in:   `{"model":"m"}`,
			want: `{"model":"m","messages":[]}`,
		},
		{
			name: "roles, developer to system, leading system messages merged",
			in: `{"model":"m","instructions":"sys","input":[
				{"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},
				{"role":"user","content":"q1"},
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":"b"}]},
				{"type":"message","role":"system","content":"late"},
				{"role":"user","content":[{"type":"input_text","text":"q2"}]}]}`,
			want: `{"model":"m","messages":[
				{"role":"system","content":"sys\n\ndev"},
				{"role":"user","content":"q1"},
				{"role":"assistant","content":"ab"},
				{"role":"system","content":"late"},
				{"role":"user","content":"q2"}]}`,
		},
		{
			name: "content parts: text, images, file, audio; unknown parts dropped",
			in: `{"input":[{"role":"user","content":[
				{"type":"input_text","text":"look"},
				{"type":"input_image","image_url":"https://x/y.png","detail":"high"},
				{"type":"input_image","image_url":"data:image/png;base64,AAAA"},
				{"type":"input_file","file_data":"data:application/pdf;base64,BBBB","filename":"a.pdf"},
				{"type":"input_file","file_id":"file-1"},
				{"type":"input_audio","input_audio":{"data":"CCCC","format":"wav"}},
				{"type":"future_part","x":1}]}]}`,
			want: `{"messages":[{"role":"user","content":[
				{"type":"text","text":"look"},
				{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"high"}},
				{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},
				{"type":"file","file":{"file_data":"data:application/pdf;base64,BBBB","filename":"a.pdf"}},
				{"type":"file","file":{"file_id":"file-1"}},
				{"type":"input_audio","input_audio":{"data":"CCCC","format":"wav"}}]}]}`,
		},
		{
			name: "several user text parts stay parts",
			in:   `{"input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]}`,
			want: `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
		},
		{
			name: "function calls merge into one assistant message, outputs become tool messages, reasoning dropped",
			in: `{"input":[
				{"role":"user","content":"do it"},
				{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"xyz"},
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":"sure"}]},
				{"type":"function_call","id":"fc_1","call_id":"call_a","name":"shell","arguments":"{\"command\":[\"ls\"]}"},
				{"type":"function_call","call_id":"call_b","name":"read","arguments":"{}"},
				{"type":"function_call_output","call_id":"call_a","output":"a.txt"},
				{"type":"function_call_output","call_id":"call_b","output":"{\"ok\":true}"},
				{"type":"function_call","call_id":"call_c","name":"shell","arguments":""},
				{"type":"function_call_output","call_id":"call_c","output":"done"}]}`,
			want: `{"messages":[
				{"role":"user","content":"do it"},
				{"role":"assistant","content":"sure","tool_calls":[
					{"id":"call_a","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}},
					{"id":"call_b","type":"function","function":{"name":"read","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"call_a","content":"a.txt"},
				{"role":"tool","tool_call_id":"call_b","content":"{\"ok\":true}"},
				{"role":"assistant","tool_calls":[{"id":"call_c","type":"function","function":{"name":"shell","arguments":""}}]},
				{"role":"tool","tool_call_id":"call_c","content":"done"}]}`,
		},
		{
			name: "tool output with an image: text in the tool message, the image after the tool run",
			in: `{"input":[
				{"type":"function_call","call_id":"c1","name":"view_image","arguments":"{}"},
				{"type":"function_call","call_id":"c2","name":"shell","arguments":"{}"},
				{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"here"},{"type":"input_image","image_url":"data:image/png;base64,AA"}]},
				{"type":"function_call_output","call_id":"c2","output":[{"type":"input_image","image_url":"data:image/png;base64,BB"}]},
				{"role":"user","content":"next"}]}`,
			want: `{"messages":[
				{"role":"assistant","tool_calls":[
					{"id":"c1","type":"function","function":{"name":"view_image","arguments":"{}"}},
					{"id":"c2","type":"function","function":{"name":"shell","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"here"},
				{"role":"tool","tool_call_id":"c2","content":"(the tool returned 1 attachment(s); they follow in the next message)"},
				{"role":"user","content":[
					{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}},
					{"type":"image_url","image_url":{"url":"data:image/png;base64,BB"}}]},
				{"role":"user","content":"next"}]}`,
		},
		{
			name: "non-string arguments and outputs pass as JSON text; hosted tool items dropped",
			in: `{"input":[
				{"type":"function_call","call_id":"c1","name":"f","arguments":{"a":1}},
				{"type":"function_call_output","call_id":"c1","output":{"b":2}},
				{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},
				{"type":"compaction","encrypted_content":"zz"},
				{"type":"local_shell_call","id":"ls_1","call_id":"x","status":"completed","action":{"type":"exec","command":["ls"]}},
				{"type":"function_call_output","call_id":"x","output":"a.txt"}]}`,
			want: `{"messages":[
				{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"{\"b\":2}"},
				{"role":"assistant","tool_calls":[{"id":"x","type":"function","function":{"name":"local_shell","arguments":"{\"type\":\"exec\",\"command\":[\"ls\"]}"}}]},
				{"role":"tool","tool_call_id":"x","content":"a.txt"}]}`,
		},
		{
			name: "local_shell_call_output pairs by call_id, else id",
			in:   `{"input":[{"type":"local_shell_call_output","id":"ls_2","output":"o"},{"type":"local_shell_call_output","call_id":"c3","output":[{"type":"input_text","text":"p"}]}]}`,
			want: `{"messages":[{"role":"tool","tool_call_id":"ls_2","content":"o"},{"role":"tool","tool_call_id":"c3","content":"p"}]}`,
		},
		{
			name: "tools nested, hosted tools dropped, strict kept only when true, tool_choice string",
			in: `{"input":"x","tools":[
				{"type":"function","name":"shell","description":"run","strict":false,"parameters":{"type":"object","properties":{"command":{"type":"array"}}}},
				{"type":"web_search"},
				{"type":"local_shell"},
				{"type":"function","name":"exact","strict":true,"parameters":{"type":"object"}}],
				"tool_choice":"required","parallel_tool_calls":false}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tools":[
				{"type":"function","function":{"name":"shell","description":"run","parameters":{"type":"object","properties":{"command":{"type":"array"}}}}},
				{"type":"function","function":{"name":"exact","parameters":{"type":"object"},"strict":true}}],
				"tool_choice":"required","parallel_tool_calls":false}`,
		},
		{
			name: "named function tool_choice",
			in:   `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"f"}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		},
		{
			name: "allowed_tools narrows the tool list",
			in: `{"input":"x","tools":[{"type":"function","name":"a"},{"type":"function","name":"b"},{"type":"function","name":"c"}],
				"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"a"},{"type":"function","name":"c"}]}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"c"}}],"tool_choice":"required"}`,
		},
		{
			name: "hosted tool_choice falls back to the model's choice",
			in:   `{"input":"x","tools":[{"type":"function","name":"a"},{"type":"web_search_preview"}],"tool_choice":{"type":"web_search_preview"}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"a"}}]}`,
		},
		{
			name: "no Chat tools left: tool_choice and parallel_tool_calls omitted",
			in:   `{"input":"x","tools":[{"type":"web_search"}],"tool_choice":"auto","parallel_tool_calls":true}`,
			want: `{"messages":[{"role":"user","content":"x"}]}`,
		},
		{
			name: "sampling, limits, reasoning effort, user; stateless fields ignored",
			in: `{"model":"m","input":"x","max_output_tokens":512,"temperature":0.2,"top_p":0.9,"user":"u1",
				"reasoning":{"effort":"high","summary":"auto"},"store":false,"background":true,"metadata":{"k":"v"},
				"include":["reasoning.encrypted_content"],"prompt_cache_key":"abc","previous_response_id":null,
				"text":{"verbosity":"low"},"truncation":"auto","service_tier":"auto"}`,
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":512,"temperature":0.2,"top_p":0.9,"user":"u1","reasoning_effort":"high"}`,
		},
		{
			name: "stream asks for usage",
			in:   `{"input":"x","stream":true}`,
			want: `{"messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "stream false",
			in:   `{"input":"x","stream":false,"previous_response_id":""}`,
			want: `{"messages":[{"role":"user","content":"x"}]}`,
		},
		{
			name: "json_schema text format",
			in:   `{"input":"x","text":{"format":{"type":"json_schema","name":"out","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"out","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`,
		},
		{
			name: "json_object and text formats",
			in:   `{"input":"x","text":{"format":{"type":"json_object"}}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
		},
		{
			name: "plain text format adds nothing",
			in:   `{"input":"x","text":{"format":{"type":"text"}}}`,
			want: `{"messages":[{"role":"user","content":"x"}]}`,
		},
		{
			name: "custom (freeform) tool offered as a one-string function, its history round-trips",
			in: `{"input":[
				{"type":"custom_tool_call","call_id":"c9","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"},
				{"type":"custom_tool_call_output","call_id":"c9","output":"Done!"}],
				"tools":[{"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}],
				"tool_choice":{"type":"custom","name":"apply_patch"}}`,
			want: `{"messages":[
				{"role":"assistant","tool_calls":[{"id":"c9","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** End Patch\"}"}}]},
				{"role":"tool","tool_call_id":"c9","content":"Done!"}],
				"tools":[{"type":"function","function":{"name":"apply_patch",
					"description":"Edit files.\n\nPass the tool's raw input as the string argument \"input\". It must match this lark grammar:\nstart: x",
					"parameters":` + customInputSchema + `}}],
				"tool_choice":{"type":"function","function":{"name":"apply_patch"}}}`,
		},
		{
			name: "Chat-shaped tool and image are accepted",
			in:   `{"input":[{"role":"user","content":[{"type":"input_image","image_url":{"url":"https://i"}}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
			want: `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://i"}}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
		},
		{
			name: "instructions as items",
			in:   `{"instructions":[{"role":"developer","content":"d"}],"input":"x"}`,
			want: `{"messages":[{"role":"system","content":"d"},{"role":"user","content":"x"}]}`,
		},
		{
			name: "text that needs escaping stays byte-exact",
			in:   `{"input":"<a href=\"x\">&amp;</a>\u2028\n\t"}`,
			want: `{"messages":[{"role":"user","content":"<a href=\"x\">&amp;</a>\u2028\n\t"}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RequestToChat([]byte(tc.in))
			if err != nil {
				t.Fatalf("RequestToChat: %v", err)
			}
			jsonEqual(t, got, tc.want)
		})
	}
}

func TestRequestToChatNoHTMLEscaping(t *testing.T) {
	got, err := RequestToChat([]byte(`{"input":"a<b>&c"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"a<b>&c"`) {
		t.Errorf("text was escaped: %s", got)
	}
}

func TestRequestToChatErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		param string // "" for a non-field error
	}{
		{"invalid JSON", `{"input":`, ""},
		{"not an object", `[1,2]`, ""},
		{"conversation", `{"input":"x","conversation":"conv_1"}`, "conversation"},
		{"prompt template", `{"prompt":{"id":"pmpt_1"}}`, "prompt"},
		{"previous_response_id not a string", `{"input":"x","previous_response_id":5}`, "previous_response_id"},
		{"model not a string", `{"model":1,"input":"x"}`, "model"},
		{"input a number", `{"input":5}`, "input"},
		{"item not an object", `{"input":["hi"]}`, "input[0]"},
		{"item without type or role", `{"input":[{"content":"x"}]}`, "input[0]"},
		{"type not a string", `{"input":[{"type":1}]}`, "input[0].type"},
		{"unknown role", `{"input":[{"role":"critic","content":"x"}]}`, "input[0].role"},
		{"role not a string", `{"input":[{"role":7,"content":"x"}]}`, "input[0].role"},
		{"content a number", `{"input":[{"role":"user","content":1}]}`, "input[0].content"},
		{"content part not an object", `{"input":[{"role":"user","content":[1]}]}`, "input[0].content[0]"},
		{"text part without text", `{"input":[{"role":"user","content":[{"type":"input_text"}]}]}`, "input[0].content[0].text"},
		{"image by file_id", `{"input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "input[0].content[0].file_id"},
		{"image without url", `{"input":[{"role":"user","content":[{"type":"input_image"}]}]}`, "input[0].content[0].image_url"},
		{"file by url", `{"input":[{"role":"user","content":[{"type":"input_file","file_url":"https://f"}]}]}`, "input[0].content[0].file_url"},
		{"empty file", `{"input":[{"role":"user","content":[{"type":"input_file"}]}]}`, "input[0].content[0]"},
		{"audio not an object", `{"input":[{"role":"user","content":[{"type":"input_audio","input_audio":"x"}]}]}`, "input[0].content[0].input_audio"},
		{"function_call without call_id", `{"input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id"},
		{"function_call without name", `{"input":[{"type":"function_call","call_id":"c","arguments":"{}"}]}`, "input[0].name"},
		{"function_call_output without call_id", `{"input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id"},
		{"local_shell_call without ids", `{"input":[{"type":"local_shell_call","action":{}}]}`, "input[0].call_id"},
		{"local_shell_call_output without ids", `{"input":[{"type":"local_shell_call_output","output":"x"}]}`, "input[0].call_id"},
		{"item_reference", `{"input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]"},
		{"instructions a number", `{"instructions":1,"input":"x"}`, "instructions"},
		{"tools not an array", `{"input":"x","tools":{}}`, "tools"},
		{"tool not an object", `{"input":"x","tools":[1]}`, "tools[0]"},
		{"function tool without name", `{"input":"x","tools":[{"type":"function"}]}`, "tools[0].name"},
		{"custom tool without name", `{"input":"x","tools":[{"type":"custom"}]}`, "tools[0].name"},
		{"tool_choice unknown string", `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":"sometimes"}`, "tool_choice"},
		{"tool_choice a number", `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":1}`, "tool_choice"},
		{"tool_choice function without name", `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function"}}`, "tool_choice.name"},
		{"allowed_tools bad mode", `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"allowed_tools","mode":"none","tools":[]}}`, "tool_choice.mode"},
		{"parallel_tool_calls a string", `{"input":"x","tools":[{"type":"function","name":"f"}],"parallel_tool_calls":"yes"}`, "parallel_tool_calls"},
		{"temperature a string", `{"input":"x","temperature":"hot"}`, "temperature"},
		{"max_output_tokens a string", `{"input":"x","max_output_tokens":"many"}`, "max_output_tokens"},
		{"user a number", `{"input":"x","user":1}`, "user"},
		{"effort a number", `{"input":"x","reasoning":{"effort":3}}`, "reasoning.effort"},
		{"stream a string", `{"input":"x","stream":"yes"}`, "stream"},
		{"text.format a string", `{"input":"x","text":{"format":"json"}}`, "text.format"},
		{"text.format unknown type", `{"input":"x","text":{"format":{"type":"yaml"}}}`, "text.format.type"},
		{"json_schema without schema", `{"input":"x","text":{"format":{"type":"json_schema","name":"n"}}}`, "text.format.schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RequestToChat([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error; got %s", out)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FieldError", err, err)
			}
			if fe.Param != tc.param {
				t.Errorf("param %q, want %q (%v)", fe.Param, tc.param, err)
			}
			if fe.Error() == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestRequestToChatPreviousResponse(t *testing.T) {
	_, err := RequestToChat([]byte(`{"model":"m","input":"x","previous_response_id":"resp_123"}`))
	if err != ErrPreviousResponse { //nolint:errorlint // the gateway compares with ==
		t.Fatalf("err = %v, want ErrPreviousResponse", err)
	}
	if !errors.Is(err, ErrPreviousResponse) || !strings.Contains(err.Error(), "previous_response_id") {
		t.Errorf("err = %v", err)
	}
	if CodePreviousResponseUnsupported != "PREVIOUS_RESPONSE_UNSUPPORTED" {
		t.Error("code changed")
	}
}
