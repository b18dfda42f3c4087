package gemini

import (
	"errors"
	"strings"
	"testing"
)

func TestRequestToChat(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		model  string
		stream bool
		want   map[string]string
	}{
		{
			name:  "model, stream and a plain user turn",
			body:  `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			model: "gpt-x", stream: true,
			want: map[string]string{
				"model": `"gpt-x"`, "stream": `true`, "stream_options": `{"include_usage":true}`,
				"messages": `[{"role":"user","content":"hi"}]`,
			},
		},
		{
			name: "a content without role is a user turn",
			body: `{"contents":[{"parts":[{"text":"a"},{"text":"b"}]}]}`,
			want: map[string]string{"messages.0": `{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
		},
		{
			name: "systemInstruction parts join into one system message",
			body: `{"systemInstruction":{"role":"user","parts":[{"text":"one"},{"text":"two"}]},"contents":[{"role":"user","parts":[{"text":"q"}]}]}`,
			want: map[string]string{"messages.0": `{"role":"system","content":"one\n\ntwo"}`, "messages.1.role": `"user"`},
		},
		{
			name: "snake_case names are read too",
			body: `{"system_instruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"inline_data":{"mime_type":"image/png","data":"AA"}}]}],"generation_config":{"max_output_tokens":7,"stop_sequences":["x"]}}`,
			want: map[string]string{
				"messages.0.content": `"s"`,
				"messages.1.content": `[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]`,
				"max_tokens":         `7`, "stop": `["x"]`,
			},
		},
		{
			name: "inline PDF is a file part, an http image in fileData an image_url",
			body: `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"application/pdf","data":"JVBER"}},{"fileData":{"mimeType":"image/jpeg","fileUri":"https://x/y.jpg"}}]}]}`,
			want: map[string]string{
				"messages.0.content.0": `{"type":"file","file":{"filename":"document.pdf","file_data":"data:application/pdf;base64,JVBER"}}`,
				"messages.0.content.1": `{"type":"image_url","image_url":{"url":"https://x/y.jpg"}}`,
			},
		},
		{
			name: "model turn: text, thoughts, calls with and without ids, signatures kept",
			body: `{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"text":"plan","thought":true},{"text":"ok"},{"functionCall":{"id":"fc-1","name":"ls","args":{"d":"."}},"thoughtSignature":"SIG"},{"functionCall":{"name":"cat","args":{"f":"a"}}}]},
				{"role":"user","parts":[{"functionResponse":{"name":"cat","response":{"output":"file a"}}},{"functionResponse":{"id":"fc-1","name":"ls","response":{"error":"denied"}}}]}]}`,
			want: map[string]string{
				"messages.1.role":              `"assistant"`,
				"messages.1.content":           `"ok"`,
				"messages.1.reasoning_content": `"plan"`,
				"messages.1.tool_calls.0":      `{"id":"fc-1","type":"function","function":{"name":"ls","arguments":"{\"d\":\".\"}"},"extra_content":{"google":{"thought_signature":"SIG"}}}`,
				"messages.1.tool_calls.1":      `{"id":"gcall_1_3","type":"function","function":{"name":"cat","arguments":"{\"f\":\"a\"}"}}`,
				"messages.2":                   `{"role":"tool","tool_call_id":"gcall_1_3","content":"file a"}`,
				"messages.3":                   `{"role":"tool","tool_call_id":"fc-1","content":"Error: denied"}`,
				"messages.4":                   absent,
			},
		},
		{
			name: "responses without ids match calls by name, then by order",
			body: `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"a"}},{"functionCall":{"name":"b"}},{"functionCall":{"name":"a"}}]},
				{"role":"user","parts":[{"functionResponse":{"name":"a","response":{"x":1}}},{"functionResponse":{"name":"zzz","response":{}}},{"functionResponse":{"name":"a","response":{}}}]}]}`,
			want: map[string]string{
				"messages.0.tool_calls.#.id":                 `["gcall_0_0","gcall_0_1","gcall_0_2"]`,
				"messages.0.tool_calls.0.function.arguments": `"{}"`,
				"messages.1": `{"role":"tool","tool_call_id":"gcall_0_0","content":"{\"x\":1}"}`,
				"messages.2": `{"role":"tool","tool_call_id":"gcall_0_1","content":"{}"}`,
				"messages.3": `{"role":"tool","tool_call_id":"gcall_0_2","content":"{}"}`,
			},
		},
		{
			name: "a user turn with a response and text: tool message first",
			body: `{"contents":[{"role":"model","parts":[{"functionCall":{"id":"c","name":"f"}}]},{"role":"user","parts":[{"text":"and now?"},{"functionResponse":{"id":"c","name":"f","response":{"output":"r"}}}]}]}`,
			want: map[string]string{
				"messages.1": `{"role":"tool","tool_call_id":"c","content":"r"}`,
				"messages.2": `{"role":"user","content":"and now?"}`,
			},
		},
		{
			name: "tools: declarations with parameters, parametersJsonSchema; hosted tools dropped",
			body: `{"contents":[],"tools":[{"functionDeclarations":[{"name":"f","description":"d","parameters":{"type":"OBJECT","properties":{"p":{"type":"STRING","nullable":true,"format":"enum","enum":["a"]}},"required":["p"],"propertyOrdering":["p"]}},{"name":"g","parametersJsonSchema":{"type":"object","additionalProperties":false}},{"name":"h"}]},{"googleSearch":{}},{"codeExecution":{}}]}`,
			want: map[string]string{
				"tools.#":                      `3`,
				"tools.0":                      `{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"p":{"type":["string","null"],"enum":["a"]}},"required":["p"]}}}`,
				"tools.1.function.parameters":  `{"type":"object","additionalProperties":false}`,
				"tools.2.function.parameters":  `{"type":"object","properties":{}}`,
				"tools.2.function.description": absent,
			},
		},
		{
			name: "functionCallingConfig ANY with one name is a named choice",
			body: `{"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}}`,
			want: map[string]string{"tool_choice": `{"type":"function","function":{"name":"f"}}`},
		},
		{
			name: "functionCallingConfig ANY, NONE, AUTO",
			body: `{"tools":[{"functionDeclarations":[{"name":"f"}]}],"tool_config":{"function_calling_config":{"mode":"ANY"}}}`,
			want: map[string]string{"tool_choice": `"required"`},
		},
		{
			name: "NONE",
			body: `{"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`,
			want: map[string]string{"tool_choice": `"none"`},
		},
		{
			name: "tool config without tools is dropped",
			body: `{"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`,
			want: map[string]string{"tool_choice": absent, "tools": absent},
		},
		{
			name: "generationConfig sampling and limits",
			body: `{"generationConfig":{"temperature":0.3,"topP":0.9,"topK":40,"maxOutputTokens":"100","candidateCount":2,"presencePenalty":0.1,"frequencyPenalty":0.2,"seed":7,"stopSequences":["a","b"]}}`,
			want: map[string]string{
				"temperature": `0.3`, "top_p": `0.9`, "top_k": absent, "max_tokens": `100`, "n": `2`,
				"presence_penalty": `0.1`, "frequency_penalty": `0.2`, "seed": `7`, "stop": `["a","b"]`,
			},
		},
		{
			name: "candidateCount 1 is not n",
			body: `{"generationConfig":{"candidateCount":1}}`,
			want: map[string]string{"n": absent},
		},
		{
			name: "responseMimeType JSON alone is json_object",
			body: `{"generationConfig":{"responseMimeType":"application/json"}}`,
			want: map[string]string{"response_format": `{"type":"json_object"}`},
		},
		{
			name: "responseSchema is json_schema",
			body: `{"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"ARRAY","items":{"type":"INTEGER"}}}}`,
			want: map[string]string{"response_format": `{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"array","items":{"type":"integer"}}}}`},
		},
		{
			name: "responseJsonSchema passes as it is",
			body: `{"generationConfig":{"responseJsonSchema":{"type":"object","$defs":{}}}}`,
			want: map[string]string{"response_format.json_schema.schema": `{"type":"object","$defs":{}}`},
		},
		{
			name: "text/plain has no response_format",
			body: `{"generationConfig":{"responseMimeType":"text/plain"}}`,
			want: map[string]string{"response_format": absent},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := RequestToChat([]byte(tt.body), tt.model, tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, out, tt.want)
		})
	}
}

func TestRequestToChatThinking(t *testing.T) {
	tests := []struct {
		cfg, want string
	}{
		{`{"thinkingBudget":0}`, `"none"`},
		{`{"thinkingBudget":-1}`, absent},
		{`{"thinkingBudget":1}`, `"low"`},
		{`{"thinkingBudget":4095}`, `"low"`},
		{`{"thinkingBudget":4096}`, `"medium"`},
		{`{"thinkingBudget":16383}`, `"medium"`},
		{`{"thinkingBudget":16384}`, `"high"`},
		{`{"thinkingBudget":32768,"includeThoughts":true}`, `"high"`},
		{`{"thinkingLevel":"HIGH"}`, `"high"`},
		{`{"thinkingLevel":"low","thinkingBudget":30000}`, `"low"`},
		{`{"includeThoughts":true}`, absent},
		{`{"thinking_budget":2000}`, `"low"`},
	}
	for _, tt := range tests {
		out, err := RequestToChat([]byte(`{"generationConfig":{"thinkingConfig":`+tt.cfg+`}}`), "m", false)
		if err != nil {
			t.Fatalf("%s: %v", tt.cfg, err)
		}
		checkPaths(t, out, map[string]string{"reasoning_effort": tt.want})
	}
}

func TestRequestToChatErrors(t *testing.T) {
	tests := []struct {
		body, field string
	}{
		{`[]`, ""},
		{`{"contents":{}}`, "contents"},
		{`{"contents":[1]}`, "contents[0]"},
		{`{"contents":[{"role":"system","parts":[]}]}`, "contents[0].role"},
		{`{"contents":[{"role":"user","parts":[{"text":1}]}]}`, "contents[0].parts[0].text"},
		{`{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "contents[0].parts[0].functionCall.name"},
		{`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "contents[0].parts[0].functionCall.args"},
		{`{"contents":[{"role":"user","parts":[{"fileData":{"mimeType":"application/pdf","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc"}}]}]}`, "contents[0].parts[0].fileData"},
		{`{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"text/plain","data":"aGk="}}]}]}`, "contents[0].parts[0].inlineData"},
		{`{"systemInstruction":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA"}}]}}`, "systemInstruction.parts[0]"},
		{`{"tools":[{"functionDeclarations":[{"description":"x"}]}]}`, "tools[0].functionDeclarations[0].name"},
		{`{"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "toolConfig.functionCallingConfig.mode"},
		{`{"generationConfig":{"maxOutputTokens":1.5}}`, "generationConfig.maxOutputTokens"},
		{`{"contents":[{"parts":[{"functionCall":{}}]}]}`, "contents[0].parts[0].functionCall"},
		{`{"contents":[{"role":"model","parts":[{"functionResponse":{"name":"f"}}]}]}`, "contents[0].parts[0].functionResponse"},
		{`{"generationConfig":{"stopSequences":"x"}}`, "generationConfig.stopSequences"},
	}
	for _, tt := range tests {
		_, err := RequestToChat([]byte(tt.body), "m", false)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: want an InputError, got %v", tt.body, err)
		}
		if ie.Field != tt.field {
			t.Errorf("%s: field %q, want %q (%v)", tt.body, ie.Field, tt.field, err)
		}
	}
}

func TestRequestFromChat(t *testing.T) {
	tests := []struct {
		name string
		body string
		want map[string]string
	}{
		{
			name: "system and developer messages become systemInstruction; no model, no stream",
			body: `{"model":"gemini-2.5-pro","stream":true,"messages":[{"role":"system","content":"s1"},{"role":"user","content":"hi"},{"role":"developer","content":[{"type":"text","text":"s2"}]}]}`,
			want: map[string]string{
				"systemInstruction": `{"parts":[{"text":"s1"},{"text":"s2"}]}`,
				"contents":          `[{"role":"user","parts":[{"text":"hi"}]}]`,
				"model":             absent, "stream": absent, "generationConfig": absent,
			},
		},
		{
			name: "images: data URL → inlineData, http URL → fileData; PDF file → inlineData",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/webp;base64,UklG"}},{"type":"image_url","image_url":{"url":"https://h/p.PNG?x=1"}},{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBER"}}]}]}`,
			want: map[string]string{
				"contents.0.parts": `[{"text":"look"},{"inlineData":{"mimeType":"image/webp","data":"UklG"}},{"fileData":{"mimeType":"image/png","fileUri":"https://h/p.PNG?x=1"}},{"inlineData":{"mimeType":"application/pdf","data":"JVBER"}}]`,
			},
		},
		{
			name: "tool round trip: ids kept, synthetic ids dropped, names from the call, signature placeholder",
			body: `{"messages":[{"role":"user","content":"go"},
				{"role":"assistant","content":"on it","reasoning_content":"think","tool_calls":[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\"d\":\".\"}"}},{"id":"gcall_1_3","type":"function","function":{"name":"cat","arguments":"not json"},"extra_content":{"google":{"thought_signature":"SIG2"}}}]},
				{"role":"tool","tool_call_id":"call_1","content":"a\nb"},
				{"role":"tool","tool_call_id":"gcall_1_3","content":"{\"ok\":true}"},
				{"role":"user","content":"thanks"}]}`,
			want: map[string]string{
				"contents.#":       `3`,
				"contents.1.role":  `"model"`,
				"contents.1.parts": `[{"text":"on it"},{"functionCall":{"id":"call_1","name":"ls","args":{"d":"."}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"name":"cat","args":{"_arguments":"not json"}},"thoughtSignature":"SIG2"}]`,
				"contents.2.role":  `"user"`,
				"contents.2.parts": `[{"functionResponse":{"id":"call_1","name":"ls","response":{"output":"a\nb"}}},{"functionResponse":{"name":"cat","response":{"ok":true}}},{"text":"thanks"}]`,
			},
		},
		{
			name: "a call's own signature is kept on the first call",
			body: `{"messages":[{"role":"assistant","tool_calls":[{"id":"x","function":{"name":"f","arguments":""},"extra_content":{"google":{"thought_signature":"S"}}}]}]}`,
			want: map[string]string{"contents.0.parts.0": `{"functionCall":{"id":"x","name":"f","args":{}},"thoughtSignature":"S"}`},
		},
		{
			name: "tools: schema cut to Gemini's subset; empty object parameters left out",
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,"properties":{"a":{"type":["string","null"],"format":"uri","minLength":1},"b":{"const":"x"},"c":{"oneOf":[{"type":"integer","exclusiveMinimum":0},{"type":"null"}]},"d":{"type":"object","properties":{}},"e":{"type":"integer","enum":[1,2]},"f":{"type":"array","items":{"$ref":"#/x","type":"string"}}},"required":["a","zz"]}}},{"type":"function","function":{"name":"g","parameters":{"type":"object","properties":{}}}},{"type":"custom","custom":{"name":"apply_patch"}}],"tool_choice":"required"}`,
			want: map[string]string{
				"tools": `[{"functionDeclarations":[{"name":"f","description":"d","parameters":{"type":"object","properties":{
					"a":{"type":"string","nullable":true,"minLength":1},
					"b":{"type":"string","enum":["x"],"format":"enum"},
					"c":{"type":"integer","nullable":true},
					"d":{"type":"object"},
					"e":{"type":"integer"},
					"f":{"type":"array","items":{"type":"string"}}},"required":["a"]}},{"name":"g"}]}]`,
				"toolConfig": `{"functionCallingConfig":{"mode":"ANY"}}`,
			},
		},
		{
			name: "named tool_choice",
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
			want: map[string]string{"toolConfig": `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}`},
		},
		{
			name: "tool_choice none and auto",
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"}`,
			want: map[string]string{"toolConfig.functionCallingConfig.mode": `"NONE"`},
		},
		{
			name: "sampling, limits, stop (at most 5)",
			body: `{"messages":[{"role":"user","content":"hi"}],"max_tokens":50,"max_completion_tokens":60,"temperature":1.5,"top_p":0.5,"n":2,"seed":3,"presence_penalty":0.5,"frequency_penalty":-0.5,"stop":["1","2","","3","4","5","6"],"user":"u","parallel_tool_calls":false}`,
			want: map[string]string{
				"generationConfig": `{"maxOutputTokens":60,"temperature":1.5,"topP":0.5,"candidateCount":2,"seed":3,"presencePenalty":0.5,"frequencyPenalty":-0.5,"stopSequences":["1","2","3","4","5"]}`,
				"user":             absent,
			},
		},
		{
			name: "stop as a string",
			body: `{"messages":[{"role":"user","content":"hi"}],"stop":"END"}`,
			want: map[string]string{"generationConfig.stopSequences": `["END"]`},
		},
		{
			name: "response_format json_schema",
			body: `{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"n":{"type":"number"}},"additionalProperties":false}}}}`,
			want: map[string]string{"generationConfig": `{"responseMimeType":"application/json","responseSchema":{"type":"object","properties":{"n":{"type":"number"}}}}`},
		},
		{
			name: "response_format json_object",
			body: `{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`,
			want: map[string]string{"generationConfig": `{"responseMimeType":"application/json"}`},
		},
		{
			name: "empty messages are left out (Gemini reads {\"text\":\"\"} as a part without data)",
			body: `{"messages":[{"role":"user","content":""},{"role":"user","content":"q"},{"role":"assistant","content":""},{"role":"user","content":[{"type":"text","text":""}]}]}`,
			want: map[string]string{"contents": `[{"role":"user","parts":[{"text":"q"}]}]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := RequestFromChat([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, out, tt.want)
		})
	}
}

func TestRequestFromChatThinking(t *testing.T) {
	tests := []struct {
		fields, want string
	}{
		{`"reasoning_effort":"none"`, `{"thinkingBudget":0}`},
		{`"reasoning_effort":"minimal"`, `{"includeThoughts":true,"thinkingBudget":512}`},
		{`"reasoning_effort":"low"`, `{"includeThoughts":true,"thinkingBudget":1024}`},
		{`"reasoning_effort":"medium"`, `{"includeThoughts":true,"thinkingBudget":8192}`},
		{`"reasoning_effort":"high"`, `{"includeThoughts":true,"thinkingBudget":24576}`},
		{`"reasoning_effort":"xhigh"`, `{"includeThoughts":true,"thinkingBudget":24576}`},
		{`"reasoning_effort":"weird"`, absent},
		{`"reasoning":{"max_tokens":3000}`, `{"includeThoughts":true,"thinkingBudget":3000}`},
		{`"reasoning":{"effort":"low"}`, `{"includeThoughts":true,"thinkingBudget":1024}`},
		{`"reasoning":{"enabled":false}`, `{"thinkingBudget":0}`},
	}
	for _, tt := range tests {
		out, err := RequestFromChat([]byte(`{"messages":[{"role":"user","content":"hi"}],` + tt.fields + `}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.fields, err)
		}
		checkPaths(t, out, map[string]string{"generationConfig.thinkingConfig": tt.want})
	}
}

func TestRequestFromChatErrors(t *testing.T) {
	tests := []struct {
		body, field string
	}{
		{`{}`, "messages"},
		{`{"messages":[]}`, "messages"},
		{`{"messages":[{"role":"system","content":"s"},{"role":"user","content":""}]}`, "messages"},
		{`{"messages":[{"role":"tool","tool_call_id":"nope","content":"x"}]}`, "messages[0].tool_call_id"},
		{`{"messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id"},
		{`{"messages":[{"role":"wizard"}]}`, "messages[0].role"},
		{`{"messages":[{"role":"user","content":[{"type":"input_audio"}]}]}`, "messages[0].content[0].type"},
		{`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,raw"}}]}]}`, "messages[0].content[0].image_url.url"},
		{`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].function.name"},
		{`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"sometimes"}`, "tool_choice"},
		{`{"messages":[{"role":"user","content":"hi"}],"stop":[1]}`, "stop[0]"},
		{`{"messages":[{"role":"user","content":"hi"}],"max_tokens":"many"}`, "max_tokens"},
	}
	for _, tt := range tests {
		_, err := RequestFromChat([]byte(tt.body))
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: want an InputError, got %v", tt.body, err)
		}
		if ie.Field != tt.field {
			t.Errorf("%s: field %q, want %q (%v)", tt.body, ie.Field, tt.field, err)
		}
	}
}

// A named tool message (the legacy form) gives the name when no call has the id.
func TestRequestFromChatNamedToolMessage(t *testing.T) {
	out, err := RequestFromChat([]byte(`{"messages":[{"role":"tool","tool_call_id":"x","name":"f","content":"r"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"functionResponse":{"id":"x","name":"f","response":{"output":"r"}}`) {
		t.Fatalf("got %s", out)
	}
}
