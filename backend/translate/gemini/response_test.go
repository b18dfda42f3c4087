package gemini

import (
	"errors"
	"strings"
	"testing"
)

func TestResponseToChat(t *testing.T) {
	tests := []struct {
		name string
		body string
		want map[string]string
	}{
		{
			name: "text, thoughts and usage",
			body: `{"candidates":[{"content":{"parts":[{"text":"why","thought":true},{"text":"42","thoughtSignature":"x"}],"role":"model"},"finishReason":"STOP","index":0}],
				"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"totalTokenCount":17,"cachedContentTokenCount":4,"thoughtsTokenCount":5},"modelVersion":"gemini-2.5-pro","responseId":"abc"}`,
			want: map[string]string{
				"id": `"abc"`, "object": `"chat.completion"`, "model": `"gemini-2.5-pro"`,
				"choices.0.message":       `{"role":"assistant","content":"42","reasoning_content":"why","refusal":null}`,
				"choices.0.finish_reason": `"stop"`,
				"usage":                   `{"prompt_tokens":10,"completion_tokens":7,"total_tokens":17,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":5}}`,
			},
		},
		{
			name: "function calls: tool_calls, content null",
			body: `{"candidates":[{"content":{"parts":[{"functionCall":{"id":"f1","name":"ls","args":{"a":[1]}},"thoughtSignature":"SIG"}],"role":"model"},"finishReason":"STOP","index":0}]}`,
			want: map[string]string{
				"choices.0.message.content":    `null`,
				"choices.0.message.tool_calls": `[{"id":"f1","type":"function","function":{"name":"ls","arguments":"{\"a\":[1]}"},"extra_content":{"google":{"thought_signature":"SIG"}}}]`,
				"choices.0.finish_reason":      `"tool_calls"`,
				"model":                        `"asked"`,
			},
		},
		{
			name: "candidate with index 0 is chosen",
			body: `{"candidates":[{"content":{"parts":[{"text":"b"}]},"index":1},{"content":{"parts":[{"text":"a"}]},"index":0,"finishReason":"MAX_TOKENS"}]}`,
			want: map[string]string{"choices.0.message.content": `"a"`, "choices.0.finish_reason": `"length"`},
		},
		{
			name: "blocked prompt",
			body: `{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[]},"usageMetadata":{"promptTokenCount":3,"totalTokenCount":3}}`,
			want: map[string]string{"choices.0.message.content": `""`, "choices.0.finish_reason": `"content_filter"`, "usage.prompt_tokens": `3`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ResponseToChat([]byte(tt.body), "asked")
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, out, tt.want)
		})
	}
}

func TestFinishReasons(t *testing.T) {
	tests := []struct {
		gemini   string
		hasTools bool
		chat     string
	}{
		{"STOP", false, "stop"},
		{"STOP", true, "tool_calls"},
		{"MAX_TOKENS", false, "length"},
		{"MAX_TOKENS", true, "length"},
		{"SAFETY", false, "content_filter"},
		{"RECITATION", false, "content_filter"},
		{"PROHIBITED_CONTENT", false, "content_filter"},
		{"BLOCKLIST", false, "content_filter"},
		{"SPII", false, "content_filter"},
		{"IMAGE_SAFETY", false, "content_filter"},
		{"MALFORMED_FUNCTION_CALL", false, "stop"},
		{"OTHER", false, "stop"},
		{"FINISH_REASON_UNSPECIFIED", false, "stop"},
		{"", false, "stop"},
	}
	for _, tt := range tests {
		if got := finishReason(tt.gemini, tt.hasTools); got != tt.chat {
			t.Errorf("finishReason(%q, %v) = %q, want %q", tt.gemini, tt.hasTools, got, tt.chat)
		}
	}
	back := map[string]string{"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY", "": "STOP", "function_call": "STOP"}
	for chat, want := range back {
		if got := geminiFinish(chat); got != want {
			t.Errorf("geminiFinish(%q) = %q, want %q", chat, got, want)
		}
	}
}

func TestResponseFromChat(t *testing.T) {
	body := `{"id":"chatcmpl-1","object":"chat.completion","model":"glm-4.6","choices":[{"index":0,"message":{"role":"assistant","content":"Sure.","reasoning_content":"r","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"type":"function","function":{"name":"g","arguments":"oops"}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":5},"completion_tokens_details":{"reasoning_tokens":4}}}`
	out, err := ResponseFromChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, out, map[string]string{
		"candidates.0.content.role":    `"model"`,
		"candidates.0.content.parts.0": `{"text":"r","thought":true}`,
		"candidates.0.content.parts.1": `{"text":"Sure."}`,
		"candidates.0.content.parts.2": `{"functionCall":{"id":"call_1","name":"f","args":{"x":1}}}`,
		// Arguments that are not an object are not wrapped in an invented
		// key: the call is dropped, Gemini's MALFORMED_FUNCTION_CALL says why
		// (issue 41, M10).
		"candidates.0.content.parts.3": absent,
		"candidates.0.finishReason":    `"MALFORMED_FUNCTION_CALL"`,
		"candidates.0.index":           `0`,
		"usageMetadata":                `{"promptTokenCount":20,"candidatesTokenCount":5,"totalTokenCount":29,"cachedContentTokenCount":5,"thoughtsTokenCount":4}`,
		"modelVersion":                 `"glm-4.6"`, "responseId": `"chatcmpl-1"`,
	})
	if id := string(out); !strings.Contains(id, `"functionCall":{"id":"call_`) {
		t.Fatalf("a call without id got none: %s", out)
	}
	// An empty answer still has one part, as Google's do.
	out, err = ResponseFromChat([]byte(`{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"length"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, out, map[string]string{"candidates.0.content.parts": `[{"text":""}]`, "candidates.0.finishReason": `"MAX_TOKENS"`})
}

func TestResponseErrors(t *testing.T) {
	for _, body := range []string{`{"error":{"code":400,"message":"bad"}}`, `{"candidates":{}}`, `{}`, `[`, `{"candidates":[{"content":{"parts":[1]}}]}`} {
		_, err := ResponseToChat([]byte(body), "m")
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("ResponseToChat(%s): want an InputError, got %v", body, err)
		}
	}
	for _, body := range []string{`{"error":{"message":"x"}}`, `{"choices":[]}`, `{"choices":[{"message":1}]}`, `{}`} {
		_, err := ResponseFromChat([]byte(body))
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("ResponseFromChat(%s): want an InputError, got %v", body, err)
		}
	}
}
