package gemini

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

func readFixture(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := readFixture(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chatDeltas joins a Chat stream's deltas: content, reasoning, tool calls
// (by index: id, name, arguments joined) and the finish reasons.
type chatDeltas struct {
	content, reasoning string
	tools              []map[string]string
	finishes           []string
	usage              gjson.Result
	done               bool
}

func readChat(t *testing.T, out []byte) chatDeltas {
	t.Helper()
	var d chatDeltas
	for _, ev := range events(t, out) {
		if string(ev) == "[DONE]" {
			d.done = true
			continue
		}
		if !gjson.ValidBytes(ev) {
			t.Fatalf("invalid chunk %s", ev)
		}
		c := gjson.ParseBytes(ev)
		if u := c.Get("usage"); u.Exists() {
			d.usage = u
		}
		delta := c.Get("choices.0.delta")
		d.content += delta.Get("content").String()
		d.reasoning += delta.Get("reasoning_content").String()
		delta.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			i := int(tc.Get("index").Int())
			for len(d.tools) <= i {
				d.tools = append(d.tools, map[string]string{})
			}
			m := d.tools[i]
			if id := tc.Get("id").String(); id != "" {
				m["id"] = id
			}
			if n := tc.Get("function.name").String(); n != "" {
				m["name"] = n
			}
			m["args"] += tc.Get("function.arguments").String()
			if s := tc.Get("extra_content.google.thought_signature").String(); s != "" {
				m["sig"] = s
			}
			return true
		})
		if f := c.Get("choices.0.finish_reason").String(); f != "" {
			d.finishes = append(d.finishes, f)
		}
	}
	return d
}

func TestStreamToChatTextAndThinking(t *testing.T) {
	tr := NewStreamToChat("asked-model")
	out, err := runStream(t, tr, fixture(t, "gemini_text_thinking.sse"))
	if err != nil {
		t.Fatal(err)
	}
	d := readChat(t, out)
	if d.content != "Hello, world!" || d.reasoning != "Let me think." {
		t.Fatalf("content %q reasoning %q", d.content, d.reasoning)
	}
	if strings.Join(d.finishes, ",") != "stop" || !d.done {
		t.Fatalf("finishes %v done %v\n%s", d.finishes, d.done, out)
	}
	checkPaths(t, []byte(d.usage.Raw), map[string]string{
		"prompt_tokens": `12`, "completion_tokens": `28`, "total_tokens": `40`,
		"prompt_tokens_details.cached_tokens": `8`, "completion_tokens_details.reasoning_tokens": `24`,
	})
	if got := tr.Usage(); got != (translate.Usage{InputTokens: 12, OutputTokens: 28, CacheReadTokens: 8, ReasoningTokens: 24}) {
		t.Fatalf("usage %+v", got)
	}
	first := events(t, out)[0]
	checkPaths(t, first, map[string]string{"id": `"resp-1"`, "model": `"gemini-2.5-flash"`, "choices.0.delta.role": `"assistant"`})
}

func TestStreamToChatTools(t *testing.T) {
	tr := NewStreamToChat("m")
	out, err := runStream(t, tr, fixture(t, "gemini_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	d := readChat(t, out)
	if len(d.tools) != 2 {
		t.Fatalf("tools %v\n%s", d.tools, out)
	}
	if d.tools[0]["id"] != "call-a" || d.tools[0]["name"] != "list_directory" || d.tools[0]["args"] != `{"path":"/tmp"}` || d.tools[0]["sig"] != "U0lH" {
		t.Errorf("first call %v", d.tools[0])
	}
	if !strings.HasPrefix(d.tools[1]["id"], "gcall_") || d.tools[1]["args"] != `{"absolute_path":"/tmp/a"}` || d.tools[1]["sig"] != "" {
		t.Errorf("second call %v", d.tools[1])
	}
	if strings.Join(d.finishes, ",") != "tool_calls" || d.content != "Listing." {
		t.Fatalf("finishes %v content %q", d.finishes, d.content)
	}
}

func TestStreamToChatEnds(t *testing.T) {
	tests := []struct {
		fixture  string
		complete bool
		finish   string
		errCode  string
	}{
		{"gemini_blocked.sse", true, "content_filter", ""},
		{"gemini_safety.sse", true, "content_filter", ""},
		{"gemini_cut.sse", false, "", ""},
		{"gemini_error.sse", false, "", "UNAVAILABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			tr := NewStreamToChat("m")
			out, err := runStream(t, tr, fixture(t, tt.fixture))
			if tt.errCode != "" {
				var ue *UpstreamStreamError
				if !errors.As(err, &ue) || ue.Code != tt.errCode || !strings.Contains(ue.Message, "overloaded") {
					t.Fatalf("want an UpstreamStreamError %s, got %v", tt.errCode, err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tr.Complete() != tt.complete {
				t.Fatalf("Complete() = %v", tr.Complete())
			}
			d := readChat(t, out)
			if strings.Join(d.finishes, ",") != tt.finish || d.done != tt.complete {
				t.Fatalf("finishes %v done %v\n%s", d.finishes, d.done, out)
			}
		})
	}
	// The usage after the SAFETY finish is still read.
	tr := NewStreamToChat("m")
	if _, err := runStream(t, tr, fixture(t, "gemini_safety.sse")); err != nil {
		t.Fatal(err)
	}
	if u := tr.Usage(); u.OutputTokens != 2 {
		t.Fatalf("usage %+v", u)
	}
}

// Split invariance: however the bytes are cut, the translation is the same.
func TestStreamToChatSplitInvariant(t *testing.T) {
	wire := fixture(t, "gemini_tools.sse")
	norm := func(b []byte) string {
		d := readChat(t, b)
		d.tools[1]["id"] = "x" // random per stream
		return d.content + "|" + d.tools[0]["args"] + d.tools[1]["args"] + "|" + strings.Join(d.finishes, ",")
	}
	whole, _ := runStream(t, NewStreamToChat("m"), wire)
	for cut := 1; cut < len(wire); cut += 7 {
		tr := NewStreamToChat("m")
		var p sse.Parser
		var out []byte
		feed := func(ev sse.Event) bool {
			var err error
			out, err = tr.Event(out, ev)
			return err == nil
		}
		_ = p.Feed(wire[:cut], feed)
		_ = p.Feed(wire[cut:], feed)
		p.Flush(feed)
		out = tr.End(out)
		if norm(out) != norm(whole) {
			t.Fatalf("cut at %d: %s\nvs %s", cut, out, whole)
		}
	}
}

func TestStreamFromChatSSE(t *testing.T) {
	tr := NewStreamFromChat("client-model", FramingSSE)
	out, err := runStream(t, tr, fixture(t, "chat_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "keep-alive") || strings.Contains(string(out), "\n:") {
		t.Fatalf("a comment reached the Gemini client:\n%s", out)
	}
	evs := events(t, out)
	if len(evs) != 3 {
		t.Fatalf("want 3 chunks, got %d:\n%s", len(evs), out)
	}
	checkPaths(t, evs[0], map[string]string{
		"candidates.0.content": `{"parts":[{"text":"hmm","thought":true}],"role":"model"}`,
		"candidates.0.index":   `0`, "candidates.0.finishReason": absent, "usageMetadata": absent,
		"modelVersion": `"glm-4.6"`, "responseId": `"chatcmpl-9"`,
	})
	checkPaths(t, evs[1], map[string]string{"candidates.0.content.parts": `[{"text":"Checking."}]`})
	checkPaths(t, evs[2], map[string]string{
		"candidates.0.content.parts": `[{"functionCall":{"id":"call_7","name":"run_shell_command","args":{"command":"ls"}}}]`,
		"candidates.0.finishReason":  `"STOP"`,
		"usageMetadata":              `{"promptTokenCount":50,"candidatesTokenCount":18,"totalTokenCount":80,"cachedContentTokenCount":10,"thoughtsTokenCount":12}`,
	})
	if u := tr.Usage(); u != (translate.Usage{InputTokens: 50, OutputTokens: 30, CacheReadTokens: 10, ReasoningTokens: 12}) {
		t.Fatalf("usage %+v", u)
	}
	if !tr.Complete() {
		t.Fatal("not complete")
	}
}

// Without End (the upstream's stream still open after its finish_reason),
// the array holds the text chunks and stays open: the last element, with the
// usage, waits for [DONE] or End.
func TestStreamFromChatJSONArrayOpen(t *testing.T) {
	tr := NewStreamFromChat("m", FramingJSONArray)
	var p sse.Parser
	var out []byte
	_ = p.Feed(fixture(t, "chat_text.sse"), func(ev sse.Event) bool {
		out, _ = tr.Event(out, ev)
		return true
	})
	if !tr.Complete() || strings.HasSuffix(string(out), "]") || !strings.HasPrefix(string(out), "[{") {
		t.Fatalf("complete %v: %s", tr.Complete(), out)
	}
	if !gjson.Valid(string(out) + "]") {
		t.Fatalf("elements are not valid JSON: %s", out)
	}
}

func TestStreamFromChatJSONArrayEnd(t *testing.T) {
	tr := NewStreamFromChat("m", FramingJSONArray)
	out, err := runStream(t, tr, fixture(t, "chat_text.sse"))
	if err != nil {
		t.Fatal(err)
	}
	arr := gjson.ParseBytes(out).Array()
	if len(arr) != 3 {
		t.Fatalf("want 3 elements (2 texts and the last), got %s", out)
	}
	checkPaths(t, []byte(arr[2].Raw), map[string]string{
		"candidates.0.finishReason": `"STOP"`,
		"candidates.0.content":      `{"parts":[{"text":""}],"role":"model"}`,
		"usageMetadata":             `{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}`,
	})
}

func TestStreamFromChatErrors(t *testing.T) {
	// An error chunk from the upstream.
	tr := NewStreamFromChat("m", FramingSSE)
	_, err := runStream(t, tr, []byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"message\":\"boom\",\"code\":\"server_error\"}}\n\n"))
	var ue *UpstreamStreamError
	if !errors.As(err, &ue) || ue.Code != "server_error" || ue.Message != "boom" || tr.Complete() {
		t.Fatalf("got %v", err)
	}
	// A cut stream is not Complete and End writes nothing.
	tr = NewStreamFromChat("m", FramingJSONArray)
	out, err := runStream(t, tr, []byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"))
	if err != nil || tr.Complete() || string(tr.End(nil)) != "" {
		t.Fatalf("complete %v, err %v", tr.Complete(), err)
	}
	// The ErrorWriter closes the array with Google's error object.
	out = tr.(ErrorWriter).AppendError(out, 503, "", "upstream timed out")
	if !gjson.ValidBytes(out) {
		t.Fatalf("invalid array: %s", out)
	}
	checkPaths(t, out, map[string]string{"#": `2`, "1.error": `{"code":503,"message":"upstream timed out","status":"UNAVAILABLE"}`})
	// Before any chunk, the error alone is a valid array.
	tr = NewStreamFromChat("m", FramingJSONArray)
	out = tr.(ErrorWriter).AppendError(nil, 429, "RESOURCE_EXHAUSTED", "slow down")
	checkPaths(t, out, map[string]string{"0.error.status": `"RESOURCE_EXHAUSTED"`})
	// SSE framing: one data event.
	tr = NewStreamFromChat("m", FramingSSE)
	out = tr.(ErrorWriter).AppendError(nil, 500, "", "x")
	if string(out) != "data: {\"error\":{\"code\":500,\"message\":\"x\",\"status\":\"INTERNAL\"}}\n\n" {
		t.Fatalf("got %q", out)
	}
}

func TestErrorEventGemini(t *testing.T) {
	out := translate.ErrorEvent(nil, translate.Gemini, "UPSTREAM_TIMEOUT", "the upstream stalled")
	if string(out) != "data: {\"error\":{\"code\":500,\"message\":\"the upstream stalled\",\"status\":\"INTERNAL\"}}\n\n" {
		t.Fatalf("got %q", out)
	}
	out = translate.ErrorEvent(nil, translate.Gemini, "UNAVAILABLE", "m")
	if !strings.Contains(string(out), `"status":"UNAVAILABLE"`) {
		t.Fatalf("got %q", out)
	}
}

// A Chat stream translated to Gemini and back keeps text, reasoning, tool
// calls (ids, names, arguments), the finish reason and the usage.
func TestStreamRoundTrip(t *testing.T) {
	gem, err := runStream(t, NewStreamFromChat("m", FramingSSE), fixture(t, "chat_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	back := NewStreamToChat("m")
	out, err := runStream(t, back, gem)
	if err != nil {
		t.Fatal(err)
	}
	d := readChat(t, out)
	if d.content != "Checking." || d.reasoning != "hmm" || len(d.tools) != 1 ||
		d.tools[0]["id"] != "call_7" || d.tools[0]["args"] != `{"command":"ls"}` ||
		strings.Join(d.finishes, ",") != "tool_calls" {
		t.Fatalf("round trip lost something: %+v\n%s", d, out)
	}
	if u := back.Usage(); u != (translate.Usage{InputTokens: 50, OutputTokens: 30, CacheReadTokens: 10, ReasoningTokens: 12}) {
		t.Fatalf("usage %+v", u)
	}
}
