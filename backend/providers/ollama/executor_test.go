package ollama

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
)

// answer is a Doer that records the request and answers status with body.
type answer struct {
	status int
	body   string
	req    *http.Request
	sent   []byte
}

func (a *answer) Do(req *http.Request) (*http.Response, error) {
	a.req = req
	a.sent, _ = io.ReadAll(req.Body)
	return &http.Response{StatusCode: a.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(a.body))}, nil
}

func TestExecutor(t *testing.T) {
	p, _ := providers.NewCatalog().WithModules(Module()).Lookup(ID)
	now := func() time.Time { return time.Unix(1700000000, 0) }
	chat := `{"model":"x","stream":false,"messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, path, body string
		stream           bool
		status           int
		upstream         string
		wantURL          string
		wantStatus       int
		want             map[string]string
	}{
		{"chat", "", chat, false, 200, `{"model":"llama3.2","message":{"role":"assistant","content":"hey"},"done":true,"done_reason":"stop","prompt_eval_count":2,"eval_count":1}`,
			"http://h:11434/api/chat", 200, map[string]string{"choices.0.message.content": "hey", "usage.total_tokens": "3"}},
		{"not found restated", "", chat, false, 404, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			"http://h:11434/api/chat", 404, map[string]string{"error.code": "model_not_found", "error.message": `model "llama9" not found, try pulling it first`}},
		{"runner crash restated", "", chat, false, 500, `{"error":"llama runner process has terminated"}`,
			"http://h:11434/api/chat", 500, map[string]string{"error.code": "server_error"}},
		{"embeddings", "/embeddings", `{"model":"x","input":"a"}`, false, 200, `{"model":"e","embeddings":[[0.5]],"prompt_eval_count":1}`,
			"http://h:11434/api/embed", 200, map[string]string{"data.0.embedding.0": "0.5"}},
		{"completions refused", "/completions", `{"model":"x","prompt":"a"}`, false, 200, ``, "", 404, map[string]string{"error.code": "not_found"}},
		{"image by URL refused", "", `{"model":"x","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, false, 200, ``, "", 400,
			map[string]string{"error.code": "invalid_request_error"}},
	}
	for _, c := range cases {
		d := &answer{status: c.status, body: c.upstream}
		base := "http://h:11434/"
		if c.name == "embeddings" {
			base = "http://h:11434/v1" // a base URL stored for the OpenAI-compatible surface
		}
		tg := providers.Target{Provider: p, BaseURL: base, Model: "llama3.2"}
		resp, err := New(d, "OmniRoute/test", now).Do(context.Background(), &tg, providers.Call{Body: []byte(c.body), Path: c.path, Stream: c.stream})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.wantStatus {
			t.Fatalf("%s: status %d %s", c.name, resp.StatusCode, out)
		}
		for path, want := range c.want {
			if got := gjson.GetBytes(out, path).String(); got != want {
				t.Errorf("%s: %s = %q, want %q (%s)", c.name, path, got, want, out)
			}
		}
		if c.wantURL != "" {
			if d.req == nil || d.req.URL.String() != c.wantURL || gjson.GetBytes(d.sent, "model").String() != "llama3.2" || d.req.Header.Get("Authorization") != "" {
				t.Errorf("%s: sent %v %s", c.name, d.req, d.sent)
			}
		} else if d.req != nil {
			t.Errorf("%s: sent upstream although refused", c.name)
		}
	}
}
