package gemini

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"omniroute/backend/providers"
	tgemini "omniroute/backend/translate/gemini"
	"omniroute/tests/fakeupstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPath(t *testing.T) {
	tests := []struct {
		model  string
		stream bool
		want   string
		ok     bool
	}{
		{"gemini-2.5-flash", false, "/models/gemini-2.5-flash:generateContent", true},
		{"models/gemini-2.5-pro", true, "/models/gemini-2.5-pro:streamGenerateContent?alt=sse", true},
		{"", false, "", false},
		{"a/b", false, "", false},
		{"x?alt=json", false, "", false},
		{"x:countTokens", false, "", false},
		{"with space", false, "", false},
		{"%2e%2e", false, "", false},
	}
	for _, tt := range tests {
		got, err := Path(tt.model, tt.stream)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("Path(%q, %v) = %q, %v", tt.model, tt.stream, got, err)
		}
	}
}

func TestEmbedPath(t *testing.T) {
	for _, tt := range []struct {
		model, want string
		ok          bool
	}{
		{"gemini-embedding-001", "/models/gemini-embedding-001:batchEmbedContents", true},
		{"models/text-embedding-004", "/models/text-embedding-004:batchEmbedContents", true},
		{"", "", false},
		{"a/b", "", false},
		{"x:embedContent", "", false},
	} {
		got, err := EmbedPath(tt.model)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("EmbedPath(%q) = %q, %v", tt.model, got, err)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://generativelanguage.googleapis.com/v1beta":         "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com/v1beta/":        "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com/v1beta/openai":  "https://generativelanguage.googleapis.com/v1beta",
		"https://generativelanguage.googleapis.com/v1beta/openai/": "https://generativelanguage.googleapis.com/v1beta",
	} {
		if got := BaseURL(in); got != want {
			t.Errorf("BaseURL(%q) = %q", in, got)
		}
	}
}

// The executor against the fake Gemini API: the URL names model and method,
// the key travels in x-goog-api-key, the body goes as it is (no "model"
// added, which Google would refuse), and the stream is SSE.
func TestDoAgainstFake(t *testing.T) {
	up := fakeupstream.New()
	base := up.Start() + "/v1beta/openai" // a base stored for the OpenAI-compatible wire still works
	defer up.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	e := New(&http.Client{Transport: tr}, "OmniRoute/test")
	target := &providers.Target{Provider: providers.Provider{ID: "gemini", Format: providers.FormatGemini}, BaseURL: base, Secret: "gk-1", Model: "gemini-2.5-flash"}
	body, err := tgemini.RequestFromChat([]byte(`{"model":"gemini-2.5-flash","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_tokens":50}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		resp, err := e.Do(context.Background(), target, providers.Call{Body: body, Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("stream %v: status %d: %s", stream, resp.StatusCode, got)
		}
		h, sent := up.LastRequest("gk-1")
		if h.Get("X-Goog-Api-Key") != "gk-1" || h.Get("Authorization") != "" || gjson.GetBytes(sent, "model").Exists() ||
			string(sent) != string(body) {
			t.Fatalf("sent headers %v body %s", h, sent)
		}
		wantPath := "/v1beta/models/gemini-2.5-flash:generateContent"
		if stream {
			wantPath = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
			if !strings.HasPrefix(string(got), "data: ") {
				t.Fatalf("not SSE: %s", got)
			}
		}
		if up.LastPath("gk-1") != wantPath || up.LastModel("gk-1") != "gemini-2.5-flash" {
			t.Fatalf("path %q model %q", up.LastPath("gk-1"), up.LastModel("gk-1"))
		}
	}
	// A bad model name never reaches the network.
	bad := *target
	bad.Model = "../x"
	if _, err := e.Do(context.Background(), &bad, providers.Call{Body: body}); err == nil {
		t.Fatal("bad model accepted")
	}
}
