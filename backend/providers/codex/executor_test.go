package codex_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"omniroute/backend/providers"
	"omniroute/backend/providers/codex"
	"omniroute/tests/fakeupstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBodyAppliesTheBackendContract(t *testing.T) {
	out, err := codex.Body([]byte(`{"model":"m","stream":false,"store":true,"temperature":1,"top_p":0.5,"max_output_tokens":9,"input":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := gjson.ParseBytes(out)
	if r.Get("store").Type != gjson.False || r.Get("stream").Type != gjson.True || r.Get("instructions").Type != gjson.String ||
		r.Get("temperature").Exists() || r.Get("top_p").Exists() || r.Get("max_output_tokens").Exists() {
		t.Fatalf("body %s", out)
	}
	listed, _ := codex.Body([]byte(`{"input":"hi \"there\""}`))
	if gjson.GetBytes(listed, "input.0.role").String() != "user" || gjson.GetBytes(listed, "input.0.content.0.text").String() != `hi "there"` {
		t.Fatalf("string input not listed: %s", listed)
	}
	kept, _ := codex.Body([]byte(`{"instructions":"keep me","input":[]}`))
	if gjson.GetBytes(kept, "instructions").String() != "keep me" {
		t.Fatalf("instructions replaced: %s", kept)
	}
}

func target(base string) providers.Target {
	p, _ := providers.NewCatalog().WithModules(codex.Module()).Lookup(codex.ID)
	return providers.Target{Provider: p, BaseURL: base, Secret: "tok-1", AuthType: "oauth", Model: "gpt-5-codex",
		Account: providers.Account{ID: "acct-1"}}
}

const req = `{"model":"gpt-5-codex","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`

func TestNonStreamingCallGetsTheFinalResponse(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start()
	defer up.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := codex.New(client, "test").Do(context.Background(), new(target(base+"/backend-api/codex")), providers.Call{Body: []byte(req)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || gjson.GetBytes(body, "object").String() != "response" ||
		gjson.GetBytes(body, "output.0.content.0.text").String() != fakeupstream.Content("tok-1") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("x-codex-primary-used-percent") != "42" {
		t.Fatal("the usage-window headers must survive the collection")
	}
	h, sent := up.LastRequest("tok-1")
	if msg := fakeupstream.CodexContractError(h, sent); msg != "" {
		t.Fatal(msg)
	}
}

func TestNonStreamingFailures(t *testing.T) {
	streams := map[string]string{
		"/failed/responses": "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n",
		"/cut/responses":    "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, streams[r.URL.Path])
	}))
	defer srv.Close()
	client := srv.Client()
	resp, err := codex.New(client, "test").Do(context.Background(), new(target(srv.URL+"/failed")), providers.Call{Body: []byte(req)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || gjson.GetBytes(body, "error.code").String() != "server_error" {
		t.Fatalf("failed: %d %s", resp.StatusCode, body)
	}
	if _, err := codex.New(client, "test").Do(context.Background(), new(target(srv.URL+"/cut")), providers.Call{Body: []byte(req)}); !errors.Is(err, codex.ErrIncomplete) {
		t.Fatalf("cut stream: %v", err)
	}
}
