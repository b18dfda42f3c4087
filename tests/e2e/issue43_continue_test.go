package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestContinuedAnthropicStreamCountsInput: an Anthropic client's stream cut
// and continued on the fallback reports the prompt's input tokens — in
// message_delta's usage (message_start's too when the first attempt knew
// them) and in the request log — never 0, in both layouts (the first
// attempt Anthropic or OpenAI).
func TestContinuedAnthropicStreamCountsInput(t *testing.T) {
	t.Parallel()
	forEachLayout(t, func(t *testing.T, two bool) {
		r := newContinueRig(t, two, nil, nil)
		r.fault(fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2, Times: 1})
		resp, body := r.gw.do(http.MethodPost, "/v1/messages", map[string]any{"model": rescueCombo, "max_tokens": 64, "stream": true,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"x-api-key": r.gw.key})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "omniroute continued") {
			t.Fatalf("not a continued stream: %d %s", resp.StatusCode, body)
		}
		var startIn, deltaIn int64 = -1, -1
		sc := bufio.NewScanner(bytes.NewReader(body))
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			switch gjson.Get(data, "type").String() {
			case "message_start":
				startIn = gjson.Get(data, "message.usage.input_tokens").Int()
			case "message_delta":
				deltaIn = gjson.Get(data, "usage.input_tokens").Int()
			}
		}
		if deltaIn <= 0 {
			t.Errorf("message_delta input_tokens %d, want the prompt's (message_start: %d):\n%s", deltaIn, startIn, body)
		}
		if !two && startIn <= 0 {
			t.Errorf("message_start input_tokens %d with an Anthropic first attempt, want its count:\n%s", startIn, body)
		}
		var prompt int64
		for i := 0; i < 40 && prompt == 0; i++ { // the log is written in batches
			_, m := r.gw.mgmt(http.MethodGet, "/api/logs?limit=1", nil)
			b, _ := json.Marshal(m)
			if strings.Contains(string(b), "continuedFromChars") {
				prompt = gjson.GetBytes(b, "logs.0.promptTokens").Int()
				if prompt == 0 {
					t.Fatalf("the request log counts no prompt tokens for the continued answer: %s", b)
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		if prompt != deltaIn {
			t.Errorf("log promptTokens %d, client message_delta input_tokens %d: want the same count", prompt, deltaIn)
		}
	})
}
