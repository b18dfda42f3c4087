package responses

import (
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Vendor-reference answers (issue 41, M5): a Chat completion carrying signed
// reasoning in LiteLLM's documented form — message.reasoning_content beside
// message.thinking_blocks [{type: "thinking", thinking, signature}], plus a
// redacted_thinking block {type, data} — as an upstream that signs its
// reasoning (AWS Converse, Anthropic through LiteLLM) answers, and the
// same streamed: reasoning_content deltas, then a thinking_blocks delta
// carrying the signature, then one carrying the redacted block.
const (
	vendorThinking  = "The capital of France is Paris."
	vendorSignature = "EqoBCkgIARABGAIiQL2UoU0b1OHYi+yCHpBY7U6FQW8/FcoLewocJQPa2HnmLM+NECy50y44F/kD4SULFXi57buI9fAvyBwtyjlOiO0SDE3+r3spdg6PLOo9PBoMma2ku5OTAoR46j9VIjDRlvNmBvff7YW4WI9oU8XagaOBSxLPxElrhyuxppEn7m6bfT40dqBSTDrfiw4FYB4qEPETTI6TA6wtjGAAqmFqKTo="
	vendorRedacted  = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfUXG7sxRZtIvu8OFvkGtoP1zHlCVj7h0vJk/gz2lVtKhIoBUCC+e7oU3Xo0hT3cAZ0PsR3GgD4MVfEMy4zfbyzj2cr0bfQbXM="

	vendorSignedChat = `{"id":"chatcmpl-3f1b","object":"chat.completion","created":1741570283,"model":"claude-3-7-sonnet-20250219","choices":[{"index":0,"message":{"role":"assistant","content":"Paris.","reasoning_content":"` + vendorThinking + `","thinking_blocks":[{"type":"thinking","thinking":"` + vendorThinking + `","signature":"` + vendorSignature + `"},{"type":"redacted_thinking","data":"` + vendorRedacted + `"}]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":42,"completion_tokens":87,"total_tokens":129}}`

	codexRequest = `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Capital of France?"}]}],"include":["reasoning.encrypted_content"],"store":false,"stream":true}`
)

var vendorSignedChunks = []string{
	chunk(`{"role":"assistant","content":"","reasoning_content":"The capital of France"}`),
	chunk(`{"reasoning_content":" is Paris."}`),
	chunk(`{"thinking_blocks":[{"type":"thinking","thinking":"","signature":"` + vendorSignature + `"}]}`),
	chunk(`{"thinking_blocks":[{"type":"redacted_thinking","data":"` + vendorRedacted + `"}]}`),
	chunk(`{"content":"Paris."}`),
	`{"id":"c1","object":"chat.completion.chunk","created":1700000000,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	"[DONE]",
}

const wantSigned = `[{"type":"thinking","thinking":"` + vendorThinking + `","signature":"` + vendorSignature + `"},{"type":"redacted_thinking","data":"` + vendorRedacted + `"}]`

// replayed is the Chat request a Responses client's next turn becomes when
// it sends the answer's output items back (as Codex does with store false).
func replayed(t *testing.T, output string) []byte {
	t.Helper()
	next := codexRequest
	for _, it := range gjson.Parse(output).Array() {
		next, _ = sjson.SetRaw(next, "input.-1", it.Raw)
	}
	next, _ = sjson.SetRaw(next, "input.-1", `{"type":"message","role":"user","content":[{"type":"input_text","text":"And of Spain?"}]}`)
	chat, err := RequestToChat([]byte(next))
	if err != nil {
		t.Fatal(err)
	}
	return chat
}

// TestSignedReasoningSurvives (M5): signed and redacted reasoning reach a
// Responses client that asked for reasoning.encrypted_content inside its
// reasoning item's encrypted_content, streamed or not, and its next turn
// gives them back to the upstream as the assistant turn's thinking_blocks;
// a client that did not ask gets no encrypted_content.
func TestSignedReasoningSurvives(t *testing.T) {
	t.Run("non-stream", func(t *testing.T) {
		out, err := ResponseFromChat([]byte(vendorSignedChat), []byte(codexRequest))
		if err != nil {
			t.Fatal(err)
		}
		rs := gjson.GetBytes(out, "output.0")
		if rs.Get("type").String() != "reasoning" || rs.Get("summary.0.text").String() != vendorThinking || rs.Get("encrypted_content").String() == "" {
			t.Fatalf("reasoning item: %s", out)
		}
		chat := replayed(t, gjson.GetBytes(out, "output").Raw)
		if got := gjson.GetBytes(chat, `messages.#(role=="assistant").thinking_blocks`).Raw; got != wantSigned {
			t.Fatalf("replayed thinking_blocks\n got %s\nwant %s\n%s", got, wantSigned, chat)
		}
		plain, _ := sjson.Delete(codexRequest, "include")
		out, err = ResponseFromChat([]byte(vendorSignedChat), []byte(plain))
		if err != nil {
			t.Fatal(err)
		}
		if gjson.GetBytes(out, "output.0.encrypted_content").Exists() {
			t.Fatalf("encrypted_content not asked for: %s", out)
		}
	})
	t.Run("stream", func(t *testing.T) {
		evs, _, err := streamRun(t, codexRequest, vendorSignedChunks)
		if err != nil {
			t.Fatal(err)
		}
		items := doneItems(evs)
		if len(items) != 2 || items[0]["type"] != "reasoning" || items[0]["encrypted_content"] == nil {
			t.Fatalf("items %v", items)
		}
		final := finalResponse(t, evs)
		out, _ := sjson.Set("{}", "output", final["output"])
		chat := replayed(t, gjson.Get(out, "output").Raw)
		if got := gjson.GetBytes(chat, `messages.#(role=="assistant").thinking_blocks`).Raw; got != wantSigned {
			t.Fatalf("replayed thinking_blocks\n got %s\nwant %s\n%s", got, wantSigned, chat)
		}
	})
	t.Run("another upstream's encrypted content is dropped", func(t *testing.T) {
		chat := replayed(t, `[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABo-opaque"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Paris."}]}]`)
		if gjson.GetBytes(chat, "messages.#.thinking_blocks").Raw != "[]" {
			t.Fatalf("%s", chat)
		}
	})
}
