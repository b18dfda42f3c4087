package frames_test

import (
	"testing"

	"go.uber.org/goleak"

	"omniroute/backend/resilience/watchdog"
	"omniroute/backend/translate"
	"omniroute/backend/translate/frames"
	"omniroute/backend/translate/sse"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// classifyCase is one event and the frame it must classify as.
type classifyCase struct {
	name   string
	format translate.Format
	event  string // SSE event name
	data   string
	cmt    bool // SSE comment
	want   watchdog.Frame
}

// fr builds an expected Frame.
func fr(k watchdog.Kind, n int) watchdog.Frame { return watchdog.Frame{Kind: k, Bytes: n} }

// cases is the classification table for every format; the fuzz corpus reuses it.
func cases() []classifyCase {
	const (
		chat = translate.Chat
		msg  = translate.Messages
		resp = translate.Responses
		gem  = translate.Gemini
	)
	return []classifyCase{
		// Common rules.
		{name: "comment chat", format: chat, cmt: true, want: fr(watchdog.Heartbeat, 0)},
		{name: "comment messages", format: msg, cmt: true, want: fr(watchdog.Heartbeat, 0)},
		{name: "comment responses", format: resp, cmt: true, want: fr(watchdog.Heartbeat, 0)},
		{name: "done", format: chat, data: "[DONE]", want: fr(watchdog.End, 0)},
		{name: "done padded", format: chat, data: " [DONE] ", want: fr(watchdog.End, 0)},
		{name: "done in responses", format: resp, data: "[DONE]", want: fr(watchdog.End, 0)},
		{name: "error event beats malformed data", format: msg, event: "error", data: "{oops", want: fr(watchdog.Error, 0)},
		{name: "error event chat", format: chat, event: "error", data: `{"message":"x"}`, want: fr(watchdog.Error, 0)},
		{name: "malformed chat", format: chat, data: `{"choices":[{"delta":{"content":"hi"}}]`, want: fr(watchdog.Unknown, 0)},
		{name: "malformed messages", format: msg, event: "content_block_delta", data: `{"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}`, want: fr(watchdog.Unknown, 0)},
		{name: "malformed responses", format: resp, data: `{"type":"response.output_text.delta","delta":"hi"`, want: fr(watchdog.Unknown, 0)},
		{name: "not json", format: chat, data: "hello", want: fr(watchdog.Unknown, 0)},
		{name: "json array", format: chat, data: `[1,2]`, want: fr(watchdog.Unknown, 0)},
		{name: "json string", format: resp, data: `"x"`, want: fr(watchdog.Unknown, 0)},
		{name: "trailing garbage", format: chat, data: `{"choices":[]} x`, want: fr(watchdog.Unknown, 0)},
		{name: "empty data chat", format: chat, want: fr(watchdog.Heartbeat, 0)},
		{name: "unknown format reads as chat", format: "cohere", data: `{"choices":[{"delta":{"content":"hey"}}]}`, want: fr(watchdog.Content, 3)},

		// OpenAI Chat Completions.
		{name: "chat text", format: chat, data: `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}`, want: fr(watchdog.Content, 5)},
		{name: "chat text utf8", format: chat, data: `{"choices":[{"delta":{"content":"héllo 世界"}}]}`, want: fr(watchdog.Content, len("héllo 世界"))},
		{name: "chat text escaped", format: chat, data: `{"choices":[{"delta":{"content":"\u00e9\n\"x\""}}]}`, want: fr(watchdog.Content, len("é\n\"x\""))},
		{name: "chat surrogate pair", format: chat, data: `{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}`, want: fr(watchdog.Content, 4)},
		{name: "chat refusal", format: chat, data: `{"choices":[{"delta":{"refusal":"No."}}]}`, want: fr(watchdog.Content, 3)},
		{name: "legacy completion text", format: chat, data: `{"object":"text_completion","choices":[{"text":"def ","index":0,"finish_reason":null}]}`, want: fr(watchdog.Content, 4)},
		{name: "legacy completion end", format: chat, data: `{"choices":[{"text":"x","index":0,"finish_reason":"stop"}]}`, want: fr(watchdog.End, 1)},
		{name: "chat content parts", format: chat, data: `{"choices":[{"delta":{"content":[{"type":"text","text":"ab"},{"type":"text","text":"cd"}]}}]}`, want: fr(watchdog.Content, 4)},
		{name: "chat thinking part", format: chat, data: `{"choices":[{"delta":{"content":[{"type":"thinking","thinking":"hmm"}]}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "chat two choices", format: chat, data: `{"choices":[{"delta":{"content":"ab"}},{"delta":{"content":"cde"}}]}`, want: fr(watchdog.Content, 5)},
		{name: "chat role only", format: chat, data: `{"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat role and empty content", format: chat, data: `{"choices":[{"delta":{"role":"assistant","content":""}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat empty delta", format: chat, data: `{"choices":[{"delta":{}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat null content", format: chat, data: `{"choices":[{"delta":{"content":null}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat no choices", format: chat, data: `{"choices":[]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat empty object", format: chat, data: `{}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat choices not array", format: chat, data: `{"choices":{"delta":{"content":"x"}}}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat usage only", format: chat, data: `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}}`, want: fr(watchdog.Metadata, 0)},
		{name: "chat usage null", format: chat, data: `{"choices":[],"usage":null}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat tool call start", format: chat, data: `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":""}}]}}]}`, want: fr(watchdog.ToolCall, 0)},
		{name: "chat tool call args", format: chat, data: `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}}]}`, want: fr(watchdog.ToolCall, len(`{"q":`))},
		{name: "chat tool calls null", format: chat, data: `{"choices":[{"delta":{"tool_calls":null}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat tool calls empty", format: chat, data: `{"choices":[{"delta":{"tool_calls":[]}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat legacy function call", format: chat, data: `{"choices":[{"delta":{"function_call":{"name":"f","arguments":"{}"}}}]}`, want: fr(watchdog.ToolCall, 2)},
		{name: "chat reasoning_content", format: chat, data: `{"choices":[{"delta":{"reasoning_content":"Let me think"}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "chat reasoning_content empty (kiro signature)", format: chat, data: `{"choices":[{"delta":{"reasoning_content":""}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "chat reasoning_content null", format: chat, data: `{"choices":[{"delta":{"content":null,"reasoning_content":null}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat reasoning", format: chat, data: `{"choices":[{"delta":{"reasoning":"hm"}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "chat reasoning_details", format: chat, data: `{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"x"}]}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "chat reasoning_details empty", format: chat, data: `{"choices":[{"delta":{"reasoning_details":[]}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat thinking_blocks (redacted reasoning)", format: chat, data: `{"choices":[{"delta":{"thinking_blocks":[{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}]}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "chat thinking_blocks empty", format: chat, data: `{"choices":[{"delta":{"thinking_blocks":[]}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "chat content beats reasoning", format: chat, data: `{"choices":[{"delta":{"content":"ok","reasoning_content":""}}]}`, want: fr(watchdog.Content, 2)},
		{name: "chat tool beats reasoning", format: chat, data: `{"choices":[{"delta":{"reasoning_content":"x","tool_calls":[{"function":{"arguments":"{}"}}]}}]}`, want: fr(watchdog.ToolCall, 2)},
		{name: "chat finish reason", format: chat, data: `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, want: fr(watchdog.End, 0)},
		{name: "chat finish with text", format: chat, data: `{"choices":[{"delta":{"content":"bye"},"finish_reason":"length"}]}`, want: fr(watchdog.End, 3)},
		{name: "chat finish tool calls", format: chat, data: `{"choices":[{"delta":{},"finish_reason":"tool_calls"}],"usage":{"total_tokens":5}}`, want: fr(watchdog.End, 0)},
		{name: "chat finish empty string", format: chat, data: `{"choices":[{"delta":{"content":"a"},"finish_reason":""}]}`, want: fr(watchdog.Content, 1)},
		{name: "chat top-level error", format: chat, data: `{"error":{"message":"overloaded","type":"server_error"}}`, want: fr(watchdog.Error, 0)},
		{name: "chat error null", format: chat, data: `{"error":null,"choices":[{"delta":{"content":"a"}}]}`, want: fr(watchdog.Content, 1)},

		// Anthropic Messages.
		{name: "msg ping", format: msg, event: "ping", data: `{"type": "ping"}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "msg ping no data", format: msg, event: "ping", want: fr(watchdog.Heartbeat, 0)},
		{name: "msg message_start", format: msg, event: "message_start", data: `{"type":"message_start","message":{"id":"m","role":"assistant","content":[],"usage":{"input_tokens":5}}}`, want: fr(watchdog.Metadata, 0)},
		{name: "msg text block start", format: msg, event: "content_block_start", data: `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, want: fr(watchdog.Metadata, 0)},
		{name: "msg text block start with text", format: msg, data: `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}`, want: fr(watchdog.Content, 2)},
		{name: "msg thinking block start", format: msg, data: `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "msg redacted thinking start", format: msg, data: `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"xx"}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "msg tool_use start", format: msg, data: `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"get","input":{}}}`, want: fr(watchdog.ToolCall, 0)},
		{name: "msg server tool start", format: msg, data: `{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"t","name":"web_search"}}`, want: fr(watchdog.ToolCall, 0)},
		{name: "msg tool result block", format: msg, data: `{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","content":[]}}`, want: fr(watchdog.Metadata, 0)},
		{name: "msg text delta", format: msg, event: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello!"}}`, want: fr(watchdog.Content, 6)},
		{name: "msg text delta empty", format: msg, data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "msg input json delta", format: msg, data: `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"loc"}}`, want: fr(watchdog.ToolCall, 5)},
		{name: "msg input json delta empty", format: msg, data: `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "msg thinking delta", format: msg, data: `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "msg thinking delta empty", format: msg, data: `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "msg signature delta", format: msg, data: `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "msg signature delta empty", format: msg, data: `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":""}}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "msg citations delta", format: msg, data: `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`, want: fr(watchdog.Metadata, 0)},
		{name: "msg block stop", format: msg, data: `{"type":"content_block_stop","index":0}`, want: fr(watchdog.Metadata, 0)},
		{name: "msg message_delta", format: msg, event: "message_delta", data: `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`, want: fr(watchdog.Metadata, 0)},
		{name: "msg message_stop", format: msg, event: "message_stop", data: `{"type":"message_stop"}`, want: fr(watchdog.End, 0)},
		{name: "msg message_stop by event name", format: msg, event: "message_stop", want: fr(watchdog.End, 0)},
		{name: "msg error type", format: msg, data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, want: fr(watchdog.Error, 0)},
		{name: "msg type wins over event", format: msg, event: "message_start", data: `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`, want: fr(watchdog.Content, 1)},
		{name: "msg unknown type", format: msg, data: `{"type":"something_new"}`, want: fr(watchdog.Metadata, 0)},

		// OpenAI Responses.
		{name: "resp created", format: resp, event: "response.created", data: `{"type":"response.created","sequence_number":0,"response":{"id":"r","status":"in_progress"}}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp in_progress", format: resp, data: `{"type":"response.in_progress","response":{}}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp message item", format: resp, data: `{"type":"response.output_item.added","output_index":0,"item":{"type":"message","role":"assistant","content":[]}}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp content part", format: resp, data: `{"type":"response.content_part.added","part":{"type":"output_text","text":""}}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp text delta", format: resp, event: "response.output_text.delta", data: `{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"Hi there"}`, want: fr(watchdog.Content, 8)},
		{name: "resp text delta empty", format: resp, data: `{"type":"response.output_text.delta","delta":""}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "resp refusal delta", format: resp, data: `{"type":"response.refusal.delta","delta":"No"}`, want: fr(watchdog.Content, 2)},
		{name: "resp text done", format: resp, data: `{"type":"response.output_text.done","text":"Hi there"}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp annotation", format: resp, data: `{"type":"response.output_text.annotation.added","annotation":{}}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp reasoning item", format: resp, data: `{"type":"response.output_item.added","item":{"type":"reasoning","summary":[]}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "resp reasoning item done", format: resp, data: `{"type":"response.output_item.done","item":{"type":"reasoning","encrypted_content":"gAAA"}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "resp reasoning summary delta", format: resp, data: `{"type":"response.reasoning_summary_text.delta","delta":"**Plan**"}`, want: fr(watchdog.Reasoning, 0)},
		{name: "resp reasoning text delta", format: resp, data: `{"type":"response.reasoning_text.delta","delta":""}`, want: fr(watchdog.Reasoning, 0)},
		{name: "resp reasoning summary part", format: resp, data: `{"type":"response.reasoning_summary_part.added","part":{}}`, want: fr(watchdog.Reasoning, 0)},
		{name: "resp function call item", format: resp, data: `{"type":"response.output_item.added","item":{"type":"function_call","name":"f","arguments":""}}`, want: fr(watchdog.ToolCall, 0)},
		{name: "resp mcp item", format: resp, data: `{"type":"response.output_item.added","item":{"type":"mcp_list_tools"}}`, want: fr(watchdog.ToolCall, 0)},
		{name: "resp other item", format: resp, data: `{"type":"response.output_item.done","item":{"type":"compaction"}}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp item no type", format: resp, data: `{"type":"response.output_item.added"}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp function args delta", format: resp, data: `{"type":"response.function_call_arguments.delta","item_id":"fc","delta":"{\"a\":1"}`, want: fr(watchdog.ToolCall, 6)},
		{name: "resp function args delta empty", format: resp, data: `{"type":"response.function_call_arguments.delta","delta":""}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "resp function args done", format: resp, data: `{"type":"response.function_call_arguments.done","arguments":"{}"}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp custom tool input", format: resp, data: `{"type":"response.custom_tool_call_input.delta","delta":"ls"}`, want: fr(watchdog.ToolCall, 2)},
		{name: "resp code interpreter code", format: resp, data: `{"type":"response.code_interpreter_call_code.delta","delta":"x=1"}`, want: fr(watchdog.ToolCall, 3)},
		{name: "resp web search progress", format: resp, data: `{"type":"response.web_search_call.searching","item_id":"ws"}`, want: fr(watchdog.ToolCall, 0)},
		{name: "resp mcp list tools", format: resp, data: `{"type":"response.mcp_list_tools.in_progress"}`, want: fr(watchdog.ToolCall, 0)},
		{name: "resp completed", format: resp, event: "response.completed", data: `{"type":"response.completed","response":{"status":"completed","usage":{}}}`, want: fr(watchdog.End, 0)},
		{name: "resp incomplete", format: resp, data: `{"type":"response.incomplete","response":{"status":"incomplete"}}`, want: fr(watchdog.End, 0)},
		{name: "resp failed", format: resp, data: `{"type":"response.failed","response":{"status":"failed","error":{}}}`, want: fr(watchdog.Error, 0)},
		{name: "resp error", format: resp, data: `{"type":"error","code":"server_error","message":"boom"}`, want: fr(watchdog.Error, 0)},
		{name: "resp by event name", format: resp, event: "response.completed", want: fr(watchdog.End, 0)},
		{name: "resp unknown type", format: resp, data: `{"type":"response.audio.delta","delta":"AAAA"}`, want: fr(watchdog.Metadata, 0)},
		{name: "resp foreign type", format: resp, data: `{"type":"keepalive"}`, want: fr(watchdog.Metadata, 0)},

		// Gemini streamGenerateContent (alt=sse).
		{name: "gemini text", format: gem, data: `{"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3}}`, want: fr(watchdog.Content, 5)},
		{name: "gemini two text parts", format: gem, data: `{"candidates":[{"content":{"parts":[{"text":"ab"},{"text":"cé"}]}}]}`, want: fr(watchdog.Content, 5)},
		{name: "gemini thought", format: gem, data: `{"candidates":[{"content":{"parts":[{"text":"hmm","thought":true}]}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "gemini text beats thought", format: gem, data: `{"candidates":[{"content":{"parts":[{"text":"hmm","thought":true},{"text":"ok"}]}}]}`, want: fr(watchdog.Content, 2)},
		{name: "gemini signature only", format: gem, data: `{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"c2ln"}]}}]}`, want: fr(watchdog.Reasoning, 0)},
		{name: "gemini function call", format: gem, data: `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}}}]}}]}`, want: fr(watchdog.ToolCall, 7)},
		{name: "gemini finish with text", format: gem, data: `{"candidates":[{"content":{"parts":[{"text":"end"}]},"finishReason":"STOP"}],"usageMetadata":{}}`, want: fr(watchdog.End, 3)},
		{name: "gemini finish safety, no content", format: gem, data: `{"candidates":[{"finishReason":"SAFETY","index":0}]}`, want: fr(watchdog.End, 0)},
		{name: "gemini unspecified finish", format: gem, data: `{"candidates":[{"finishReason":"FINISH_REASON_UNSPECIFIED"}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "gemini blocked prompt", format: gem, data: `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":2}}`, want: fr(watchdog.End, 0)},
		{name: "gemini usage only", format: gem, data: `{"usageMetadata":{"promptTokenCount":2}}`, want: fr(watchdog.Metadata, 0)},
		{name: "gemini error", format: gem, data: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`, want: fr(watchdog.Error, 0)},
		{name: "gemini empty text", format: gem, data: `{"candidates":[{"content":{"parts":[{"text":""}]}}]}`, want: fr(watchdog.Heartbeat, 0)},
		{name: "gemini empty data", format: gem, want: fr(watchdog.Heartbeat, 0)},
		{name: "gemini a chat chunk is not progress", format: gem, data: `{"choices":[{"delta":{"content":"hey"}}]}`, want: fr(watchdog.Heartbeat, 0)},
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range cases() {
		t.Run(tc.name, func(t *testing.T) {
			ev := sse.Event{Event: tc.event, Data: []byte(tc.data), Comment: tc.cmt}
			if got := frames.Classify(tc.format, ev); got != tc.want {
				t.Fatalf("Classify(%s, %q %q) = {%s %d}, want {%s %d}",
					tc.format, tc.event, tc.data, got.Kind, got.Bytes, tc.want.Kind, tc.want.Bytes)
			}
		})
	}
}

// TestClassifyParsedStream runs a real Anthropic stream through the SSE parser.
func TestClassifyParsedStream(t *testing.T) {
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n" +
		": keep-alive\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"\"}}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Olá\"}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	want := []watchdog.Frame{
		fr(watchdog.Metadata, 0), fr(watchdog.Heartbeat, 0), fr(watchdog.Reasoning, 0),
		fr(watchdog.Reasoning, 0), fr(watchdog.Heartbeat, 0), fr(watchdog.Content, 4), fr(watchdog.End, 0),
	}
	var got []watchdog.Frame
	var p sse.Parser
	if err := p.Feed([]byte(stream), func(ev sse.Event) bool {
		got = append(got, frames.Classify(translate.Messages, ev))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d frames %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestClassifyDoesNotRetainData checks Classify leaves the event's bytes untouched.
func TestClassifyDoesNotRetainData(t *testing.T) {
	data := []byte(`{"choices":[{"delta":{"content":"\u00e9abc"}}]}`)
	orig := string(data)
	_ = frames.Classify(translate.Chat, sse.Event{Data: data})
	if string(data) != orig {
		t.Fatalf("data modified: %q", data)
	}
}

func FuzzClassify(f *testing.F) {
	formats := []translate.Format{translate.Chat, translate.Messages, translate.Responses}
	for _, tc := range cases() {
		for i, ft := range formats {
			if ft == tc.format {
				f.Add(uint8(i), tc.event, []byte(tc.data), tc.cmt)
			}
		}
	}
	f.Fuzz(func(t *testing.T, format uint8, event string, data []byte, comment bool) {
		ft := formats[int(format)%len(formats)]
		got := frames.Classify(ft, sse.Event{Event: event, Data: data, Comment: comment})
		if got.Kind < watchdog.Unknown || got.Kind > watchdog.Error {
			t.Fatalf("kind %d out of range", got.Kind)
		}
		if got.Bytes < 0 || got.Bytes > len(data) {
			t.Fatalf("bytes %d outside [0, %d]", got.Bytes, len(data))
		}
		switch got.Kind {
		case watchdog.Content, watchdog.ToolCall, watchdog.End:
		default:
			if got.Bytes != 0 {
				t.Fatalf("%s frame with %d bytes", got.Kind, got.Bytes)
			}
		}
		if got.Kind == watchdog.Content && got.Bytes == 0 {
			t.Fatal("content frame with no bytes")
		}
	})
}

// benchEvents are representative events for the per-event cost.
func benchEvents() []struct {
	name   string
	format translate.Format
	ev     sse.Event
} {
	return []struct {
		name   string
		format translate.Format
		ev     sse.Event
	}{
		{"chat_text", translate.Chat, sse.Event{Data: []byte(`{"id":"chatcmpl-9x8y7z","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","system_fingerprint":"fp_abc123","choices":[{"index":0,"delta":{"content":" the quick brown"},"logprobs":null,"finish_reason":null}]}`)}},
		{"chat_tool_args", translate.Chat, sse.Event{Data: []byte(`{"id":"chatcmpl-9x8y7z","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}`)}},
		{"chat_usage", translate.Chat, sse.Event{Data: []byte(`{"id":"chatcmpl-9x8y7z","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":48,"total_tokens":168}}`)}},
		{"messages_text", translate.Messages, sse.Event{Event: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the quick brown"}}`)}},
		{"messages_thinking", translate.Messages, sse.Event{Event: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me consider the options here."}}`)}},
		{"messages_ping", translate.Messages, sse.Event{Event: "ping", Data: []byte(`{"type": "ping"}`)}},
		{"responses_text", translate.Responses, sse.Event{Event: "response.output_text.delta", Data: []byte(`{"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_67c9fdcecf488190bdd9a0409de3a1ec","output_index":0,"content_index":0,"delta":" the quick brown","logprobs":[]}`)}},
		{"comment", translate.Chat, sse.Event{Comment: true}},
	}
}

func BenchmarkClassify(b *testing.B) {
	for _, bc := range benchEvents() {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = frames.Classify(bc.format, bc.ev)
			}
		})
	}
}
