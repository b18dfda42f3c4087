package bedrock

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/tests/fakeupstream"
)

var signTime = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

const (
	testKeyID  = "AKIDEXAMPLE0000000000"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testToken  = "session-1"
)

// fakeBedrock is the fake upstream's Bedrock (tests/fakeupstream/bedrock.go):
// it recomputes each request's SigV4 signature with its own implementation
// and answers Converse and ConverseStream.
func fakeBedrock(t *testing.T) (*fakeupstream.Upstream, string) {
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	up.SetAWSCredentials(testKeyID, testSecret, testToken)
	return up, base
}

func target(base string) *providers.Target {
	return &providers.Target{BaseURL: base, Model: "anthropic.claude-3-5-haiku-20241022-v1:0",
		AWS: providers.AWS{Region: "us-east-1", AccessKeyID: testKeyID, SecretAccessKey: testSecret, SessionToken: testToken}}
}

func executor() *Executor {
	return New(&http.Client{Timeout: 5 * time.Second}, "OmniRoute/test", func() time.Time { return signTime })
}

const chatBody = `{"model":"x","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather?"}],
 "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],"max_tokens":100}`

// TestConverseSignedAndTranslated: a JSON call is signed (the fake
// recomputes SigV4, session token included), goes to /model/<id>/converse
// with the id's ':' escaped, and answers as an OpenAI chat.completion with
// the tool call, finish_reason and usage.
func TestConverseSignedAndTranslated(t *testing.T) {
	up, base := fakeBedrock(t)
	resp, err := executor().Do(context.Background(), target(base), providers.Call{Body: []byte(chatBody)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.tool_calls.0.function.name").String() != "get_weather" ||
		gjson.GetBytes(body, "choices.0.message.tool_calls.0.function.arguments").String() != fakeupstream.ToolArguments ||
		gjson.GetBytes(body, "choices.0.finish_reason").String() != "tool_calls" || gjson.GetBytes(body, "usage.total_tokens").Int() != 8 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if p := up.LastPath(testKeyID); p != "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse" {
		t.Fatalf("path %s", p)
	}
	_, sent := up.LastRequest(testKeyID)
	if gjson.GetBytes(sent, "system.0.text").String() != "be brief" || gjson.GetBytes(sent, "inferenceConfig.maxTokens").Int() != 100 ||
		gjson.GetBytes(sent, "toolConfig.tools.0.toolSpec.inputSchema.json.properties.city.type").String() != "string" {
		t.Fatalf("converse body %s", sent)
	}
}

// TestConverseStream: the event stream becomes OpenAI chunks: the text in
// pieces, then finish_reason, usage and [DONE]; a tool call with its id and
// arguments.
func TestConverseStream(t *testing.T) {
	_, base := fakeBedrock(t)
	read := func(body string) (text, args, id, finish string, total int64, done bool) {
		resp, err := executor().Do(context.Background(), target(base), providers.Call{Body: []byte(body), Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%v %v", err, resp.Header)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			d, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			if d == "[DONE]" {
				done = true
				continue
			}
			text += gjson.Get(d, "choices.0.delta.content").String()
			args += gjson.Get(d, "choices.0.delta.tool_calls.0.function.arguments").String()
			if v := gjson.Get(d, "choices.0.delta.tool_calls.0.id").String(); v != "" {
				id = v
			}
			if v := gjson.Get(d, "choices.0.finish_reason").String(); v != "" {
				finish = v
			}
			if v := gjson.Get(d, "usage.total_tokens").Int(); v > 0 {
				total = v
			}
		}
		return
	}
	text, _, _, finish, total, done := read(`{"messages":[{"role":"user","content":"hi"}]}`)
	if text != fakeupstream.Content(testKeyID) || finish != "stop" || total != 8 || !done {
		t.Fatalf("text %q finish %q usage %d done %v", text, finish, total, done)
	}
	_, args, id, finish, _, done := read(chatBody)
	if args != fakeupstream.ToolArguments || id == "" || finish != "tool_calls" || !done {
		t.Fatalf("tool call: args %q id %q finish %q done %v", args, id, finish, done)
	}
}

// TestConverseStreamChecksumFailure: a frame whose checksum fails ends the
// stream with a read error: what came before it only, never [DONE].
func TestConverseStreamChecksumFailure(t *testing.T) {
	_, base := fakeBedrock(t)
	resp, err := executor().Do(context.Background(), target(base), providers.Call{Stream: true,
		Body: []byte(`{"messages":[{"role":"user","content":"` + fakeupstream.BedrockCorruptPrompt + `"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if !errors.Is(err, ErrMessageChecksum) || strings.Contains(string(body), "[DONE]") || strings.Contains(string(body), "half") {
		t.Fatalf("err %v body %s", err, body)
	}
}

// TestConverseErrors: an AWS error answer keeps its status and gets the
// OpenAI error shape with the AWS error type as its code; a wrong secret
// under the right key id is refused by the fake's signature check (the
// signer is not reused: the SDK's caches derived keys by key id alone).
func TestConverseErrors(t *testing.T) {
	up, base := fakeBedrock(t)
	e := executor()
	if resp, err := e.Do(context.Background(), target(base), providers.Call{Body: []byte(chatBody)}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("signed call: %v", err)
	}
	bad := target(base)
	bad.AWS.SecretAccessKey = "not-the-secret"
	resp, err := e.Do(context.Background(), bad, providers.Call{Body: []byte(chatBody)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || gjson.GetBytes(body, "error.code").String() != "InvalidSignatureException" {
		t.Fatalf("wrong secret: %d %s", resp.StatusCode, body)
	}
	up.SetFault(testKeyID, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Body: `{"message":"Too many requests, please wait before trying again."}`,
		Headers: map[string]string{"X-Amzn-Errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}})
	resp, err = e.Do(context.Background(), target(base), providers.Call{Body: []byte(chatBody)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || gjson.GetBytes(body, "error.code").String() != "ThrottlingException" || !strings.Contains(gjson.GetBytes(body, "error.message").String(), "Too many requests") {
		t.Fatalf("throttled: %d %s", resp.StatusCode, body)
	}
}

// TestConverseRefusalsAreAnswers: what Converse cannot take (an image by
// URL, an embeddings call, a connection without credentials) comes back as
// an upstream-like error answer, never an executor error that would read as
// the connection failing.
func TestConverseRefusalsAreAnswers(t *testing.T) {
	up, base := fakeBedrock(t)
	noCreds := target(base)
	noCreds.AWS = providers.AWS{}
	for _, c := range []struct {
		name   string
		t      *providers.Target
		call   providers.Call
		status int
	}{
		{"image by URL", target(base), providers.Call{Body: []byte(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`)}, 400},
		{"embeddings", target(base), providers.Call{Body: []byte(`{"input":"x"}`), Path: "/embeddings"}, 404},
		{"no credentials", noCreds, providers.Call{Body: []byte(chatBody)}, 401},
	} {
		resp, err := executor().Do(context.Background(), c.t, c.call)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || gjson.GetBytes(body, "error.message").String() == "" {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
	}
	if n := up.Hits(testKeyID); n != 0 {
		t.Fatalf("the upstream was called %d times", n)
	}
}
