package responses

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// normalizeIDs replaces generated ids with "<prefix>_ID", so a want can spell
// them as placeholders.
func normalizeIDs(b []byte) []byte {
	return regexp.MustCompile(`"(resp|msg|rs|fc|ctc)_[0-9a-f]{24}"`).ReplaceAll(b, []byte(`"${1}_ID"`))
}

// echoDefaults is what a response echoes for a request that set nothing.
const echoDefaults = `"background":false,"error":null,"instructions":null,"max_output_tokens":null,
	"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},
	"store":false,"temperature":null,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],
	"top_p":null,"truncation":"disabled","metadata":{}`

func TestResponseFromChat(t *testing.T) {
	tests := []struct {
		name string
		chat string
		req  string
		want string
	}{
		{
			name: "text with usage details",
			chat: `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"qwen3-coder",
				"choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,
					"prompt_tokens_details":{"cached_tokens":60},"completion_tokens_details":{"reasoning_tokens":5}}}`,
			req: `{"model":"alias","input":"hi"}`,
			want: `{"id":"resp_ID","object":"response","created_at":1700000000,"status":"completed",` + echoDefaults + `,
				"incomplete_details":null,"model":"qwen3-coder",
				"output":[{"id":"msg_ID","type":"message","status":"completed","role":"assistant",
					"content":[{"type":"output_text","text":"Hello!","annotations":[],"logprobs":[]}]}],
				"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":60},"output_tokens":20,
					"output_tokens_details":{"reasoning_tokens":5},"total_tokens":120}}`,
		},
		{
			name: "reasoning, text and two tool calls, in that order",
			chat: `{"created":1,"model":"deepseek-reasoner","choices":[{"message":{"role":"assistant",
				"reasoning_content":"Let me look.","content":"Checking.",
				"tool_calls":[
					{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}},
					{"id":"call_2","type":"function","function":{"name":"read","arguments":"{}"}}]},
				"finish_reason":"tool_calls"}],
				"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_cache_hit_tokens":4}}`,
			req: `{"model":"m","input":"x"}`,
			want: `{"id":"resp_ID","object":"response","created_at":1,"status":"completed",` + echoDefaults + `,
				"incomplete_details":null,"model":"deepseek-reasoner","output":[
					{"id":"rs_ID","type":"reasoning","summary":[{"type":"summary_text","text":"Let me look."}]},
					{"id":"msg_ID","type":"message","status":"completed","role":"assistant",
						"content":[{"type":"output_text","text":"Checking.","annotations":[],"logprobs":[]}]},
					{"id":"fc_ID","type":"function_call","status":"completed","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1","name":"shell"},
					{"id":"fc_ID","type":"function_call","status":"completed","arguments":"{}","call_id":"call_2","name":"read"}],
				"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":5,
					"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}}`,
		},
		{
			name: "length finish is incomplete for max_output_tokens; the echo follows the request",
			chat: `{"created":2,"model":"m","choices":[{"message":{"content":"Once upon a"},"finish_reason":"length"}]}`,
			req: `{"model":"m","instructions":"tell","input":"story","max_output_tokens":3,"temperature":0.5,"top_p":1,
				"reasoning":{"effort":"low"},"tools":[{"type":"function","name":"f"}],"tool_choice":"none",
				"parallel_tool_calls":false,"store":true,"background":true,"metadata":{"a":"b"},"user":"u",
				"text":{"format":{"type":"json_object"}},"truncation":"auto"}`,
			want: `{"id":"resp_ID","object":"response","created_at":2,"status":"incomplete",
				"background":true,"error":null,"incomplete_details":{"reason":"max_output_tokens"},
				"instructions":"tell","max_output_tokens":3,"model":"m",
				"output":[{"id":"msg_ID","type":"message","status":"incomplete","role":"assistant",
					"content":[{"type":"output_text","text":"Once upon a","annotations":[],"logprobs":[]}]}],
				"parallel_tool_calls":false,"previous_response_id":null,"reasoning":{"effort":"low","summary":null},
				"store":true,"temperature":0.5,"text":{"format":{"type":"json_object"}},"tool_choice":"none",
				"tools":[{"type":"function","name":"f"}],"top_p":1,"truncation":"auto","usage":null,"user":"u",
				"metadata":{"a":"b"}}`,
		},
		{
			name: "content_filter finish; refusal part; content as parts; model from the request",
			chat: `{"created":3,"choices":[{"message":{"content":[{"type":"text","text":"Part "},{"type":"text","text":"two"}],"refusal":"No."},"finish_reason":"content_filter"}]}`,
			req:  `{"model":"requested","input":"x"}`,
			want: `{"id":"resp_ID","object":"response","created_at":3,"status":"incomplete",` + echoDefaults + `,
				"incomplete_details":{"reason":"content_filter"},"model":"requested",
				"output":[{"id":"msg_ID","type":"message","status":"incomplete","role":"assistant","content":[
					{"type":"output_text","text":"Part two","annotations":[],"logprobs":[]},
					{"type":"refusal","refusal":"No."}]}],"usage":null}`,
		},
		{
			name: "custom tool call comes back as custom_tool_call with the decoded input",
			chat: `{"created":4,"model":"m","choices":[{"message":{"content":null,"tool_calls":[
				{"id":"call_p","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** End Patch\"}"}},
				{"type":"function","function":{"name":"shell","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			req: `{"model":"m","input":"x","tools":[{"type":"custom","name":"apply_patch"},{"type":"function","name":"shell"}]}`,
			want: `{"id":"resp_ID","object":"response","created_at":4,"status":"completed",` +
				strings.Replace(echoDefaults, `"tools":[]`, `"tools":[{"type":"custom","name":"apply_patch"},{"type":"function","name":"shell"}]`, 1) + `,
				"incomplete_details":null,"model":"m","output":[
					{"id":"ctc_ID","type":"custom_tool_call","status":"completed","call_id":"call_p","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"},
					{"id":"fc_ID","type":"function_call","status":"completed","arguments":"{}","call_id":"CALL","name":"shell"}],
				"usage":null}`,
		},
		{
			name: "no choices and an unparsable request",
			chat: `{"created":5,"model":"m","choices":[]}`,
			req:  `{not json`,
			want: `{"id":"resp_ID","object":"response","created_at":5,"status":"completed",` + echoDefaults + `,
				"incomplete_details":null,"model":"m","output":[],"usage":null}`,
		},
		{
			name: "legacy function_call and reasoning field",
			chat: `{"created":6,"model":"m","choices":[{"message":{"reasoning":"hmm","function_call":{"name":"f","arguments":"{\"x\":1}"}},"finish_reason":"function_call"}]}`,
			req:  `{}`,
			want: `{"id":"resp_ID","object":"response","created_at":6,"status":"completed",` + echoDefaults + `,
				"incomplete_details":null,"model":"m","output":[
					{"id":"rs_ID","type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}]},
					{"id":"fc_ID","type":"function_call","status":"completed","arguments":"{\"x\":1}","call_id":"CALL","name":"f"}],
				"usage":null}`,
		},
	}
	callRE := regexp.MustCompile(`"call_[0-9a-f]{24}"`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResponseFromChat([]byte(tc.chat), []byte(tc.req))
			if err != nil {
				t.Fatalf("ResponseFromChat: %v", err)
			}
			if strings.Contains(string(got), `"output_text":`) {
				t.Error("output_text convenience field must not be on the wire")
			}
			got = callRE.ReplaceAll(normalizeIDs(got), []byte(`"CALL"`))
			jsonEqual(t, got, tc.want)
		})
	}
}

func TestResponseFromChatIDs(t *testing.T) {
	chat := `{"choices":[{"message":{"reasoning_content":"r","content":"t","tool_calls":[
		{"id":"a","function":{"name":"f","arguments":"{}"}},{"id":"b","function":{"name":"f","arguments":"{}"}}]}}]}`
	got, err := ResponseFromChat([]byte(chat), nil)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID     string `json:"id"`
		Output []struct {
			ID     string `json:"id"`
			CallID string `json:"call_id"`
		} `json:"output"`
	}
	if err := json.Unmarshal(got, &resp); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{resp.ID: true}
	if !strings.HasPrefix(resp.ID, "resp_") {
		t.Errorf("id %q", resp.ID)
	}
	prefixes := []string{"rs_", "msg_", "fc_", "fc_"}
	calls := []string{"", "", "a", "b"}
	for i, o := range resp.Output {
		if !strings.HasPrefix(o.ID, prefixes[i]) || seen[o.ID] {
			t.Errorf("output[%d].id %q", i, o.ID)
		}
		seen[o.ID] = true
		if o.CallID != calls[i] {
			t.Errorf("output[%d].call_id %q, want %q", i, o.CallID, calls[i])
		}
	}
}

func TestResponseFromChatErrors(t *testing.T) {
	tests := []struct {
		name, chat, code, msg string
	}{
		{"invalid JSON", `{"choices":`, CodeMalformedResponse, "not valid JSON"},
		{"not an object", `"hello"`, CodeMalformedResponse, "not a JSON object"},
		{"error object with code", `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`, "context_length_exceeded", "too long"},
		{"error object with type only", `{"error":{"message":"busy","type":"overloaded_error"}}`, "overloaded_error", "busy"},
		{"error object with numeric code", `{"error":{"message":"rate","code":429}}`, "429", "rate"},
		{"error string", `{"error":"boom"}`, CodeUpstreamError, "boom"},
		{"error without message", `{"error":{"x":1}}`, CodeUpstreamError, `{"x":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResponseFromChat([]byte(tc.chat), nil)
			var ue *UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("err %T %v, want *UpstreamError", err, err)
			}
			if ue.Code != tc.code || !strings.Contains(ue.Message, tc.msg) || !strings.Contains(ue.Error(), tc.code) {
				t.Errorf("got %+v, want code %q message ~%q", ue, tc.code, tc.msg)
			}
		})
	}
}
