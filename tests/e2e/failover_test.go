package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
)

// stack is a fake upstream plus a gateway process with two connections to it:
// primary (key-a, priority 1) and secondary (key-b, priority 2).
type stack struct {
	up                 *fakeupstream.Upstream
	upURL              string
	gw                 *gatewayProc
	primary, secondary string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	s := &stack{up: fakeupstream.New()}
	s.upURL = s.up.Start()
	t.Cleanup(s.up.Close) // registered first: runs after the gateway is gone
	s.gw = startGateway(t, t.TempDir(), 0)
	s.primary = s.gw.addConn("primary", s.upURL, "key-a", 1)
	s.secondary = s.gw.addConn("secondary", s.upURL, "key-b", 2)
	return s
}

// sseContent checks an OpenAI chat stream and returns its assembled text and
// whether it ended with data: [DONE].
func sseContent(t *testing.T, body []byte) (string, bool) {
	t.Helper()
	var text strings.Builder
	done := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "event: error") {
			t.Errorf("stream carries an error event: %s", body)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if done {
			t.Errorf("data after [DONE]: %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var chunk struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Errorf("stream frame is not JSON: %q: %v", data, err)
			continue
		}
		if chunk.Object != "chat.completion.chunk" {
			t.Errorf("stream frame object %q, want chat.completion.chunk", chunk.Object)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	return text.String(), done
}

// jsonContent returns choices[0].message.content of a chat completion.
func jsonContent(t *testing.T, body []byte) string {
	t.Helper()
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 {
		t.Fatalf("not a chat completion (%v): %s", err, body)
	}
	if c.Object != "chat.completion" {
		t.Errorf("object %q, want chat.completion", c.Object)
	}
	return c.Choices[0].Message.Content
}

// TestChatFailover: a user adds two accounts in the dashboard and points an
// agent at the gateway. Whatever goes wrong with the first account before the
// answer starts, the agent gets a normal answer from the second, JSON and
// streaming alike.
func TestChatFailover(t *testing.T) {
	t.Parallel()
	// hitsA: a 5xx or a reset before the first byte is retried once in place
	// before moving on; a 429 whose Retry-After exceeds failover.retryMaxHintMs
	// (5 s) moves on at once.
	cases := []struct {
		name  string
		fault *fakeupstream.Fault // on key-a; nil: healthy
		hitsA int
	}{
		{"healthy", nil, 1},
		{"500", &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500}, 2},
		{"503", &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 503}, 2},
		{"429 with Retry-After", &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "7"}}, 1},
		{"reset before headers", &fakeupstream.Fault{Mode: fakeupstream.ModeResetBeforeHeaders}, 2},
	}
	for _, stream := range []bool{false, true} {
		for _, c := range cases {
			name := c.name + "/json"
			if stream {
				name = c.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s := newStack(t)
				wantConn, wantKey, wantAttempts := s.primary, "key-a", "1"
				if c.fault != nil {
					s.up.SetFault("key-a", *c.fault)
					wantConn, wantKey, wantAttempts = s.secondary, "key-b", strconv.Itoa(c.hitsA+1)
				}

				resp, body := s.gw.chat(s.gw.key, "openai-compatible/gpt-4o-mini", stream)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d, want 200: %s\ngateway stderr:\n%s", resp.StatusCode, body, s.gw.stderr.String())
				}
				if got := resp.Header.Get("X-OmniRoute-Selected-Connection-Id"); got != wantConn {
					t.Errorf("X-OmniRoute-Selected-Connection-Id = %q, want %q (%s)", got, wantConn, wantKey)
				}
				if got := resp.Header.Get("X-OmniRoute-Attempts"); got != wantAttempts {
					t.Errorf("X-OmniRoute-Attempts = %q, want %s", got, wantAttempts)
				}
				if got := resp.Header.Get("X-OmniRoute-Provider"); got != "openai-compatible" {
					t.Errorf("X-OmniRoute-Provider = %q, want openai-compatible", got)
				}
				var text string
				if stream {
					if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
						t.Errorf("Content-Type %q, want text/event-stream", ct)
					}
					var done bool
					text, done = sseContent(t, body)
					if !done {
						t.Errorf("stream did not end with data: [DONE]:\n%s", body)
					}
				} else {
					if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
						t.Errorf("Content-Type %q, want application/json", ct)
					}
					text = jsonContent(t, body)
				}
				if want := fakeupstream.Content(wantKey); text != want {
					t.Errorf("answer %q, want %q", text, want)
				}
				wantA := c.hitsA
				wantB := 0
				if c.fault != nil {
					wantB = 1
				}
				if a, b := s.up.Hits("key-a"), s.up.Hits("key-b"); a != wantA || b != wantB {
					t.Errorf("upstream hits key-a=%d key-b=%d, want %d and %d", a, b, wantA, wantB)
				}
				if c.fault == nil && !stream {
					checkModels(t, s.gw)
				}
				s.gw.stop()
			})
		}
	}
}

// checkModels: GET /v1/models lists the connections' models as provider/model.
func checkModels(t *testing.T, g *gatewayProc) {
	t.Helper()
	resp, body := g.do(http.MethodGet, "/v1/models", nil, map[string]string{"Authorization": "Bearer " + g.key})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models: %d %s", resp.StatusCode, body)
	}
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("GET /v1/models: %v: %s", err, body)
	}
	if list.Object != "list" {
		t.Errorf("GET /v1/models object %q, want list", list.Object)
	}
	for _, m := range list.Data {
		if m.ID == "openai-compatible/gpt-4o-mini" {
			return
		}
	}
	t.Errorf("GET /v1/models does not list openai-compatible/gpt-4o-mini: %s", body)
}
