package bedrock

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
)

var signTime = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

const (
	testKeyID  = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// verifySigV4 recomputes a request's AWS Signature Version 4 from scratch
// (AWS's documented algorithm, written independently of the SDK's signer)
// and reports what is wrong, "" when the signature matches.
func verifySigV4(r *http.Request, body []byte, secret, region, service string) string {
	auth := r.Header.Get("Authorization")
	const alg = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, alg) {
		return "no AWS4-HMAC-SHA256 authorization"
	}
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, alg), ", ") {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	scope := strings.SplitN(fields["Credential"], "/", 2)
	if len(scope) != 2 || scope[1] != signTime.Format("20060102")+"/"+region+"/"+service+"/aws4_request" {
		return "credential scope " + fields["Credential"]
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	signed := strings.Split(fields["SignedHeaders"], ";")
	var ch strings.Builder
	for _, h := range signed {
		v := r.Header.Get(h)
		if h == "host" {
			v = r.Host
		}
		ch.WriteString(h + ":" + strings.TrimSpace(v) + "\n")
	}
	// The canonical URI encodes each segment of the (already escaped) path once more.
	segs := strings.Split(r.URL.EscapedPath(), "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	q := r.URL.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var cq []string
	for _, k := range keys {
		cq = append(cq, url.QueryEscape(k)+"="+url.QueryEscape(q.Get(k)))
	}
	canonical := strings.Join([]string{r.Method, strings.Join(segs, "/"), strings.Join(cq, "&"), ch.String(), fields["SignedHeaders"], payload}, "\n")
	ch2 := sha256.Sum256([]byte(canonical))
	toSign := strings.Join([]string{"AWS4-HMAC-SHA256", r.Header.Get("X-Amz-Date"), scope[1], hex.EncodeToString(ch2[:])}, "\n")
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	k := mac([]byte("AWS4"+secret), signTime.Format("20060102"))
	k = mac(k, region)
	k = mac(k, service)
	k = mac(k, "aws4_request")
	if want := hex.EncodeToString(mac(k, toSign)); want != fields["Signature"] {
		return "signature mismatch for canonical request:\n" + canonical
	}
	return ""
}

// fakeBedrock plays Converse and ConverseStream for one region and key,
// refusing any request whose signature does not verify.
func fakeBedrock(t *testing.T, stream func(w io.Writer)) (*httptest.Server, *[]string) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, r.URL.EscapedPath())
		if msg := verifySigV4(r, body, testSecret, "us-east-1", "bedrock"); msg != "" {
			w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/")
			w.WriteHeader(403)
			_, _ = io.WriteString(w, `{"message":"The request signature we calculated does not match the signature you provided."}`)
			t.Log(msg)
			return
		}
		if r.Header.Get("X-Amz-Security-Token") != "session-1" {
			w.WriteHeader(403)
			return
		}
		if gjson.GetBytes(body, "messages.0.content.0.text").String() == "throttle me" {
			w.Header().Set("X-Amzn-Errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"message":"Too many requests, please wait before trying again."}`)
			return
		}
		w.Header().Set("X-Amzn-Requestid", "req-1")
		if strings.HasSuffix(r.URL.Path, "/converse-stream") {
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			stream(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"Hello"},{"toolUse":{"toolUseId":"tu-1","name":"get_weather","input":{"city":"Lisbon"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":12,"outputTokens":7,"totalTokens":19}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func target(base string) *providers.Target {
	return &providers.Target{BaseURL: base, Model: "anthropic.claude-3-5-haiku-20241022-v1:0",
		AWS: providers.AWS{Region: "us-east-1", AccessKeyID: testKeyID, SecretAccessKey: testSecret, SessionToken: "session-1"}}
}

func streamOK(w io.Writer) {
	for _, e := range [][2]string{
		{"messageStart", `{"role":"assistant"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"lo"}}`},
		{"contentBlockStop", `{"contentBlockIndex":0}`},
		{"contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tu-9","name":"get_weather"}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"Lisbon\"}"}}}`},
		{"messageStop", `{"stopReason":"tool_use"}`},
		{"metadata", `{"usage":{"inputTokens":12,"outputTokens":7,"totalTokens":19},"metrics":{"latencyMs":80}}`},
	} {
		_, _ = w.Write(event(e[0], e[1]))
	}
}

const chatBody = `{"model":"x","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather?"}],
 "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],"max_tokens":100}`

// TestConverseSignedAndTranslated: a JSON call is signed (the fake
// recomputes SigV4, session token included), goes to /model/<id>/converse
// with the id's ':' escaped, and answers as an OpenAI chat.completion with
// the tool call and usage.
func TestConverseSignedAndTranslated(t *testing.T) {
	srv, seen := fakeBedrock(t, streamOK)
	e := New(srv.Client(), "OmniRoute/test", func() time.Time { return signTime })
	resp, err := e.Do(context.Background(), target(srv.URL), providers.Call{Body: []byte(chatBody)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != "Hello" ||
		gjson.GetBytes(body, "choices.0.message.tool_calls.0.function.arguments").String() != `{"city":"Lisbon"}` ||
		gjson.GetBytes(body, "choices.0.finish_reason").String() != "tool_calls" || gjson.GetBytes(body, "usage.total_tokens").Int() != 19 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if (*seen)[0] != "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse" {
		t.Fatalf("path %s", (*seen)[0])
	}
}

// TestConverseStream: the event stream becomes OpenAI chunks (text, a tool
// call with its id and argument pieces, finish_reason, usage, [DONE]).
func TestConverseStream(t *testing.T) {
	srv, _ := fakeBedrock(t, streamOK)
	e := New(srv.Client(), "OmniRoute/test", func() time.Time { return signTime })
	resp, err := e.Do(context.Background(), target(srv.URL), providers.Call{Body: []byte(chatBody), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%v %v", err, resp.Header)
	}
	var text, args, finish, id string
	var total int64
	done := false
	for _, line := range strings.Split(string(body), "\n") {
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
	if text != "Hello" || args != `{"city":"Lisbon"}` || id != "tu-9" || finish != "tool_calls" || total != 19 || !done {
		t.Fatalf("text %q args %q id %q finish %q usage %d done %v:\n%s", text, args, id, finish, total, done, body)
	}
}

// TestConverseStreamChecksumFailure: a frame whose checksum fails ends the
// stream with a read error after what was valid: never a clean [DONE].
func TestConverseStreamChecksumFailure(t *testing.T) {
	srv, _ := fakeBedrock(t, func(w io.Writer) {
		_, _ = w.Write(event("messageStart", `{"role":"assistant"}`))
		bad := event("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`)
		bad[len(bad)-8] ^= 0xff
		_, _ = w.Write(bad)
		_, _ = w.Write(event("messageStop", `{"stopReason":"end_turn"}`))
	})
	e := New(srv.Client(), "OmniRoute/test", func() time.Time { return signTime })
	resp, err := e.Do(context.Background(), target(srv.URL), providers.Call{Body: []byte(chatBody), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if !errors.Is(err, ErrMessageChecksum) || strings.Contains(string(body), "[DONE]") || strings.Contains(string(body), "Hel") {
		t.Fatalf("err %v body %s", err, body)
	}
}

// TestConverseErrors: an AWS error answer keeps its status and headers and
// gets the OpenAI error shape with the AWS error type as its code; a bad
// signature (wrong secret) is refused by the fake.
func TestConverseErrors(t *testing.T) {
	srv, _ := fakeBedrock(t, streamOK)
	e := New(srv.Client(), "OmniRoute/test", func() time.Time { return signTime })
	resp, err := e.Do(context.Background(), target(srv.URL), providers.Call{Body: []byte(`{"messages":[{"role":"user","content":"throttle me"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || gjson.GetBytes(body, "error.code").String() != "ThrottlingException" || !strings.Contains(gjson.GetBytes(body, "error.message").String(), "Too many requests") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	bad := target(srv.URL)
	bad.AWS.SecretAccessKey = "not-the-secret"
	resp, err = e.Do(context.Background(), bad, providers.Call{Body: []byte(chatBody)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || gjson.GetBytes(body, "error.code").String() != "InvalidSignatureException" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// TestConverseRefusalsAreAnswers: what Converse cannot take (an image by
// URL, an embeddings call, a connection without credentials) comes back as
// an upstream-like error answer, never an executor error that would read as
// the connection failing.
func TestConverseRefusalsAreAnswers(t *testing.T) {
	srv, seen := fakeBedrock(t, streamOK)
	e := New(srv.Client(), "OmniRoute/test", func() time.Time { return signTime })
	noCreds := target(srv.URL)
	noCreds.AWS = providers.AWS{}
	for _, c := range []struct {
		name   string
		t      *providers.Target
		call   providers.Call
		status int
	}{
		{"image by URL", target(srv.URL), providers.Call{Body: []byte(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`)}, 400},
		{"embeddings", target(srv.URL), providers.Call{Body: []byte(`{"input":"x"}`), Path: "/embeddings"}, 404},
		{"no credentials", noCreds, providers.Call{Body: []byte(chatBody)}, 401},
	} {
		resp, err := e.Do(context.Background(), c.t, c.call)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || gjson.GetBytes(body, "error.message").String() == "" {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
	}
	if len(*seen) != 0 {
		t.Fatalf("the upstream was called: %v", *seen)
	}
}
