package providers

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Replay is what a provider's Chat Completions wire takes back of an
// assistant message's reasoning. The gateway's Chat pivot carries two members
// OpenAI's reference does not define on input messages: reasoning_content
// (the reasoning text) and thinking_blocks (signed and redacted thinking, in
// LiteLLM's form), so a Messages or Responses client's replayed turn keeps
// them for an upstream that can use them.
type Replay string

const (
	// ReplayNone (the default of an OpenAI-wire row): neither member is
	// sent. OpenAI's reference defines no reasoning on input messages, and
	// strict vendors validating their schema answer 400 to an unknown member
	// (Groq, Mistral, OpenAI itself).
	ReplayNone Replay = ""
	// ReplayReasoningContent keeps reasoning_content, drops thinking_blocks:
	// DeepSeek's thinking mode reads reasoning_content back (and requires it
	// after a turn that called tools).
	ReplayReasoningContent Replay = "reasoning_content"
	// ReplayReasoning sends reasoning_content as "reasoning" and drops
	// thinking_blocks: OpenRouter's "preserving reasoning" input member
	// (a row's SignedReplay may give the blocks back in its own members first).
	ReplayReasoning Replay = "reasoning"
	// ReplayAll keeps both: an executor that translates the Chat body to
	// its own wire and gives signed thinking back (a module's, set on its row).
	ReplayAll Replay = "all"
)

// The pivot's members outside OpenAI's reference, as JSON keys.
var (
	keyReasoningContent = []byte(`"reasoning_content"`)
	keyThinkingBlocks   = []byte(`"thinking_blocks"`)
)

// ChatBody is the Chat Completions body body as this provider's wire takes
// it: the pivot's reasoning_content and thinking_blocks kept, renamed or
// removed from every message according to the row's Replay. A body carrying
// neither is returned as it is (nothing allocated).
func (p *Provider) ChatBody(body []byte) ([]byte, error) {
	if p.ReasoningReplay == ReplayAll ||
		!bytes.Contains(body, keyThinkingBlocks) && !bytes.Contains(body, keyReasoningContent) {
		return body, nil
	}
	out := body
	var err error
	if p.SignedReplay != nil && bytes.Contains(body, keyThinkingBlocks) {
		if out, err = p.SignedReplay(body); err != nil {
			return nil, err
		}
		body = out
	}
	for i, m := range gjson.GetBytes(body, "messages").Array() {
		at := "messages." + strconv.Itoa(i) + "."
		if m.Get("thinking_blocks").Exists() {
			if out, err = sjson.DeleteBytes(out, at+"thinking_blocks"); err != nil {
				return nil, err
			}
		}
		rc := m.Get("reasoning_content")
		if !rc.Exists() || p.ReasoningReplay == ReplayReasoningContent {
			continue
		}
		if out, err = sjson.DeleteBytes(out, at+"reasoning_content"); err != nil {
			return nil, err
		}
		if p.ReasoningReplay == ReplayReasoning && rc.String() != "" && !m.Get("reasoning").Exists() {
			if out, err = sjson.SetBytes(out, at+"reasoning", rc.String()); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
