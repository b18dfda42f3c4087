package translate

import (
	"errors"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate/sse"
)

// ChunkKind says what a Chat stream event is to a translator from Chat.
type ChunkKind int

// The kinds of Chat stream events.
const (
	ChunkSkip ChunkKind = iota // a comment: nothing to translate
	ChunkDone                  // data: [DONE]
	ChunkData                  // a chat.completion.chunk, parsed
)

// UpstreamStreamError is an error an upstream reported inside its Chat stream.
type UpstreamStreamError struct{ Message string }

func (e *UpstreamStreamError) Error() string { return "upstream stream error: " + e.Message }

// ReadChatChunk reads one Chat stream event for a translator from Chat: a
// comment is skipped, [DONE] says so, a chunk comes back parsed; an event
// that is not JSON, or that carries an "error", is an error.
func ReadChatChunk(ev sse.Event) (ChunkKind, gjson.Result, error) {
	switch {
	case ev.Comment:
		return ChunkSkip, gjson.Result{}, nil
	case ev.IsDone():
		return ChunkDone, gjson.Result{}, nil
	case !jsonv.Valid(ev.Data):
		return ChunkSkip, gjson.Result{}, errors.New("the upstream sent an event that is not JSON")
	}
	root := gjson.ParseBytes(ev.Data)
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		msg := e.Get("message").String()
		if msg == "" {
			msg = e.String()
		}
		return ChunkSkip, root, &UpstreamStreamError{Message: msg}
	}
	return ChunkData, root, nil
}

// ChatUsage reads a Chat usage object: prompt and completion tokens, the
// cached prompt tokens and the reasoning tokens.
func ChatUsage(u gjson.Result) Usage {
	return Usage{InputTokens: int(u.Get("prompt_tokens").Int()), OutputTokens: int(u.Get("completion_tokens").Int()),
		CacheReadTokens: int(u.Get("prompt_tokens_details.cached_tokens").Int()), ReasoningTokens: int(u.Get("completion_tokens_details.reasoning_tokens").Int())}
}

// ChatReader is what a translator from Chat keeps of its input stream: the
// model and usage the chunks report, whether it finished (a finish_reason or
// [DONE]), failed, or was ended.
type ChatReader struct {
	Model     string
	Usage     Usage
	SawFinish bool
	SawDone   bool
	Failed    bool
	Ended     bool
}

// Complete reports whether the stream ended properly and did not fail.
func (r *ChatReader) Complete() bool { return !r.Failed && (r.SawFinish || r.SawDone) }

// Next reads one event: ok with a chunk to translate (its model and usage
// already noted), or not ok with nothing to write; an error fails the stream.
func (r *ChatReader) Next(ev sse.Event) (root gjson.Result, ok bool, err error) {
	if r.Failed || r.Ended {
		return root, false, nil
	}
	kind, root, err := ReadChatChunk(ev)
	switch {
	case err != nil:
		r.Failed = true
		return root, false, err
	case kind == ChunkDone:
		r.SawDone = true
		return root, false, nil
	case kind == ChunkSkip:
		return root, false, nil
	}
	if m := root.Get("model").String(); m != "" {
		r.Model = m
	}
	if u := root.Get("usage"); u.IsObject() {
		r.Usage = ChatUsage(u)
	}
	return root, true, nil
}
