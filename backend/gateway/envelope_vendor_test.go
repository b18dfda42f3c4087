package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"omniroute/backend/errs"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/translate"
)

// vendorOpenAIContextLength is OpenAI's 400 for a prompt over the context
// window, as its API answers it (error object: message, type, param, code).
const vendorOpenAIContextLength = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`

// TestOpenAIEnvelopeParamAndUpstreamCode (issue 41, M7): an OpenAI-format
// client's error object always has "param" (null when no field is at
// fault, as OpenAI's reference requires the key); an upstream's OpenAI error
// relayed keeps its own code and param, the gateway's code beside it in
// omniroute_code; the gateway's own errors keep their stable codes.
func TestOpenAIEnvelopeParamAndUpstreamCode(t *testing.T) {
	relayed := func() error {
		f := &failure{v: verdict.Verdict{Kind: verdict.KindContextLength, Status: 400, Code: verdict.CodeContextLength, Message: "too long"}}
		f.upCode, f.upParam = upstreamErrorIDs([]byte(vendorOpenAIContextLength))
		return f.clientError()
	}
	cases := []struct {
		name   string
		format translate.Format
		err    error
		want   map[string]any // the error object's members checked (nil: must be JSON null)
		absent []string
	}{
		{"own error, chat", translate.Chat, errs.New(errs.Unavailable, "GATEWAY_SATURATED", "busy"),
			map[string]any{"code": "GATEWAY_SATURATED", "param": nil}, []string{"omniroute_code"}},
		{"own error with param, responses", translate.Responses, errs.New(errs.Invalid, "INVALID_FIELD", "bad").WithParam("stream"),
			map[string]any{"code": "INVALID_FIELD", "param": "stream"}, nil},
		{"relayed upstream error, chat", translate.Chat, relayed(),
			map[string]any{"code": "context_length_exceeded", "param": "messages", "omniroute_code": "CONTEXT_LENGTH_EXCEEDED", "type": "invalid_request_error"}, nil},
		{"relayed upstream error, messages keeps the gateway's code", translate.Messages, relayed(),
			map[string]any{"code": "CONTEXT_LENGTH_EXCEEDED"}, []string{"omniroute_code"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeError(w, c.format, 0, c.err)
			var env struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Error == nil {
				t.Fatalf("not an envelope: %v %s", err, w.Body)
			}
			for k, want := range c.want {
				got, ok := env.Error[k]
				if !ok || got != want {
					t.Errorf("error.%s = %v (present %v), want %v: %s", k, got, ok, want, w.Body)
				}
			}
			for _, k := range c.absent {
				if _, ok := env.Error[k]; ok {
					t.Errorf("error.%s present: %s", k, w.Body)
				}
			}
			if c.format == translate.Chat && c.name == "relayed upstream error, chat" && w.Code != http.StatusBadRequest {
				t.Errorf("status %d", w.Code)
			}
		})
	}
}

// TestUpstreamErrorIDs: only identifier-like strings are taken from an
// upstream's error body (never free text), nulls and numbers are not codes.
func TestUpstreamErrorIDs(t *testing.T) {
	cases := []struct{ body, code, param string }{
		{vendorOpenAIContextLength, "context_length_exceeded", "messages"},
		{`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`, "", ""},
		{`{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}`, "", ""}, // Gemini
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", ""},       // Anthropic
		{`{"error":{"code":"has space sk-secret","param":"a b"}}`, "", ""},
		{`not json`, "", ""},
	}
	for _, c := range cases {
		code, param := upstreamErrorIDs([]byte(c.body))
		if code != c.code || param != c.param {
			t.Errorf("%s: %q %q, want %q %q", c.body, code, param, c.code, c.param)
		}
	}
}
