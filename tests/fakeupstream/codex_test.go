package fakeupstream_test

import (
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// TestCodexBackendChecksTheWireContract: each broken rule of the contract is
// refused with the backend's 400 {"detail"}, a correct request streams.
func TestCodexBackendChecksTheWireContract(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start()
	defer up.Close()
	good := map[string]string{"Authorization": "Bearer tok", "chatgpt-account-id": "a", "OpenAI-Beta": "responses=experimental", "originator": "codex_cli_rs"}
	okBody := `{"model":"m","store":false,"stream":true,"instructions":"","input":[]}`
	cases := []struct {
		name   string
		drop   string
		body   string
		status int
		detail string
	}{
		{"ok", "", okBody, 200, ""},
		{"no account", "chatgpt-account-id", okBody, 400, "missing chatgpt-account-id header"},
		{"no beta", "OpenAI-Beta", okBody, 400, "OpenAI-Beta must be responses=experimental"},
		{"store", "", `{"store":true,"stream":true,"instructions":"","input":[]}`, 400, "Store must be set to false"},
		{"stream", "", `{"store":false,"instructions":"","input":[]}`, 400, "Stream must be set to true"},
		{"instructions", "", `{"store":false,"stream":true,"input":[]}`, 400, "Instructions are required"},
		{"temperature", "", `{"store":false,"stream":true,"instructions":"","input":[],"temperature":1}`, 400, "Unsupported parameter: temperature"},
		{"no auth", "Authorization", okBody, 401, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := maps.Clone(good)
			delete(h, c.drop)
			resp, b := postCodex(t, base, h, c.body)
			if resp.StatusCode != c.status || (c.detail != "" && gjson.GetBytes(b, "detail").String() != c.detail) {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if c.status == 200 && (!strings.Contains(string(b), "event: response.completed") || resp.Header.Get("x-codex-primary-used-percent") != "42") {
				t.Fatalf("stream %s", b)
			}
		})
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestCodexBackendCutsAfterEvents: a cut stream has its opening events and
// exactly AfterChunks text deltas, and none of its closing events.
func TestCodexBackendCutsAfterEvents(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start()
	defer up.Close()
	defer http.DefaultClient.CloseIdleConnections()
	up.SetStreamChunks(6)
	for _, after := range []int{0, 1, 5, 6} {
		up.SetFault("tok", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: after, Times: 1})
		resp, b := postCodex(t, base, map[string]string{"Authorization": "Bearer tok", "chatgpt-account-id": "a",
			"OpenAI-Beta": "responses=experimental", "originator": "codex_cli_rs"},
			`{"model":"m","store":false,"stream":true,"instructions":"","input":[]}`)
		s := string(b)
		if n := strings.Count(s, "event: response.output_text.delta\n"); resp.StatusCode != 200 || n != after ||
			!strings.Contains(s, "event: response.content_part.added\n") ||
			strings.Contains(s, "response.output_text.done") || strings.Contains(s, "response.completed") {
			t.Fatalf("cut after %d: status %d, %d deltas:\n%s", after, resp.StatusCode, n, s)
		}
	}
}

// postCodex posts body with headers h to the fake Codex backend at base and
// returns its answer, read whole.
func postCodex(t *testing.T, base string, h map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/backend-api/codex/responses", strings.NewReader(body))
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}
