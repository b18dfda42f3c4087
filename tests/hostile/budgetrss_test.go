//go:build linux

package hostile

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBodyBudgetBoundsRSS: with bodies filling the whole body budget at once
// (16 concurrent 30 MB bodies against the default 256 MiB budget, the
// hostile probe's attack), the process's peak RSS grows by no more than
// 1.5× the budget: the soft memory limit (budget + 32 MiB) makes the garbage
// collector reclaim released bodies before the heap doubles (before: 686 MiB,
// 2.7× the budget; with it 299–329 MiB over idle, so 1.25× flaked on CI).
func TestBodyBudgetBoundsRSS(t *testing.T) {
	u := newUpstream(t)
	p := start(t, t.TempDir())
	p.addConn("up", u.URL, "sk-up-0123456789", "m", 1)
	const budget = 256 << 20 // the default
	p.settings(map[string]any{"maxBodyBytes": 32 << 20, "bodyBudgetBytes": budget})
	time.Sleep(200 * time.Millisecond)
	idle, _ := p.memKB()
	big := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a", 30<<20) + `"}]}`)
	codes := postConcurrently(t, p, 16, big, nil)
	t.Logf("16 × 30 MB bodies against a 256 MiB budget: %v", codes)
	if codes[200] < 8 {
		t.Errorf("fewer than eight big bodies served: %v", codes)
	}
	p.memBound(idle, budget*3/2>>20, "16 × 30 MB bodies, 256 MiB budget")
	p.mustBeUp("after the big bodies")
}

// postConcurrently posts body to /v1/chat/completions from n clients at once
// and counts the answers by status; check, when set, sees each answer.
func postConcurrently(t *testing.T, p *proc, n int, body []byte, check func(status int, h http.Header, b []byte)) map[int]int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 60 * time.Second}
			req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+p.key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				t.Errorf("big body: %v", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if check != nil {
				check(resp.StatusCode, resp.Header, b)
			}
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return codes
}
