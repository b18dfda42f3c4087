package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"testing"
	"time"
)

// TestStreamWithoutIncludeUsageIsCharged: a Chat client that streams without
// stream_options.include_usage is charged all the same (the gateway asks the
// upstream for usage on its behalf), and its stream is exactly the one the
// upstream sends a client that did not ask: no usage chunk, no "usage":null.
// A client that asked gets its usage chunk, as before.
func TestStreamWithoutIncludeUsageIsCharged(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const inPrice, outPrice = 1000.0, 2000.0 // USD per million tokens: a cent is a few tokens
	s.gw.mustMgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+s.primary, map[string]any{
		"pricing": map[string]any{"gpt-4o-mini": map[string]any{"inputPerMTok": inPrice, "outputPerMTok": outPrice}}})
	k := s.gw.mustMgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{
		"name": "streamer", "budget": map[string]any{"usd": 100, "period": "day"}})
	keyID, keyValue := k["id"].(string), k["key"].(string)

	messages := []any{map[string]any{"role": "user", "content": "hi"}}
	cases := []struct {
		name          string
		streamOptions any // nil: none
		wantUsage     bool
	}{
		{"no stream_options", nil, false},
		{"include_usage false", map[string]any{"include_usage": false}, false},
		{"stream_options null", "null", false},
		{"include_usage true", map[string]any{"include_usage": true}, true},
	}
	spent := 0.0
	for i, c := range cases {
		body := map[string]any{"model": "openai-compatible/gpt-4o-mini", "stream": true, "messages": messages}
		direct := map[string]any{"model": "gpt-4o-mini", "stream": true, "messages": messages}
		switch o := c.streamOptions.(type) {
		case nil:
		case string:
			body["stream_options"], direct["stream_options"] = json.RawMessage(o), json.RawMessage(o)
		default:
			body["stream_options"], direct["stream_options"] = o, o
		}
		resp, got := s.gw.do(http.MethodPost, "/v1/chat/completions", body, map[string]string{"Authorization": "Bearer " + keyValue})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s", c.name, resp.StatusCode, got)
		}
		// The upstream was asked for usage whatever the client sent.
		_, up := s.up.LastRequest("key-a")
		var upReq struct {
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		if err := json.Unmarshal(up, &upReq); err != nil || !upReq.StreamOptions.IncludeUsage {
			t.Errorf("%s: the upstream was not asked for usage: %s", c.name, up)
		}
		// The client's stream is the upstream's own answer to the client's request.
		want := directStream(t, s.upURL, direct)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the client's stream differs from the upstream's answer to its own request:\ngot:\n%s\nwant:\n%s", c.name, got, want)
		}
		if has := bytes.Contains(got, []byte(`"usage"`)); has != c.wantUsage {
			t.Errorf("%s: usage in the client's stream %v, want %v", c.name, has, c.wantUsage)
		}
		// The row is priced from the final usage and the key is charged.
		row := lastLogRow(t, s.gw, keyID, i+1)
		cost, ok := row["costUsd"].(float64)
		prompt, _ := row["promptTokens"].(float64)
		completion, _ := row["completionTokens"].(float64)
		if !ok || prompt == 0 || completion == 0 {
			t.Fatalf("%s: the streamed request was not charged: %v", c.name, row)
		}
		if wantCost := (prompt*inPrice + completion*outPrice) / 1e6; math.Abs(cost-wantCost) > 1e-12 {
			t.Errorf("%s: costUsd %v, want %v", c.name, cost, wantCost)
		}
		spent += cost
		if got := keySpend(t, s.gw, keyID); math.Abs(got-spent) > 1e-9 {
			t.Errorf("%s: key spend %v, want %v", c.name, got, spent)
		}
	}
}

// directStream is the fake upstream's own stream for body (key-a).
func directStream(t *testing.T, upURL string, body map[string]any) []byte {
	t.Helper()
	j, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, upURL+"/v1/chat/completions", bytes.NewReader(j))
	req.Header.Set("Authorization", "Bearer key-a")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lastLogRow waits until the key has n log rows and returns the newest.
func lastLogRow(t *testing.T, g *gatewayProc, keyID string, n int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/logs?limit=100&keyId="+keyID, nil)
		logs, _ := m["logs"].([]any)
		if len(logs) >= n {
			row, _ := logs[0].(map[string]any)
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("the key has %d log rows, want %d", len(logs), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keySpend is the key's spend in USD (GET /api/keys).
func keySpend(t *testing.T, g *gatewayProc, keyID string) float64 {
	t.Helper()
	m := g.mustMgmt(http.StatusOK, http.MethodGet, "/api/keys", nil)
	keys, _ := m["keys"].([]any)
	for _, k := range keys {
		k, _ := k.(map[string]any)
		if k["id"] == keyID {
			sp, _ := k["spend"].(map[string]any)
			usd, _ := sp["usd"].(float64)
			return usd
		}
	}
	t.Fatalf("key %s not listed", keyID)
	return 0
}
