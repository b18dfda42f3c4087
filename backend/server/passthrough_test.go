package server_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSameFormatRelayIsByteIdentical checks the same-format fast path end to
// end: an OpenAI Chat body reaches an OpenAI-compatible upstream byte for byte
// as the client wrote it apart from "model" (odd spacing, key order, escapes
// and unknown fields kept) and, for a stream whose client did not ask for
// usage, the stream_options.include_usage the gateway adds to charge it; and
// the upstream's answer to the client's own body, JSON or stream, reaches the
// client byte for byte as the upstream writes it.
func TestSameFormatRelayIsByteIdentical(t *testing.T) {
	e := newEnv(t)
	e.addConn("a", "key-a", 0)
	const gwModel, upModel = `"openai-compatible/gpt-4o-mini"`, `"gpt-4o-mini"`
	for _, stream := range []string{"false", "true"} {
		t.Run("stream="+stream, func(t *testing.T) {
			client := []byte(`{"messages":[{"role":"user","content":"h\u00e9llo \"there\""}],  "model" : ` + gwModel +
				`,"stream":` + stream + `,"x_vendor":{"a":[1,2.50,"z",null]},"temperature":0.70}`)
			resp, got := e.do("POST", "/v1/chat/completions", client, map[string]string{"Authorization": "Bearer " + e.key})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("gateway: %d %s", resp.StatusCode, got)
			}
			_, upBody := e.up.LastRequest("key-a")
			wantUp := bytes.Replace(client, []byte(gwModel), []byte(upModel), 1)
			sent := wantUp
			if stream == "true" {
				sent = append(bytes.TrimSuffix(bytes.Clone(wantUp), []byte("}")), `,"stream_options":{"include_usage":true}}`...)
			}
			if !bytes.Equal(upBody, sent) {
				t.Fatalf("upstream got\n%s\nwant (the client's body, model rewritten)\n%s", upBody, sent)
			}

			// The same upstream body sent straight to the fake: what the gateway
			// relays must be exactly what the upstream answers.
			req, err := http.NewRequest("POST", e.upURL+"/chat/completions", bytes.NewReader(wantUp))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer key-a")
			req.Header.Set("Content-Type", "application/json")
			dresp, err := http.DefaultTransport.(*http.Transport).Clone().RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			direct, _ := io.ReadAll(dresp.Body)
			dresp.Body.Close()
			if dresp.StatusCode != http.StatusOK {
				t.Fatalf("direct: %d %s", dresp.StatusCode, direct)
			}
			if stream == "true" && !strings.Contains(string(direct), "data: [DONE]") {
				t.Fatalf("direct stream without [DONE]: %s", direct)
			}
			if !bytes.Equal(got, direct) {
				t.Fatalf("gateway relayed\n%q\nthe upstream answered\n%q", got, direct)
			}
			if ct, want := mediaType(resp.Header.Get("Content-Type")), mediaType(dresp.Header.Get("Content-Type")); ct != want {
				t.Fatalf("content type %q, upstream's %q", ct, want)
			}
		})
	}
}

// mediaType is a Content-Type without its parameters.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(mt)
}
