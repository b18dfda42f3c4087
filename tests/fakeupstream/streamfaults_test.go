package fakeupstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// fetch sends c and reads the whole body, returning the read error instead
// of failing, for the modes that break the body on purpose.
func (f *fixture) fetch(t *testing.T, c call) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := f.client.Do(f.request(testCtx(t), t, c))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// reasoningSpec asks for reasoning in format's way.
func reasoningSpec(format Format) spec {
	if format == FormatAnthropic {
		return spec{reasoning: "enabled"}
	}
	return spec{reasoning: "high"}
}

func TestStreamSafetyModes(t *testing.T) {
	const n = DefaultStreamChunks
	oaHead, anHead := seq("role"), seq("message_start", "start:text@0", "ping")
	oaText, anText := times("content", n), times("text_delta@0", n)
	oaEnd, anEnd := seq("finish:stop", "[DONE]"), seq("stop@0", "message_delta:end_turn", "message_stop")
	anThinkHead := seq("message_start", "start:thinking@0", "ping")
	tests := []struct {
		name   string
		format Format
		spec   spec
		fault  Fault
		want   []string
		broken bool   // the body must end with unexpected EOF instead of cleanly
		data   string // data of the one "malformed" or "error" frame
	}{
		{"openai cut 0", FormatOpenAI, spec{}, Fault{Mode: ModeCutAfterEvents}, oaHead, false, ""},
		{"openai cut 2", FormatOpenAI, spec{}, Fault{Mode: ModeCutAfterEvents, AfterChunks: 2}, seq(oaHead, oaText[:2]), false, ""},
		{"openai cut all", FormatOpenAI, spec{}, Fault{Mode: ModeCutAfterEvents, AfterChunks: n}, seq(oaHead, oaText), false, ""},
		{"openai cut past the end", FormatOpenAI, spec{}, Fault{Mode: ModeCutAfterEvents, AfterChunks: 99}, seq(oaHead, oaText), false, ""},
		{"openai cut drops the usage chunk", FormatOpenAI, spec{usage: true}, Fault{Mode: ModeCutAfterEvents, AfterChunks: n}, seq(oaHead, oaText), false, ""},
		{"openai cut tool call", FormatOpenAI, spec{tools: true}, Fault{Mode: ModeCutAfterEvents, AfterChunks: 2},
			seq(oaHead, "tool_header:get_weather", "args", "args"), false, ""},
		{"anthropic cut 0", FormatAnthropic, spec{}, Fault{Mode: ModeCutAfterEvents}, anHead, false, ""},
		{"anthropic cut 3", FormatAnthropic, spec{}, Fault{Mode: ModeCutAfterEvents, AfterChunks: 3}, seq(anHead, anText[:3]), false, ""},
		{"anthropic cut all", FormatAnthropic, spec{}, Fault{Mode: ModeCutAfterEvents, AfterChunks: n}, seq(anHead, anText), false, ""},
		{"anthropic cut across blocks", FormatAnthropic, reasoningSpec(FormatAnthropic), Fault{Mode: ModeCutAfterEvents, AfterChunks: n + 1},
			seq(anThinkHead, times("thinking_delta@0", n), "signature_delta@0", "stop@0", "start:text@1", "text_delta@1"), false, ""},

		{"openai no done", FormatOpenAI, spec{}, Fault{Mode: ModeNoDone}, seq(oaHead, oaText, "finish:stop"), false, ""},
		{"openai no done keeps usage", FormatOpenAI, spec{usage: true}, Fault{Mode: ModeNoDone}, seq(oaHead, oaText, "finish:stop", "usage"), false, ""},
		{"openai no done tool call", FormatOpenAI, spec{tools: true}, Fault{Mode: ModeNoDone},
			seq(oaHead, "tool_header:get_weather", times("args", n), "finish:tool_calls"), false, ""},
		{"anthropic no message_stop", FormatAnthropic, spec{}, Fault{Mode: ModeNoDone}, seq(anHead, anText, "stop@0", "message_delta:end_turn"), false, ""},

		{"openai malformed after 2", FormatOpenAI, spec{}, Fault{Mode: ModeMalformedEvent, AfterChunks: 2},
			seq(oaHead, oaText[:2], "malformed", oaText[2:], oaEnd), false, MalformedOpenAIData},
		{"openai malformed after all", FormatOpenAI, spec{}, Fault{Mode: ModeMalformedEvent, AfterChunks: n},
			seq(oaHead, oaText, "malformed", oaEnd), false, MalformedOpenAIData},
		{"anthropic malformed first", FormatAnthropic, spec{}, Fault{Mode: ModeMalformedEvent},
			seq(anHead, "malformed", anText, anEnd), false, MalformedAnthropicData},
		{"anthropic malformed after 4", FormatAnthropic, spec{}, Fault{Mode: ModeMalformedEvent, AfterChunks: 4},
			seq(anHead, anText[:4], "malformed", anText[4:], anEnd), false, MalformedAnthropicData},

		{"openai error after 2", FormatOpenAI, spec{}, Fault{Mode: ModeErrorEvent, AfterChunks: 2},
			seq(oaHead, oaText[:2], "error"), false, OpenAIStreamErrorData},
		{"openai error custom body", FormatOpenAI, spec{}, Fault{Mode: ModeErrorEvent, Body: `{"error":{"message":"boom","type":"x"}}`},
			seq(oaHead, "error"), false, `{"error":{"message":"boom","type":"x"}}`},
		{"anthropic error after 3", FormatAnthropic, spec{}, Fault{Mode: ModeErrorEvent, AfterChunks: 3},
			seq(anHead, anText[:3], "error"), false, AnthropicOverloadedBody},
		{"anthropic error in tool call", FormatAnthropic, spec{tools: true}, Fault{Mode: ModeErrorEvent, AfterChunks: 1},
			seq("message_start", "start:tool_use@0", "ping", "input_json_delta@0", "error"), false, AnthropicOverloadedBody},

		{"openai slow first token", FormatOpenAI, spec{}, Fault{Mode: ModeSlowFirstToken, LatencyMs: 1}, seq(oaHead, oaText, oaEnd), false, ""},
		{"anthropic slow first token", FormatAnthropic, spec{}, Fault{Mode: ModeSlowFirstToken, LatencyMs: 1}, seq(anHead, anText, anEnd), false, ""},
		{"stall after events alias", FormatAnthropic, spec{}, Fault{Mode: ModeStallAfterEvents, AfterChunks: 2, StallMs: 1},
			seq(anHead, anText, anEnd), false, ""},

		// The existing mid-stream modes count content events of every shape.
		{"openai reset after reasoning", FormatOpenAI, reasoningSpec(FormatOpenAI), Fault{Mode: ModeResetMidStream, AfterChunks: n + 1},
			seq(oaHead, times("reasoning", n), "content"), true, ""},
		{"anthropic reset in tool call", FormatAnthropic, spec{tools: true}, Fault{Mode: ModeResetMidStream, AfterChunks: 2},
			seq("message_start", "start:tool_use@0", "ping", "input_json_delta@0", "input_json_delta@0"), true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.u.SetFault("k", tc.fault)
			resp, body, err := f.fetch(t, call{format: tc.format, key: "k", raw: shapeBody(t, tc.format, true, tc.spec)})
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			switch {
			case tc.broken && !errors.Is(err, io.ErrUnexpectedEOF):
				t.Errorf("body ended with %v, want unexpected EOF", err)
			case !tc.broken && err != nil:
				t.Errorf("body ended with %v, want a clean end", err)
			}
			frames, ferr := readFrames(strings.NewReader(string(body)))
			if ferr != nil {
				t.Fatalf("framing: %v in %q", ferr, body)
			}
			if got := describeAll(tc.format, frames); !slices.Equal(got, tc.want) {
				t.Fatalf("events\n got %v\nwant %v", got, tc.want)
			}
			for _, fr := range frames {
				switch describe(tc.format, fr) {
				case "malformed", "error":
					if fr.data != tc.data {
						t.Errorf("data %s, want %s", fr.data, tc.data)
					}
					if tc.format == FormatAnthropic {
						wantEvent := map[Mode]string{ModeMalformedEvent: "content_block_delta", ModeErrorEvent: "error"}[tc.fault.Mode]
						if fr.event != wantEvent {
							t.Errorf("event %q, want %q", fr.event, wantEvent)
						}
					}
				}
			}
			// Whatever text got through is a prefix of the real answer.
			if text := joined(tc.format, frames, "content"); tc.spec == (spec{}) && !strings.HasPrefix(Content("k"), text) {
				t.Errorf("content %q is not a prefix of %q", text, Content("k"))
			}
		})
	}
}

func TestNonStreamFaults(t *testing.T) {
	for _, format := range []Format{FormatOpenAI, FormatAnthropic} {
		f := newFixture(t)
		happy := must(f.do(t, call{format: format, key: "k", raw: shapeBody(t, format, false, spec{})}))
		thinking := must(f.do(t, call{format: format, key: "k", raw: shapeBody(t, format, false, reasoningSpec(format))}))
		parts := splitBytes(happy, DefaultStreamChunks)
		malformed, errData := MalformedOpenAIData, OpenAIStreamErrorData
		if format == FormatAnthropic {
			malformed, errData = MalformedAnthropicData, AnthropicOverloadedBody
		}
		tests := []struct {
			name      string
			fault     Fault
			reasoning bool   // send the reasoning request
			want      string // the whole body
			length    bool   // Content-Length sent
		}{
			{"cut after 1", Fault{Mode: ModeCutAfterEvents, AfterChunks: 1}, false, string(parts[0]), false},
			{"cut past the end", Fault{Mode: ModeCutAfterEvents, AfterChunks: 99}, false, string(happy), false},
			{"no done", Fault{Mode: ModeNoDone}, false, string(happy), true},
			{"malformed after 2", Fault{Mode: ModeMalformedEvent, AfterChunks: 2}, false,
				string(parts[0]) + string(parts[1]) + malformed + string(happy[len(parts[0])+len(parts[1]):]), true},
			{"error event", Fault{Mode: ModeErrorEvent, AfterChunks: 2}, false, errData, true},
			{"error event body", Fault{Mode: ModeErrorEvent, Body: `{"error":"custom"}`}, false, `{"error":"custom"}`, true},
			{"slow first token", Fault{Mode: ModeSlowFirstToken, LatencyMs: 1}, false, string(happy), true},
			{"heartbeat bounded", Fault{Mode: ModeReasoningOnlyHeartbeat, StallMs: 1}, false, string(thinking), true},
			{"heartbeat keeps reasoning", Fault{Mode: ModeReasoningOnlyHeartbeat, StallMs: 1}, true, string(thinking), true},
		}
		for _, tc := range tests {
			t.Run(format.String()+"/"+tc.name, func(t *testing.T) {
				f.u.SetFault("k", tc.fault)
				c := call{format: format, key: "k", raw: shapeBody(t, format, false, spec{})}
				if tc.reasoning {
					c.raw = shapeBody(t, format, false, reasoningSpec(format))
				}
				resp, body, err := f.fetch(t, c)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("status %d read error %v", resp.StatusCode, err)
				}
				if string(body) != tc.want {
					t.Errorf("body\n got %s\nwant %s", body, tc.want)
				}
				if got := resp.ContentLength >= 0; got != tc.length {
					t.Errorf("Content-Length %d, want sent=%v", resp.ContentLength, tc.length)
				}
				if resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("content-type %q", resp.Header.Get("Content-Type"))
				}
			})
		}
		if gjson.Valid(string(parts[0])) || gjson.Valid(string(parts[0])+malformed) {
			t.Error("the broken bodies above are valid JSON: the test proves nothing")
		}
	}
}

// TestSlowFirstTokenSendsPreambleFirst holds the first token for a minute and
// checks the headers and preamble have arrived while the handler waits:
// closing the fake then drops the connection with no content sent.
func TestSlowFirstTokenSendsPreambleFirst(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		stream bool
		head   []string
	}{
		{"openai stream", FormatOpenAI, true, seq("role")},
		{"anthropic stream", FormatAnthropic, true, seq("message_start", "start:text@0", "ping")},
		{"openai json", FormatOpenAI, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.u.SetFault("k", Fault{Mode: ModeSlowFirstToken, LatencyMs: 60_000})
			resp, err := f.client.Do(f.request(testCtx(t), t, call{format: tc.format, key: "k", stream: tc.stream}))
			if err != nil {
				t.Fatal(err) // the headers came first
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			fr := newFrameReader(resp.Body)
			for i, want := range tc.head {
				fm, err := fr.next()
				if err != nil || describe(tc.format, fm) != want {
					t.Fatalf("preamble frame %d: %+v %v, want %s", i, fm, err, want)
				}
			}
			f.u.Close()
			rest, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(rest) != 0 {
				t.Errorf("after the preamble: %q %v, want nothing then unexpected EOF", rest, err)
			}
		})
	}
}

func TestReasoningOnlyHeartbeat(t *testing.T) {
	tests := []struct {
		name    string
		format  Format
		after   int
		head    []string
		thought string // describe() of a reasoning frame
		beat    string // describe() of a heartbeat
	}{
		{"openai", FormatOpenAI, 3, seq("role"), "reasoning", "comment:keep-alive"},
		{"openai heartbeats only", FormatOpenAI, 0, seq("role"), "reasoning", "comment:keep-alive"},
		{"anthropic", FormatAnthropic, 2, seq("message_start", "start:thinking@0", "ping"), "thinking_delta@0", "ping"},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/until the client goes away", func(t *testing.T) {
			f := newFixture(t)
			f.u.SetFault("k", Fault{Mode: ModeReasoningOnlyHeartbeat, AfterChunks: tc.after, DripMs: 1})
			ctx := testCtx(t)
			reqCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			resp, err := f.client.Do(f.request(reqCtx, t, call{format: tc.format, key: "k", stream: true}))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			fr := newFrameReader(resp.Body)
			const beats = 5
			want := seq(tc.head, times(tc.thought, tc.after), times(tc.beat, beats))
			for i, w := range want {
				fm, err := fr.next()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if got := describe(tc.format, fm); got != w {
					t.Fatalf("frame %d is %s (%+v), want %s", i, got, fm, w)
				}
				if got := joined(tc.format, []frame{fm}, "reasoning"); got != "" && got != HeartbeatThought {
					t.Errorf("reasoning frame %q, want %q", got, HeartbeatThought)
				}
			}
			cancel()
			if err := f.u.WaitInFlight(ctx, 0); err != nil {
				t.Fatalf("handler still heartbeating after the client left: %v", err)
			}
		})
		t.Run(tc.name+"/bounded then the answer", func(t *testing.T) {
			f := newFixture(t)
			// The answer the heartbeats give way to is the reasoning answer.
			happy, err := readFrames(strings.NewReader(string(must(f.do(t,
				call{format: tc.format, key: "k", raw: shapeBody(t, tc.format, true, reasoningSpec(tc.format))})))))
			if err != nil {
				t.Fatal(err)
			}
			f.u.SetFault("k", Fault{Mode: ModeReasoningOnlyHeartbeat, AfterChunks: tc.after, DripMs: 1, StallMs: 5})
			_, body, err := f.fetch(t, call{format: tc.format, key: "k", raw: shapeBody(t, tc.format, true, spec{})})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			frames, err := readFrames(strings.NewReader(string(body)))
			if err != nil {
				t.Fatalf("framing: %v", err)
			}
			h := len(tc.head)
			beats := 0
			for h+tc.after+beats < len(frames) && describe(tc.format, frames[h+tc.after+beats]) == tc.beat {
				beats++
			}
			got := slices.Concat(frames[:h], frames[h+tc.after+beats:])
			if !slices.Equal(got, happy) {
				t.Errorf("without its %d thoughts and %d heartbeats the stream is\n%v\nwant\n%v", tc.after, beats,
					describeAll(tc.format, got), describeAll(tc.format, happy))
			}
			if d := describeAll(tc.format, frames[h:h+tc.after]); !slices.Equal(d, times(tc.thought, tc.after)) {
				t.Errorf("thoughts %v", d)
			}
		})
	}
}

func TestNewModesOverControlAPI(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	rc := Remote{BaseURL: f.base, Client: f.client}
	modes := []Mode{ModeCutAfterEvents, ModeNoDone, ModeMalformedEvent, ModeSlowFirstToken, ModeReasoningOnlyHeartbeat, ModeErrorEvent}
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			if err := rc.SetFault(ctx, "key-"+string(m), Fault{Mode: m, AfterChunks: 1, StallMs: 1, DripMs: 1, LatencyMs: 1}); err != nil {
				t.Fatal(err)
			}
			if got := f.u.Faults()["key-"+string(m)]; len(got) != 1 || got[0].Mode != m {
				t.Errorf("installed %+v", got)
			}
		})
	}
	// One end to end: no_done over HTTP really drops [DONE].
	_, body := f.do(t, call{format: FormatOpenAI, key: "key-no_done", stream: true})
	if strings.Contains(string(body), "[DONE]") || !strings.Contains(string(body), `"finish_reason":"stop"`) {
		t.Errorf("no_done body %s", body)
	}
}
