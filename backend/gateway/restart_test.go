package gateway

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// chatChunk is a Chat client chunk with delta (JSON) and finish_reason (JSON).
func chatChunk(delta, finish string) []byte {
	return sse.Append(nil, "", []byte(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":`+delta+`,"finish_reason":`+finish+`}]}`))
}

// spliceText feeds the events one call each through a restart splice of
// delivered (over the opening filter) and returns what reached the client,
// the text it carried, and the splice.
func spliceRun(f translate.Format, delivered string, blocks *clientBlocks, events ...[]byte) (string, string, *restartSplice, *streamState) {
	s := &streamState{}
	sp := newRestartSplice(f, delivered, s)
	filter := sp.filter(openingFilter(f, false, blocks))
	var out strings.Builder
	for _, ev := range events {
		out.Write(filter(append([]byte(nil), ev...)))
	}
	var text strings.Builder
	var p sse.Parser
	_ = p.Feed([]byte(out.String()), func(ev sse.Event) bool {
		text.WriteString(gjson.GetBytes(ev.Data, textPath(f)).String())
		return true
	})
	return out.String(), text.String(), sp, s
}

// TestRestartSpliceChat: a restarted Chat answer is held until its text has
// reproduced the delivered text — across chunk boundaries, with reasoning
// and the role chunk dropped — and only what follows reaches the client; an
// answer that departs from the delivered text, calls a tool or ends short of
// it diverges with nothing let through and the relay stopped.
func TestRestartSpliceChat(t *testing.T) {
	role := chatChunk(`{"role":"assistant","content":""}`, "null")
	reasoning := chatChunk(`{"reasoning_content":"hmm"}`, "null")
	text := func(s string) []byte { return chatChunk(`{"content":"`+s+`"}`, "null") }
	stop := chatChunk(`{}`, `"stop"`)
	done := sse.Append(nil, "", []byte("[DONE]"))
	tests := []struct {
		name      string
		delivered string
		events    [][]byte
		want      string // the text the client gets; "" with diverged
		diverged  bool
	}{
		{"reproduced inside a chunk", "Hello fr", [][]byte{role, reasoning, text("Hell"), text("o from"), text(" key-a"), stop, done}, "om key-a", false},
		{"reproduced at a chunk's end", "Hello from", [][]byte{role, text("Hello"), text(" from"), text(" key-a"), stop, done}, " key-a", false},
		{"delivered white space kept", "Hello \n", [][]byte{text("Hello \n"), text("there"), stop, done}, "there", false},
		{"diverges in the first chunk", "Hello fr", [][]byte{role, text("Hi, this"), text(" is key-a"), stop, done}, "", true},
		{"diverges on the last delivered byte", "Hello from key-a", [][]byte{text("Hello from key-"), text("b!"), stop, done}, "", true},
		{"white space differs", "Hello  fr", [][]byte{text("Hello fr"), text("om"), stop, done}, "", true},
		{"ends short of the delivered text", "Hello from key-a", [][]byte{text("Hello"), stop, done}, "", true},
		{"a tool call", "Hello", [][]byte{chatChunk(`{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}}]}`, "null"), done}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, got, sp, s := spliceRun(translate.Chat, tt.delivered, nil, tt.events...)
			if sp.diverged != tt.diverged {
				t.Fatalf("diverged = %v, want %v (out %q)", sp.diverged, tt.diverged, out)
			}
			if tt.diverged {
				if out != "" || s.streamErr != errRestartDiverged {
					t.Fatalf("a diverged restart let %q through (streamErr %v)", out, s.streamErr)
				}
				return
			}
			if got != tt.want || !sp.matched || !strings.Contains(out, "data: [DONE]") || !strings.Contains(out, `"finish_reason":"stop"`) ||
				strings.Contains(out, "reasoning_content") || strings.Contains(out, `"role"`) {
				t.Fatalf("client text %q, want %q:\n%s", got, tt.want, out)
			}
		})
	}
}

// TestRestartSpliceMessages: an Anthropic client's restarted answer goes on
// in its open text block: the restart's thinking block is dropped, its text
// block (index 1 behind the thinking) becomes the client's (index 1 behind
// the client's own thinking block), its opening frames are not repeated and
// only the text past the delivered text is sent; a diverging one sends
// nothing.
func TestRestartSpliceMessages(t *testing.T) {
	ev := func(name, data string) []byte { return sse.Append(nil, name, []byte(data)) }
	answer := func(second string) [][]byte {
		return [][]byte{
			ev("message_start", `{"type":"message_start","message":{"id":"m2","usage":{"input_tokens":9,"output_tokens":1}}}`),
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`),
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
			ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`),
			ev("ping", `{"type":"ping"}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello f"}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"`+second+`"}}`),
			ev("content_block_stop", `{"type":"content_block_stop","index":1}`),
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`),
			ev("message_stop", `{"type":"message_stop"}`),
		}
	}
	client := &clientBlocks{started: 2, lastText: true, open: true} // thinking 0, text 1 open
	out, got, sp, _ := spliceRun(translate.Messages, "Hello fro", client, answer("rom key-a")...)
	if !sp.matched || got != "m key-a" {
		t.Fatalf("client text %q, want %q:\n%s", got, "m key-a", out)
	}
	for _, gone := range []string{"message_start", "thinking", "ping", "content_block_start"} {
		if strings.Contains(out, gone) {
			t.Fatalf("%s reached the client:\n%s", gone, out)
		}
	}
	if strings.Contains(out, `"index":0`) || strings.Count(out, `"index":1`) != 2 || !strings.Contains(out, `"input_tokens":9`) ||
		!strings.Contains(out, "event: message_stop") {
		t.Fatalf("blocks or usage wrong:\n%s", out)
	}

	out, _, sp, s := spliceRun(translate.Messages, "Hello fro", client, answer("or key-a")...)
	if !sp.diverged || out != "" || s.streamErr != errRestartDiverged {
		t.Fatalf("diverged %v, out %q, streamErr %v", sp.diverged, out, s.streamErr)
	}
}

// TestRestartRequestHasNoPrefill: the restart sends the client's request as
// it came, its reasoning options left out, with no trailing assistant turn.
func TestRestartRequestHasNoPrefill(t *testing.T) {
	body, err := withoutReasoning(translate.Chat, []byte(`{"model":"m","reasoning_effort":"high","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || gjson.GetBytes(body, "messages.#").Int() != 1 || gjson.GetBytes(body, "reasoning_effort").Exists() ||
		!gjson.GetBytes(body, "stream").Bool() {
		t.Fatalf("%s %v", body, err)
	}
}

// TestRestartSpliceResponses: a Responses client's (Codex's) restarted
// answer is held until its output_text deltas reproduced the delivered text;
// what follows goes on in the client's own response — its response id, item
// id, output and content indexes, sequence numbers counted on from the
// client's — with the restart's opening events and reasoning item dropped
// and the done events carrying the whole text. A function call, a departing
// text or an answer ending short of the delivered text diverges: nothing
// reaches the client and the relay stops.
func TestRestartSpliceResponses(t *testing.T) {
	seq := 0
	ev := func(typ, data string) []byte {
		seq++
		return sse.Append(nil, typ, []byte(`{"type":"`+typ+`","sequence_number":`+strconv.Itoa(seq)+data+`}`))
	}
	delta := func(s string) []byte {
		return ev("response.output_text.delta", `,"item_id":"msg_new","output_index":1,"content_index":0,"delta":"`+s+`"`)
	}
	opening := func() [][]byte {
		seq = 0
		return [][]byte{
			ev("response.created", `,"response":{"id":"resp_new","model":"other"}`),
			ev("response.in_progress", `,"response":{"id":"resp_new","model":"other"}`),
			ev("response.output_item.added", `,"output_index":0,"item":{"id":"rs_new","type":"reasoning"}`),
			ev("response.reasoning_summary_text.delta", `,"item_id":"rs_new","output_index":0,"delta":"hmm"`),
			ev("response.output_item.done", `,"output_index":0,"item":{"id":"rs_new","type":"reasoning"}`),
			ev("response.output_item.added", `,"output_index":1,"item":{"id":"msg_new","type":"message"}`),
			ev("response.content_part.added", `,"item_id":"msg_new","output_index":1,"content_index":0,"part":{"type":"output_text","text":""}`),
		}
	}
	closing := func(text string) [][]byte {
		return [][]byte{
			ev("response.output_text.done", `,"item_id":"msg_new","output_index":1,"content_index":0,"text":"`+text+`"`),
			ev("response.content_part.done", `,"item_id":"msg_new","output_index":1,"content_index":0,"part":{"type":"output_text","text":"`+text+`"}`),
			ev("response.output_item.done", `,"output_index":1,"item":{"id":"msg_new","type":"message","status":"completed"}`),
			ev("response.completed", `,"response":{"id":"resp_new","model":"other","status":"completed","output":[]}`),
		}
	}
	call := func() [][]byte {
		return [][]byte{ev("response.output_item.added", `,"output_index":1,"item":{"id":"fc_new","type":"function_call","name":"f"}`)}
	}
	tests := []struct {
		name      string
		delivered string
		events    func() [][]byte
		want      string // the text the client gets after delivered; "" with diverged
		diverged  bool
	}{
		{"reproduced inside a delta", "Hello fr", func() [][]byte {
			return concat(opening(), [][]byte{delta("Hell"), delta("o from"), delta(" key-a")}, closing("Hello from key-a"))
		}, "om key-a", false},
		{"reproduced at a delta's end", "Hello from", func() [][]byte {
			return concat(opening(), [][]byte{delta("Hello"), delta(" from"), delta(" key-a")}, closing("Hello from key-a"))
		}, " key-a", false},
		{"diverges", "Hello fr", func() [][]byte {
			return concat(opening(), [][]byte{delta("Hi, this"), delta(" is key-a")}, closing("Hi, this is key-a"))
		}, "", true},
		{"white space differs", "Hello  fr", func() [][]byte {
			return concat(opening(), [][]byte{delta("Hello fr"), delta("om")}, closing("Hello from"))
		}, "", true},
		{"ends short of the delivered text", "Hello from key-a", func() [][]byte {
			return concat(opening(), [][]byte{delta("Hello")}, closing("Hello"))
		}, "", true},
		{"a function call", "Hello", func() [][]byte { return concat(opening()[:2], call(), closing("")) }, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := &clientResponse{id: "resp_client", model: "gpt", seq: 9, msgID: "msg_client", msgIndex: 0, contentIndex: 0, parts: 1}
			s := &streamState{}
			sp := newRestartSplice(translate.Responses, tt.delivered, s)
			filter := sp.filter(responsesSplice(client, tt.delivered, false))
			var out strings.Builder
			for _, e := range tt.events() {
				out.Write(filter(append([]byte(nil), e...)))
			}
			if sp.diverged != tt.diverged {
				t.Fatalf("diverged = %v, want %v (out %q)", sp.diverged, tt.diverged, out.String())
			}
			if tt.diverged {
				if out.Len() != 0 || s.streamErr != errRestartDiverged {
					t.Fatalf("a diverged restart let %q through (streamErr %v)", out.String(), s.streamErr)
				}
				return
			}
			var text, doneText, completed string
			next := int64(9)
			var p sse.Parser
			_ = p.Feed([]byte(out.String()), func(e sse.Event) bool {
				r := gjson.ParseBytes(e.Data)
				if n := r.Get("sequence_number").Int(); n != next {
					t.Fatalf("sequence number %d, want %d:\n%s", n, next, out.String())
				}
				next++
				if id := r.Get("item_id"); id.Exists() && (id.String() != "msg_client" || r.Get("output_index").Int() != 0) {
					t.Fatalf("item %s at %d, want the client's msg_client at 0:\n%s", id, r.Get("output_index").Int(), out.String())
				}
				switch r.Get("type").String() {
				case "response.output_text.delta":
					text += r.Get("delta").String()
				case "response.output_text.done":
					doneText = r.Get("text").String()
				case "response.completed":
					completed = r.Get("response.id").String() + " " + r.Get("response.output.0.id").String() + " " +
						r.Get("response.output.0.content.0.text").String()
				}
				return true
			})
			whole := tt.delivered + tt.want
			if text != tt.want || doneText != whole || completed != "resp_client msg_client "+whole {
				t.Fatalf("deltas %q (want %q), done %q, completed %q:\n%s", text, tt.want, doneText, completed, out.String())
			}
			for _, gone := range []string{"response.created", "response.in_progress", "reasoning", "content_part.added", "resp_new", "msg_new"} {
				if strings.Contains(out.String(), gone) {
					t.Fatalf("%s reached the client:\n%s", gone, out.String())
				}
			}
		})
	}
}

func concat(parts ...[][]byte) [][]byte {
	var all [][]byte
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

// TestRestartSpliceGemini: a Gemini client's restarted answer (SSE chunks)
// is held until its text parts reproduced the delivered text — thought
// parts and text-less chunks before it dropped — and the chunk completing
// it goes on with only its new text; a departing text, a function call or a
// finish before the delivered text diverges with nothing let through.
func TestRestartSpliceGemini(t *testing.T) {
	chunk := func(parts, finish string) []byte {
		c := `{"candidates":[{"content":{"role":"model","parts":` + parts + `}` + finish + `}],"usageMetadata":{"promptTokenCount":3}}`
		return sse.Append(nil, "", []byte(c))
	}
	text := func(s string) []byte { return chunk(`[{"text":"`+s+`"}]`, "") }
	thought := chunk(`[{"text":"hmm","thought":true}]`, "")
	stop := chunk(`[{"text":""}]`, `,"finishReason":"STOP"`)
	tests := []struct {
		name      string
		delivered string
		events    [][]byte
		want      string
		diverged  bool
	}{
		{"reproduced inside a chunk", "Hello fr", [][]byte{thought, text("Hell"), text("o from"), text(" key-a"), stop}, "om key-a", false},
		{"reproduced at a chunk's end", "Hello from", [][]byte{text("Hello"), text(" from"), text(" key-a"), stop}, " key-a", false},
		{"thought and text in one chunk", "Hel", [][]byte{chunk(`[{"text":"hmm","thought":true},{"text":"Hello"}]`, ""), stop}, "lo", false},
		{"diverges", "Hello fr", [][]byte{text("Hi, this"), text(" is key-a"), stop}, "", true},
		{"ends short of the delivered text", "Hello from key-a", [][]byte{text("Hello"), stop}, "", true},
		{"a function call", "Hello", [][]byte{chunk(`[{"functionCall":{"name":"f","args":{}}}]`, ""), stop}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, got, sp, s := spliceRun(translate.Gemini, tt.delivered, nil, tt.events...)
			if sp.diverged != tt.diverged {
				t.Fatalf("diverged = %v, want %v (out %q)", sp.diverged, tt.diverged, out)
			}
			if tt.diverged {
				if out != "" || s.streamErr != errRestartDiverged {
					t.Fatalf("a diverged restart let %q through (streamErr %v)", out, s.streamErr)
				}
				return
			}
			if got != tt.want || !sp.matched || !strings.Contains(out, `"finishReason":"STOP"`) || strings.Contains(out, "thought") {
				t.Fatalf("client text %q, want %q:\n%s", got, tt.want, out)
			}
		})
	}
}

// TestRestartRequestGemini: a Gemini client's restart request leaves out its
// thinking options and sets no stream member (the URL says it).
func TestRestartRequestGemini(t *testing.T) {
	body, err := withoutReasoning(translate.Gemini, []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0,"thinkingConfig":{"thinkingBudget":512}}}`))
	if err != nil || gjson.GetBytes(body, "generationConfig.thinkingConfig").Exists() || gjson.GetBytes(body, "stream").Exists() ||
		gjson.GetBytes(body, "contents.#").Int() != 1 || gjson.GetBytes(body, "generationConfig.temperature").Raw != "0" {
		t.Fatalf("%s %v", body, err)
	}
}
