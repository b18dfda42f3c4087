package responses

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// signedBlock is one entry of a Chat message's thinking_blocks (LiteLLM's
// form of Anthropic's blocks, as an upstream that signs its reasoning
// answers): reasoning text with its signature, or redacted reasoning.
type signedBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// sealedPrefix starts the encrypted_content of a reasoning item that carries
// Chat thinking_blocks. The value is opaque to the client (the Responses API
// asks it to send the item back unchanged); the gateway reads it back into
// thinking_blocks on the next turn.
const sealedPrefix = "omniroute.thinking.v1:"

// sealBlocks is the encrypted_content carrying blocks ("" for none).
func sealBlocks(blocks []signedBlock) string {
	if len(blocks) == 0 {
		return ""
	}
	b, _ := json.Marshal(blocks)
	return sealedPrefix + base64.StdEncoding.EncodeToString(b)
}

// openBlocks reads a reasoning item's encrypted_content back into
// thinking_blocks; another upstream's content (or a damaged one) gives none.
func openBlocks(enc string) []signedBlock {
	rest, ok := strings.CutPrefix(enc, sealedPrefix)
	if !ok {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil
	}
	var blocks []signedBlock
	if json.Unmarshal(b, &blocks) != nil {
		return nil
	}
	out := blocks[:0]
	for _, t := range blocks {
		if t.Type == "thinking" && t.Signature != "" || t.Type == "redacted_thinking" && t.Data != "" {
			out = append(out, t)
		}
	}
	return out
}

// readBlocks reads the signed entries of a Chat thinking_blocks value.
func readBlocks(tb gjson.Result) []signedBlock {
	var out []signedBlock
	tb.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "thinking":
			if sig := b.Get("signature").String(); sig != "" {
				out = append(out, signedBlock{Type: "thinking", Thinking: b.Get("thinking").String(), Signature: sig})
			}
		case "redacted_thinking":
			if d := b.Get("data").String(); d != "" {
				out = append(out, signedBlock{Type: "redacted_thinking", Data: d})
			}
		}
		return true
	})
	return out
}
