package copilot

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/openai"
)

// Copilot's chat API carries a model's reasoning in two members of its own
// on an answer's message and on stream deltas, and takes them back on an
// assistant message of the next request: reasoning_text (the reasoning's
// text) and reasoning_opaque (an opaque token standing for the reasoning,
// which the next turn gives back as it came). GitHub publishes no reference
// for this API; the members are the ones its own client, the GitHub Copilot
// Chat extension for VS Code (microsoft/vscode-copilot-chat), reads from
// answers and deltas ("Copilot API fields", src/platform/thinking/common/thinking.ts)
// and sets on the assistant messages it sends (CopilotChatEndpoint,
// src/platform/endpoint/node/copilotChatEndpoint.ts).
//
// The gateway's Chat pivot holds them as reasoning_content and one thinking
// block (thinking_blocks, LiteLLM's form) whose signature is the opaque
// token sealed (sealPrefix + the token): a Messages client keeps it as its
// thinking block's signature, and only a token Copilot gave is sent back to it.

// sealPrefix starts a thinking block's signature that carries Copilot's
// reasoning_opaque.
const sealPrefix = "omniroute.copilot.v1:"

// The members' JSON keys.
var (
	keyOpaque = []byte(`"reasoning_opaque"`)
	keyText   = []byte(`"reasoning_text"`)
)

// NewExecutor is the module's executor over the wiring place's client: the
// OpenAI executor, its chat answers read into the pivot (Answer, Chunk).
func NewExecutor(d providers.ExecDeps) providers.Executor {
	return providers.ChatRewriter{Wire: openai.New(d.Client, d.UserAgent), Answer: Answer, Chunk: Chunk}
}

// withPivot adds the pivot's members to the object at path of doc (a
// message or a delta) from its reasoning_text and reasoning_opaque: the
// text as reasoning_content (when it has no reasoning text of its own), the
// token as a thinking block's sealed signature (with the text, in a message).
func withPivot(doc []byte, path string, obj gjson.Result, full bool) []byte {
	text := obj.Get("reasoning_text").String()
	if op := obj.Get("reasoning_opaque").String(); op != "" && !obj.Get("thinking_blocks").Exists() {
		block := `[{"type":"thinking",`
		if full {
			block += `"thinking":` + jsonString(text) + `,`
		}
		block += `"signature":` + jsonString(sealPrefix+op) + `}]`
		if out, err := sjson.SetRawBytes(doc, path+".thinking_blocks", []byte(block)); err == nil {
			doc = out
		}
	}
	if text != "" && obj.Get("reasoning_content").String() == "" && obj.Get("reasoning").String() == "" {
		if out, err := sjson.SetBytes(doc, path+".reasoning_content", text); err == nil {
			doc = out
		}
	}
	return doc
}

// Answer is a Copilot chat answer in the pivot's form (withPivot on each
// choice's message); one without the members is returned as it is.
func Answer(body []byte) []byte {
	return rewrite(body, "message", true)
}

// Chunk is a Copilot chat.completion.chunk in the pivot's form (withPivot on
// each choice's delta).
func Chunk(data []byte) []byte {
	return rewrite(data, "delta", false)
}

func rewrite(doc []byte, member string, full bool) []byte {
	if !bytes.Contains(doc, keyOpaque) && !bytes.Contains(doc, keyText) {
		return doc
	}
	out := doc
	gjson.GetBytes(doc, "choices").ForEach(func(i, c gjson.Result) bool {
		out = withPivot(out, "choices."+i.String()+"."+member, c.Get(member), full)
		return true
	})
	return out
}

// Replay is the Chat body as Copilot takes a turn's reasoning back: a
// message's first thinking block sealed from Copilot's token becomes its
// reasoning_opaque, that block's text its reasoning_text (a message that
// has a reasoning_opaque of its own keeps it); thinking_blocks are removed
// everywhere, and blocks of another upstream are not sent.
func Replay(body []byte) ([]byte, error) {
	return providers.ReplayThinking(body, "reasoning_opaque", giveOpaque)
}

// giveOpaque writes message m's reasoning_opaque (and reasoning_text) from
// its first thinking block sealed from Copilot's token.
func giveOpaque(out []byte, at string, m, tb gjson.Result) ([]byte, error) {
	var opaque, text string
	tb.ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").String() != "thinking" {
			return true
		}
		op, ok := strings.CutPrefix(b.Get("signature").String(), sealPrefix)
		if !ok || op == "" {
			return true
		}
		opaque, text = op, b.Get("thinking").String()
		return false
	})
	if opaque == "" {
		return out, nil
	}
	out, err := sjson.SetBytes(out, at+"reasoning_opaque", opaque)
	if err != nil || text == "" || m.Get("reasoning_text").Exists() {
		return out, err
	}
	return sjson.SetBytes(out, at+"reasoning_text", text)
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
