//go:build linux

package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// keySpend is a client key's spend as GET /api/keys shows it.
func (p *proc) keySpend(id string) (usd float64, tokens int64) {
	p.t.Helper()
	resp, body := p.do(http.MethodGet, "/api/keys", nil, map[string]string{"Authorization": "Bearer " + p.token})
	var out struct {
		Keys []struct {
			ID    string `json:"id"`
			Spend struct {
				USD    float64 `json:"usd"`
				Tokens int64   `json:"tokens"`
			} `json:"spend"`
		} `json:"keys"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
		p.t.Fatalf("GET /api/keys: %d %q", resp.StatusCode, body)
	}
	for _, k := range out.Keys {
		if k.ID == id {
			return k.Spend.USD, k.Spend.Tokens
		}
	}
	p.t.Fatalf("no key %s in %s", id, body)
	return 0, 0
}

// logRow is one request log row of GET /api/logs.
type logRow struct {
	Status           int      `json:"status"`
	PromptTokens     int      `json:"promptTokens"`
	CompletionTokens int      `json:"completionTokens"`
	CostUSD          *float64 `json:"costUsd"`
	Stream           bool     `json:"stream"`
}

// keyLogs waits until key id has n log rows and returns them.
func (p *proc) keyLogs(id string, n int) []logRow {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := p.do(http.MethodGet, "/api/logs?keyId="+id, nil, map[string]string{"Authorization": "Bearer " + p.token})
		var out struct {
			Logs []logRow `json:"logs"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
			p.t.Fatalf("GET /api/logs: %d %q", resp.StatusCode, body)
		}
		if len(out.Logs) >= n {
			return out.Logs
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("key %s has %d log rows after 10 s, want %d", id, len(out.Logs), n)
		}
		time.Sleep(50 * time.Millisecond) // the log writer's batch
	}
}

// newKey makes a client key with budget (nil: none) and returns its id and value.
func (p *proc) newKey(name string, budget map[string]any) (id, key string) {
	p.t.Helper()
	body := map[string]any{"name": name}
	if budget != nil {
		body["budget"] = budget
	}
	m := p.mgmt(http.StatusCreated, http.MethodPost, "/api/keys", body)
	id, _ = m["id"].(string)
	key, _ = m["key"].(string)
	if id == "" || key == "" {
		p.t.Fatalf("no key in %v", m)
	}
	return id, key
}

// TestBudgetsChargeWhatWasRelayed (issue 39): an upstream that reports no
// usage, and a client that cuts its stream after the first words, are
// charged what was relayed (the prompt counted from the request, the output
// from the text sent): the key's spend grows, the log row has tokens and a
// cost, and a budget is eventually refused, where all of it was 0 before.
func TestBudgetsChargeWhatWasRelayed(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	up.SetFault("sk-nousage-0123456789", fakeupstream.Fault{Mode: fakeupstream.ModeNoUsage})
	up.SetFault("sk-drip-0123456789", fakeupstream.Fault{Mode: fakeupstream.ModeSlowDrip, DripMs: 400})
	p := start(t, t.TempDir())
	price := map[string]any{"inputPerMTok": 1000, "outputPerMTok": 1000}
	for _, c := range []struct{ name, key, model string }{
		{"no usage", "sk-nousage-0123456789", "m-nousage"},
		{"drip", "sk-drip-0123456789", "m-drip"},
	} {
		id := p.addConn(c.name, base, c.key, c.model, 1)
		p.mgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+id, map[string]any{"pricing": map[string]any{c.model: price}})
	}

	t.Run("an upstream that sends no usage", func(t *testing.T) {
		id, key := p.newKey("no usage", nil)
		hdr := map[string]string{"Authorization": "Bearer " + key}
		for _, stream := range []bool{false, true} {
			resp, body := p.do(http.MethodPost, "/v1/chat/completions", chat("m-nousage", stream), hdr)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "from") {
				t.Fatalf("stream %v: %d %s", stream, resp.StatusCode, body)
			}
		}
		for _, r := range p.keyLogs(id, 2) {
			if r.Status != 200 || r.PromptTokens <= 0 || r.CompletionTokens <= 0 || r.CostUSD == nil || *r.CostUSD <= 0 {
				t.Errorf("log row %+v: want its tokens and cost counted", r)
			}
		}
		if usd, tokens := p.keySpend(id); usd <= 0 || tokens <= 0 {
			t.Errorf("the key's spend $%v, %d tokens: want more than 0", usd, tokens)
		}
		// Usage reports sum the rows.
		resp, body := p.do(http.MethodGet, "/api/usage?range=hour&by=key", nil, map[string]string{"Authorization": "Bearer " + p.token})
		var usage struct {
			Series []struct {
				Key   string `json:"key"`
				Total struct {
					TokensIn, TokensOut int64
					CostUSD             float64 `json:"costUsd"`
				} `json:"total"`
			} `json:"series"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &usage) != nil {
			t.Fatalf("GET /api/usage: %d %s", resp.StatusCode, body)
		}
		found := false
		for _, s := range usage.Series {
			if s.Key == id {
				found = true
				if s.Total.TokensIn <= 0 || s.Total.TokensOut <= 0 || s.Total.CostUSD <= 0 {
					t.Errorf("usage by key: %+v, want tokens and cost", s.Total)
				}
			}
		}
		if !found {
			t.Errorf("usage by key has no series for the key: %s", body)
		}
	})

	t.Run("a client that cuts its stream", func(t *testing.T) {
		id, key := p.newKey("cutter", nil)
		b, _ := json.Marshal(chat("m-drip", true))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/chat/completions", strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := p.client.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %v %v", resp, err)
		}
		sc := bufio.NewScanner(resp.Body)
		got := false
		for !got && sc.Scan() {
			line := sc.Text() // the first words, not the role chunk's empty content
			got = strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`)
		}
		_ = resp.Body.Close() // cut after the first words
		cancel()
		if !got {
			t.Fatalf("no content before the cut: %v", sc.Err())
		}
		rows := p.keyLogs(id, 1)
		if r := rows[0]; r.PromptTokens <= 0 || r.CompletionTokens <= 0 || r.CostUSD == nil || *r.CostUSD <= 0 {
			t.Errorf("the cut stream's row %+v: want its tokens and cost counted", r)
		}
		if usd, tokens := p.keySpend(id); usd <= 0 || tokens <= 0 {
			t.Errorf("the key's spend $%v, %d tokens after a cut stream: want more than 0", usd, tokens)
		}
	})

	t.Run("a budget is eventually refused", func(t *testing.T) {
		_, key := p.newKey("budgeted", map[string]any{"tokens": 60, "period": "total"})
		hdr := map[string]string{"Authorization": "Bearer " + key}
		for i := range 40 {
			resp, body := p.do(http.MethodPost, "/v1/chat/completions", chat("m-nousage", i%2 == 1), hdr)
			if resp.StatusCode == http.StatusTooManyRequests {
				checkEnvelope(t, "over budget", resp.StatusCode, resp.Header.Get("Content-Type"), body, 429, "KEY_BUDGET_EXCEEDED")
				t.Logf("refused after %d requests", i)
				return
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
			}
		}
		t.Fatal("40 requests that report no usage all passed a 60-token budget")
	})
	p.mustBeUp("after the spend checks")
}

// TestPricesAreBoundedEndToEnd (issue 39): a price past $10,000 per million
// tokens is refused, by the API and in a pricing file; a pricingFile that is
// a FIFO is refused at once (it hung the settings write), and a file that is
// not a pricing file is refused without quoting it; keys and usage still
// answer whole JSON.
func TestPricesAreBoundedEndToEnd(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	p := start(t, t.TempDir())
	conn := p.addConn("priced", base, "sk-priced-0123456789", "m-priced", 1)
	admin := map[string]string{"Authorization": "Bearer " + p.token}
	for _, v := range []any{1e308, 10000.5, -1} {
		resp, body := p.do(http.MethodPatch, "/api/providers/"+conn,
			[]byte(fmt.Sprintf(`{"pricing":{"m-priced":{"inputPerMTok":1,"outputPerMTok":%v}}}`, v)), admin)
		checkEnvelope(t, fmt.Sprintf("price %v", v), resp.StatusCode, resp.Header.Get("Content-Type"), body, 400, "INVALID_PRICING")
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fifo := filepath.Join(dir, "prices.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, leak string }{
		{"a price of 1e308", write("big.json", `{"entries":[{"model":"m-priced","inputPerMTok":1e308,"outputPerMTok":1}]}`), ""},
		{"a FIFO", fifo, ""},
		{"a file that is not a pricing file", write("secret.txt", "Secret-value-xyz\n"), "'S'"},
	} {
		began := time.Now()
		resp, body := p.do(http.MethodPatch, "/api/settings", map[string]any{"pricingFile": c.path}, admin)
		checkEnvelope(t, c.name, resp.StatusCode, resp.Header.Get("Content-Type"), body, 400, "INVALID_SETTING")
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("%s: refused after %v", c.name, d)
		}
		if c.leak != "" && strings.Contains(string(body), c.leak) {
			t.Errorf("%s: the error quotes the file: %s", c.name, body)
		}
	}
	// A served, priced request; keys and usage answer whole JSON.
	p.mgmt(http.StatusOK, http.MethodPatch, "/api/providers/"+conn,
		map[string]any{"pricing": map[string]any{"m-priced": map[string]any{"inputPerMTok": 10000, "outputPerMTok": 10000}}})
	if resp, body := p.do(http.MethodPost, "/v1/chat/completions", chat("m-priced", false), p.auth()); resp.StatusCode != 200 {
		t.Fatalf("priced request: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/api/keys", "/api/usage?range=hour&by=key"} {
		if m := p.mgmt(http.StatusOK, http.MethodGet, path, nil); len(m) == 0 {
			t.Errorf("%s: an empty answer", path)
		}
	}
	p.mustBeUp("after the price checks")
}
