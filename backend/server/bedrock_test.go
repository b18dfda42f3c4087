package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers/registry"
	"omniroute/tests/fakeupstream"
)

const bedrockModel = "anthropic.claude-3-5-haiku-20241022-v1:0"

// TestBedrockConnection: a bedrock connection's secrets are sealed and never
// returned; its calls are SigV4-signed (the fake recomputes the signature,
// session token included) to /model/<id>/converse and converse-stream and
// answer in the client's format, streams included; a stream frame failing
// its checksum is never a clean success; a ThrottlingException reaches the
// client as a 429.
func TestBedrockConnection(t *testing.T) {
	e := newEnv(t)
	const keyID, secret, token = "AKIAFAKEBEDROCK00001", "bedrock-secret-value-1", "bedrock-session-token-1"
	e.up.SetAWSCredentials(keyID, secret, token)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "name": "aws",
		"baseUrl":              strings.TrimSuffix(e.upURL, "/v1"),
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": keyID, "secretAccessKey": secret, "sessionToken": token}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	conn := m["connection"].(map[string]any)
	raw := string(mustJSON(m))
	if strings.Contains(raw, secret) || strings.Contains(raw, token) || strings.Contains(raw, "Sealed") {
		t.Fatalf("a secret is returned: %s", raw)
	}
	if psd := conn["providerSpecificData"].(map[string]any); psd["region"] != "us-east-1" || psd["accessKeyId"] != keyID {
		t.Fatalf("providerSpecificData %v", psd)
	}
	// Discovery: the on-demand text foundation models, then the inference profiles (signed GETs).
	want := []string{"anthropic.claude-3-5-haiku-20241022-v1:0", "amazon.nova-lite-v1:0", "us.anthropic.claude-3-5-haiku-20241022-v1:0"}
	if got := servedOf(conn); !slices.Equal(got, want) || conn["modelsSource"] != "upstream" {
		t.Fatalf("served %v from %v", got, conn["modelsSource"])
	}
	// Credentials the upstream refuses: the catalogue's list stands in.
	code, m = e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "name": "aws-wrong", "prefix": "wrong", "verify": false,
		"baseUrl":              strings.TrimSuffix(e.upURL, "/v1"),
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": keyID, "secretAccessKey": "not-the-secret"}})
	p, _ := registry.Catalog(nil).Lookup("bedrock")
	if wrong := m["connection"].(map[string]any); code != 201 || !slices.Equal(servedOf(wrong), p.DefaultModels) || wrong["modelsSource"] != "catalog" {
		t.Fatalf("wrong secret: %d %v", code, m)
	}
	if code, _ := e.mgmt("DELETE", "/api/providers/"+m["connection"].(map[string]any)["id"].(string), nil); code != 200 {
		t.Fatal("delete")
	}
	if ch, _ := m["check"].(map[string]any); ch != nil && ch["ok"] != true {
		t.Fatalf("the creation check failed: %v", ch)
	}

	resp, body := e.chat("bedrock/"+bedrockModel, false, nil)
	if resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content(keyID) {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	if p := e.up.LastPath(keyID); p != "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse" {
		t.Fatalf("path %s", p)
	}
	resp, body = e.chat(bedrockModel, true, nil)
	if text, done, _ := chatText(t, body); resp.StatusCode != 200 || !done || text != fakeupstream.Content(keyID) {
		t.Fatalf("stream: %d %q %s", resp.StatusCode, text, body)
	}
	// Anthropic Messages clients reach it too.
	resp, body = e.do("POST", "/v1/messages", map[string]any{"model": bedrockModel, "max_tokens": 50,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != 200 || gjson.GetBytes(body, "content.0.text").String() != fakeupstream.Content(keyID) {
		t.Fatalf("messages: %d %s", resp.StatusCode, body)
	}

	resp, body = e.do("POST", "/v1/chat/completions", map[string]any{"model": bedrockModel, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": fakeupstream.BedrockCorruptPrompt}}}, map[string]string{"Authorization": "Bearer " + e.key})
	// Nothing was delivered before the broken frame: the attempt fails like a
	// dropped connection and the client gets a clean error naming it.
	if resp.StatusCode != 502 || !strings.Contains(gjson.GetBytes(body, "error.message").String(), "checksum mismatch") || strings.Contains(string(body), "[DONE]") {
		t.Fatalf("a corrupt frame: %d %s", resp.StatusCode, body)
	}

	e.up.SetFault(keyID, fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Body: `{"message":"Too many requests, please wait before trying again."}`,
		Headers: map[string]string{"X-Amzn-Errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}})
	if resp, body := e.chat(bedrockModel, false, nil); resp.StatusCode != 429 {
		t.Fatalf("throttled: %d %s", resp.StatusCode, body)
	}
}

// TestBedrockInput: region, access key id and secret are checked; the
// gateway's own sealed fields and AWS profiles are refused; an edit that
// leaves the session token out keeps it.
func TestBedrockInput(t *testing.T) {
	e := newEnv(t)
	home := t.TempDir()
	e.envs["HOME"] = home
	base := strings.TrimSuffix(e.upURL, "/v1")
	ok := map[string]any{"region": "eu-west-1", "accessKeyId": "AKIAFAKEBEDROCK00002", "secretAccessKey": "s"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		name string
		psd  any
		code string
	}{
		{"none", nil, "PROVIDER_DATA_REQUIRED"},
		{"bad region", with("region", "Mars"), "INVALID_PROVIDER_DATA"},
		{"bad key id", with("accessKeyId", "short"), "INVALID_PROVIDER_DATA"},
		{"sealed field", with("sessionTokenSealed", "x"), "INVALID_PROVIDER_DATA"},
		{"unknown profile", map[string]any{"profile": "nope"}, "AWS_PROFILE_NOT_FOUND"},
		{"bad profile name", map[string]any{"profile": "../x"}, "INVALID_PROVIDER_DATA"},
		{"secret not a string", with("secretAccessKey", 5), "INVALID_PROVIDER_DATA"},
	} {
		body := map[string]any{"provider": "bedrock", "baseUrl": base, "discoverModels": false}
		if c.psd != nil {
			body["providerSpecificData"] = c.psd
		}
		code, m := e.mgmt("POST", "/api/providers", body)
		if errm, _ := m["error"].(map[string]any); code != 400 || errm["code"] != c.code {
			t.Errorf("%s: %d %v", c.name, code, m)
		}
	}
	// A refusal is worded with the field's form label, for the dashboard to
	// show under it (issue 41); the code and the param (its path) stay. The
	// label's words are spelt as the label spells them all through the sentence
	// (not "Access key ID must be an AWS access key id").
	for _, c := range []struct{ field, label, want string }{
		{"accessKeyId", "Access key ID", "Access key ID must be 16-128 capital letters and digits (an AWS access key ID, such as AKIA…)"},
		{"region", "AWS region", "AWS region must be an AWS region such as us-east-1"},
	} {
		status, refusal := e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "baseUrl": base, "discoverModels": false,
			"providerSpecificData": with(c.field, "short")})
		errm, _ := refusal["error"].(map[string]any)
		if status != 400 || errm["code"] != "INVALID_PROVIDER_DATA" || errm["param"] != "providerSpecificData."+c.field || errm["message"] != c.want {
			t.Errorf("bad %s: %d %v, want the message %q", c.field, status, refusal, c.want)
		}
		// (its first letter aside: a capital to begin the label, none within the sentence)
		msg, _ := errm["message"].(string)
		if tail := c.label[1:]; strings.Count(strings.ToLower(msg), strings.ToLower(tail)) != strings.Count(msg, tail) {
			t.Errorf("bad %s: %q spells %q otherwise than its label", c.field, msg, c.label)
		}
	}
	e.up.SetAWSCredentials("AKIAFAKEBEDROCK00003", "s3", "tok-3")
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "bedrock", "baseUrl": base, "discoverModels": false, "models": []string{"amazon.nova-lite-v1:0"},
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": "AKIAFAKEBEDROCK00003", "secretAccessKey": "s3", "sessionToken": "tok-3"}})
	if code != 201 {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["connection"].(map[string]any)["id"].(string)
	if code, m := e.mgmt("PATCH", "/api/providers/"+id, map[string]any{"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": "AKIAFAKEBEDROCK00003"}}); code != 200 {
		t.Fatalf("patch: %d %v", code, m)
	}
	if resp, body := e.chat("amazon.nova-lite-v1:0", false, nil); resp.StatusCode != 200 {
		t.Fatalf("after an edit without the token: %d %s", resp.StatusCode, body)
	}

	// A named profile of ~/.aws: the key, secret and token from credentials,
	// the region from config; copied and sealed, never returned.
	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o700); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("[default]\naws_access_key_id = AKIAOTHER0000000000\n\n[work]\n# the team account\naws_access_key_id = AKIAFAKEBEDROCK00004\naws_secret_access_key = secret-of-profile-work\naws_session_token = tok-4\n"), 0o600)
	_ = os.WriteFile(filepath.Join(home, ".aws", "config"), []byte("[default]\nregion = eu-west-1\n[profile work]\nregion = us-east-1\n"), 0o600)
	e.up.SetAWSCredentials("AKIAFAKEBEDROCK00004", "secret-of-profile-work", "tok-4")
	code, m = e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "baseUrl": base, "prefix": "work", "providerSpecificData": map[string]any{"profile": "work"}})
	if code != 201 || strings.Contains(string(mustJSON(m)), "secret-of-profile-work") || strings.Contains(string(mustJSON(m)), "tok-4") {
		t.Fatalf("profile: %d %v", code, m)
	}
	if psd := m["connection"].(map[string]any)["providerSpecificData"].(map[string]any); psd["accessKeyId"] != "AKIAFAKEBEDROCK00004" || psd["region"] != "us-east-1" || psd["profile"] != "work" {
		t.Fatalf("profile data: %v", psd)
	}
	if resp, body := e.chat("work/amazon.nova-lite-v1:0", false, nil); resp.StatusCode != 200 || gjson.GetBytes(body, "choices.0.message.content").String() != fakeupstream.Content("AKIAFAKEBEDROCK00004") {
		t.Fatalf("profile chat: %d %s", resp.StatusCode, body)
	}
}

// TestBedrockInvokeModel: an Anthropic model asked to think, or to continue
// a trailing assistant message (which Converse cannot carry), goes to
// InvokeModel / InvokeModelWithResponseStream with the Messages body
// (anthropic_version, no model or stream; SigV4-signed like Converse) and
// answers in the client's format, thinking as reasoning; other models and
// plain requests stay on Converse; an invoke stream cut before
// message_stop never ends clean.
func TestBedrockInvokeModel(t *testing.T) {
	e := newEnv(t)
	const keyID, secret = "AKIAFAKEBEDROCK00002", "bedrock-secret-value-2"
	e.up.SetAWSCredentials(keyID, secret, "")
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "name": "aws",
		"baseUrl":              strings.TrimSuffix(e.upURL, "/v1"),
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": keyID, "secretAccessKey": secret}}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	const nova = "amazon.nova-lite-v1:0"
	escaped := "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/"
	cases := []struct {
		name   string
		model  string
		stream bool
		msgs   []any
		effort string
		path   string
		text   string
		think  bool
	}{
		{"thinking", bedrockModel, false, []any{map[string]any{"role": "user", "content": "hi"}}, "high", escaped + "invoke", fakeupstream.Content(keyID), true},
		{"thinking streamed", bedrockModel, true, []any{map[string]any{"role": "user", "content": "hi"}}, "low", escaped + "invoke-with-response-stream", fakeupstream.Content(keyID), true},
		{"prefill", bedrockModel, false, []any{map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "assistant", "content": "The answer is"}}, "", escaped + "invoke", fakeupstream.BedrockPrefillAnswer, false},
		{"prefill streamed", bedrockModel, true, []any{map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "assistant", "content": "The answer is"}}, "", escaped + "invoke-with-response-stream", fakeupstream.BedrockPrefillAnswer, false},
		{"plain stays on Converse", bedrockModel, false, []any{map[string]any{"role": "user", "content": "hi"}}, "", escaped + "converse", fakeupstream.Content(keyID), false},
		{"not Anthropic stays on Converse", nova, false, []any{map[string]any{"role": "user", "content": "hi"}}, "high", "/model/amazon.nova-lite-v1%3A0/converse", fakeupstream.Content(keyID), false},
	}
	for _, c := range cases {
		body := map[string]any{"model": "bedrock/" + c.model, "stream": c.stream, "max_tokens": 2048, "messages": c.msgs}
		if c.effort != "" {
			body["reasoning_effort"] = c.effort
		}
		resp, out := e.do("POST", "/v1/chat/completions", body, auth)
		text, reasoning := gjson.GetBytes(out, "choices.0.message.content").String(), gjson.GetBytes(out, "choices.0.message.reasoning_content").String()
		done := true
		if c.stream {
			text, done, _ = chatText(t, out)
			reasoning = ""
			for _, ev := range parseSSE(t, out) {
				reasoning += gjson.Get(ev.data, "choices.0.delta.reasoning_content").String()
			}
		}
		if resp.StatusCode != 200 || text != c.text || !done || (reasoning == fakeupstream.BedrockThinking) != c.think {
			t.Fatalf("%s: %d text %q reasoning %q done %v\n%s", c.name, resp.StatusCode, text, reasoning, done, out)
		}
		if p := e.up.LastPath(keyID); p != c.path {
			t.Fatalf("%s: path %s, want %s", c.name, p, c.path)
		}
		if _, sent := e.up.LastRequest(keyID); strings.Contains(c.path, "invoke") &&
			(gjson.GetBytes(sent, "anthropic_version").String() != "bedrock-2023-05-31" || gjson.GetBytes(sent, "model").Exists() ||
				(gjson.GetBytes(sent, "thinking.type").String() == "enabled") != c.think) {
			t.Fatalf("%s: invoke body %s", c.name, sent)
		}
	}
	// An Anthropic Messages client asking for thinking.
	resp, out := e.do("POST", "/v1/messages", map[string]any{"model": bedrockModel, "max_tokens": 4096,
		"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048},
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
	if resp.StatusCode != 200 || !strings.Contains(string(out), fakeupstream.Content(keyID)) || e.up.LastPath(keyID) != escaped+"invoke" {
		t.Fatalf("messages client: %d %s via %s", resp.StatusCode, out, e.up.LastPath(keyID))
	}
	// Its thinking keeps the model's signature (issue 41, M5), streamed too.
	if sig := gjson.GetBytes(out, `content.#(type=="thinking").signature`).String(); sig != "sig-fake" {
		t.Fatalf("messages client: the thinking's signature %q: %s", sig, out)
	}
	resp, out = e.do("POST", "/v1/messages", map[string]any{"model": bedrockModel, "max_tokens": 4096, "stream": true,
		"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048},
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth)
	if resp.StatusCode != 200 || !strings.Contains(string(out), `"type":"signature_delta","signature":"sig-fake"`) {
		t.Fatalf("messages client stream: %d %s", resp.StatusCode, out)
	}
	// Cut before message_stop: an error, never [DONE].
	resp, out = e.do("POST", "/v1/chat/completions", map[string]any{"model": bedrockModel, "stream": true, "reasoning_effort": "high", "max_tokens": 2048,
		"messages": []any{map[string]any{"role": "user", "content": fakeupstream.BedrockCorruptPrompt}}}, auth)
	if strings.Contains(string(out), "[DONE]") || !strings.Contains(string(out), "error") {
		t.Fatalf("a cut invoke stream: %d %s", resp.StatusCode, out)
	}
}

// TestBedrockContinuesABrokenStream: a stream cut after text on another
// connection is finished by a Bedrock Anthropic model, its prefill sent
// through InvokeModelWithResponseStream (Converse cannot continue it).
func TestBedrockContinuesABrokenStream(t *testing.T) {
	e := newEnv(t)
	const keyID, secret = "AKIAFAKEBEDROCK00003", "bedrock-secret-value-3"
	e.up.SetAWSCredentials(keyID, secret, "")
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"verify": false, "provider": "openai-compatible", "name": "first", "apiKey": "key-a",
		"baseUrl": e.upURL, "priority": 1, "models": []string{bedrockModel}}); code != http.StatusCreated {
		t.Fatalf("first: %d %v", code, m)
	}
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "name": "aws", "priority": 2,
		"baseUrl":              strings.TrimSuffix(e.upURL, "/v1"),
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": keyID, "secretAccessKey": secret}}); code != http.StatusCreated {
		t.Fatalf("bedrock: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 2})
	_, body := e.chat(bedrockModel, true, nil)
	text, done, _ := chatText(t, body)
	if !strings.Contains(string(body), "omniroute continued the answer on bedrock/"+bedrockModel) || !done ||
		!strings.HasSuffix(text, fakeupstream.BedrockPrefillAnswer) || !strings.HasPrefix(fakeupstream.Content("key-a"), strings.TrimSuffix(text, fakeupstream.BedrockPrefillAnswer)) {
		t.Fatalf("not continued on Bedrock: %q\n%s", text, body)
	}
	_, sent := e.up.LastRequest(keyID)
	if p := e.up.LastPath(keyID); !strings.HasSuffix(p, "/invoke-with-response-stream") || gjson.GetBytes(sent, "messages.@reverse.0.role").String() != "assistant" {
		t.Fatalf("continuation sent to %s: %s", p, sent)
	}
}

// TestBedrockLegacyCompletions (issue 41, M6): /v1/completions to a Bedrock
// model goes through chat to Converse, as to the other non-OpenAI wires (it
// answered 404 "serves no /completions" before), streamed or not; a suffix
// (fill-in-the-middle) is refused as there.
func TestBedrockLegacyCompletions(t *testing.T) {
	e := newEnv(t)
	const keyID, secret = "AKIAFAKEBEDROCK00004", "bedrock-secret-value-4"
	e.up.SetAWSCredentials(keyID, secret, "")
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "name": "aws", "verify": false,
		"baseUrl":              strings.TrimSuffix(e.upURL, "/v1"),
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": keyID, "secretAccessKey": secret}}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	const nova = "amazon.nova-lite-v1:0"
	resp, out := e.do("POST", "/v1/completions", map[string]any{"model": "bedrock/" + nova, "prompt": "Say hi", "max_tokens": 20}, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(out, "object").String() != "text_completion" ||
		gjson.GetBytes(out, "choices.0.text").String() != fakeupstream.Content(keyID) {
		t.Fatalf("completion: %d %s", resp.StatusCode, out)
	}
	_, sent := e.up.LastRequest(keyID)
	if p := e.up.LastPath(keyID); p != "/model/amazon.nova-lite-v1%3A0/converse" || gjson.GetBytes(sent, "messages.0.content.0.text").String() != "Say hi" {
		t.Fatalf("sent to %s: %s", p, sent)
	}
	resp, out = e.do("POST", "/v1/completions", map[string]any{"model": "bedrock/" + nova, "prompt": "Say hi", "max_tokens": 20, "stream": true}, auth)
	text := ""
	for _, ev := range parseSSE(t, out) {
		text += gjson.Get(ev.data, "choices.0.text").String()
	}
	if resp.StatusCode != 200 || text != fakeupstream.Content(keyID) || !strings.Contains(string(out), "[DONE]") ||
		!strings.HasSuffix(e.up.LastPath(keyID), "/converse-stream") {
		t.Fatalf("streamed completion: %d %q via %s\n%s", resp.StatusCode, text, e.up.LastPath(keyID), out)
	}
	resp, out = e.do("POST", "/v1/completions", map[string]any{"model": "bedrock/" + nova, "prompt": "def f(", "suffix": "\n", "max_tokens": 20}, auth)
	if resp.StatusCode != 400 || gjson.GetBytes(out, "error.code").String() != "FIM_UNSUPPORTED" {
		t.Fatalf("suffix: %d %s", resp.StatusCode, out)
	}
}

// TestBedrockEmbeddingsPassedOver (issue 41): Bedrock serves no
// embeddings, so /v1/embeddings passes its connection over as
// FORMAT_NOT_SUPPORTED, as other wires without embeddings are, and never
// sends it (the executor answered 404 before).
func TestBedrockEmbeddingsPassedOver(t *testing.T) {
	e := newEnv(t)
	const keyID, secret = "AKIAFAKEBEDROCK00005", "bedrock-secret-value-5"
	e.up.SetAWSCredentials(keyID, secret, "")
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "name": "aws", "verify": false,
		"baseUrl": strings.TrimSuffix(e.upURL, "/v1"), "models": []string{"amazon.titan-embed-text-v2:0"},
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": keyID, "secretAccessKey": secret}}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	resp, out := e.do("POST", "/v1/embeddings", map[string]any{"model": "bedrock/amazon.titan-embed-text-v2:0", "input": "hi"}, auth)
	if resp.StatusCode == 200 || !strings.Contains(gjson.GetBytes(out, "error.message").String(), "serves no embeddings endpoint") || e.up.Hits(keyID) != 0 {
		t.Fatalf("embeddings: %d %s (upstream hits %d)", resp.StatusCode, out, e.up.Hits(keyID))
	}
}

// TestBedrockReasoningSignature (issue 41, M5): a Converse model (no
// "anthropic." in its id) that reasons answers a Messages client with a
// signed thinking block and a redacted_thinking block carrying its data,
// streamed or not, and a Chat client with reasoning_content and
// thinking_blocks; the Messages client's next turn, replaying those blocks,
// sends them back to Converse as reasoningContent, unmodified.
func TestBedrockReasoningSignature(t *testing.T) {
	e := newEnv(t)
	const keyID, secret = "AKIAFAKEBEDROCK00005", "bedrock-secret-value-5"
	e.up.SetAWSCredentials(keyID, secret, "")
	if code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "bedrock", "name": "aws", "verify": false,
		"baseUrl":              strings.TrimSuffix(e.upURL, "/v1"),
		"providerSpecificData": map[string]any{"region": "us-east-1", "accessKeyId": keyID, "secretAccessKey": secret}}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	const model = "bedrock/amazon.nova-lite-v1:0"
	ask := []any{map[string]any{"role": "user", "content": fakeupstream.BedrockReasoningPrompt}}
	want := []map[string]string{
		{"type": "thinking", "thinking": fakeupstream.BedrockReasoning, "signature": fakeupstream.BedrockReasoningSignature},
		{"type": "redacted_thinking", "data": fakeupstream.BedrockRedactedReasoning},
		{"type": "text", "text": fakeupstream.Content(keyID)},
	}
	check := func(name string, got []map[string]string, out []byte) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: blocks %v\n%s", name, got, out)
		}
		for i, w := range want {
			for k, v := range w {
				if got[i][k] != v {
					t.Fatalf("%s: block %d %s = %q, want %q\n%s", name, i, k, got[i][k], v, out)
				}
			}
		}
	}
	resp, out := e.do("POST", "/v1/messages", map[string]any{"model": model, "max_tokens": 1024, "messages": ask}, auth)
	var blocks []map[string]string
	var replay []any
	for _, b := range gjson.GetBytes(out, "content").Array() {
		m := map[string]string{}
		for k, v := range b.Map() {
			m[k] = v.String()
		}
		blocks = append(blocks, m)
		replay = append(replay, b.Value())
	}
	if resp.StatusCode != 200 {
		t.Fatalf("messages: %d %s", resp.StatusCode, out)
	}
	check("messages", blocks, out)

	resp, out = e.do("POST", "/v1/messages", map[string]any{"model": model, "max_tokens": 1024, "messages": ask, "stream": true}, auth)
	blocks = nil
	for _, ev := range parseSSE(t, out) {
		d := gjson.Parse(ev.data)
		switch ev.event {
		case "content_block_start":
			blocks = append(blocks, map[string]string{"type": d.Get("content_block.type").String(), "data": d.Get("content_block.data").String()})
		case "content_block_delta":
			b := blocks[len(blocks)-1]
			b["thinking"] += d.Get("delta.thinking").String()
			b["signature"] += d.Get("delta.signature").String()
			b["text"] += d.Get("delta.text").String()
		}
	}
	if resp.StatusCode != 200 || !strings.Contains(string(out), "message_stop") {
		t.Fatalf("messages stream: %d %s", resp.StatusCode, out)
	}
	check("messages stream", blocks, out)

	resp, out = e.do("POST", "/v1/chat/completions", map[string]any{"model": model, "messages": ask}, auth)
	if msg := gjson.GetBytes(out, "choices.0.message"); resp.StatusCode != 200 || msg.Get("reasoning_content").String() != fakeupstream.BedrockReasoning ||
		msg.Get("thinking_blocks.0.signature").String() != fakeupstream.BedrockReasoningSignature ||
		msg.Get("thinking_blocks.1.data").String() != fakeupstream.BedrockRedactedReasoning {
		t.Fatalf("chat: %d %s", resp.StatusCode, out)
	}

	// The next turn replays the blocks: Converse gets them back first in the assistant turn.
	next := append(ask, map[string]any{"role": "assistant", "content": replay}, map[string]any{"role": "user", "content": "thanks"})
	resp, out = e.do("POST", "/v1/messages", map[string]any{"model": model, "max_tokens": 1024, "messages": next}, auth)
	if resp.StatusCode != 200 {
		t.Fatalf("replay: %d %s", resp.StatusCode, out)
	}
	_, sent := e.up.LastRequest(keyID)
	turn := gjson.GetBytes(sent, "messages.1")
	if turn.Get("role").String() != "assistant" ||
		turn.Get("content.0.reasoningContent.reasoningText.text").String() != fakeupstream.BedrockReasoning ||
		turn.Get("content.0.reasoningContent.reasoningText.signature").String() != fakeupstream.BedrockReasoningSignature ||
		turn.Get("content.1.reasoningContent.redactedContent").String() != fakeupstream.BedrockRedactedReasoning ||
		turn.Get("content.2.text").String() != fakeupstream.Content(keyID) {
		t.Fatalf("replayed turn sent to Converse: %s", sent)
	}

	// A Responses client (Codex: store false, encrypted reasoning included)
	// gets the blocks sealed in its reasoning item, and its next turn gives
	// them back to Converse.
	input := []any{map[string]any{"type": "message", "role": "user", "content": fakeupstream.BedrockReasoningPrompt}}
	resp, out = e.do("POST", "/v1/responses", map[string]any{"model": model, "input": input, "store": false,
		"include": []string{"reasoning.encrypted_content"}}, auth)
	rs := gjson.GetBytes(out, `output.#(type=="reasoning")`)
	if resp.StatusCode != 200 || rs.Get("encrypted_content").String() == "" || rs.Get("summary.0.text").String() != fakeupstream.BedrockReasoning {
		t.Fatalf("responses: %d %s", resp.StatusCode, out)
	}
	for _, it := range gjson.GetBytes(out, "output").Array() {
		input = append(input, it.Value())
	}
	input = append(input, map[string]any{"type": "message", "role": "user", "content": "thanks"})
	resp, out = e.do("POST", "/v1/responses", map[string]any{"model": model, "input": input, "store": false,
		"include": []string{"reasoning.encrypted_content"}}, auth)
	_, sent = e.up.LastRequest(keyID)
	turn = gjson.GetBytes(sent, "messages.1")
	if resp.StatusCode != 200 || turn.Get("content.0.reasoningContent.reasoningText.signature").String() != fakeupstream.BedrockReasoningSignature ||
		turn.Get("content.1.reasoningContent.redactedContent").String() != fakeupstream.BedrockRedactedReasoning {
		t.Fatalf("responses replay: %d %s\nsent %s", resp.StatusCode, out, sent)
	}
}
