package fakeupstream

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// AWS Bedrock's Converse API, as AWS documents it:
//
//   - POST /model/{modelId}/converse (JSON) and /model/{modelId}/converse-stream
//     (application/vnd.amazon.eventstream: messageStart, contentBlockStart,
//     contentBlockDelta, contentBlockStop, messageStop, metadata events).
//   - Every request is signed with SigV4 for the service "bedrock"; the fake
//     recomputes the signature from the request (its own implementation of
//     AWS's algorithm) with the secret SetAWSCredentials gave for the access
//     key id, and answers 403 InvalidSignatureException /
//     UnrecognizedClientException otherwise. A session token, when set, must
//     come as X-Amz-Security-Token.
//   - Errors carry their type in x-amzn-ErrorType and {"message": …}.
//
// Answers are the key id's Content (or a call to the first tool), like the
// other routes; stats are kept per access key id. A last user message of
// BedrockCorruptPrompt gets a stream whose second frame fails its checksum.

// InvokeModel and InvokeModelWithResponseStream with an Anthropic model's
// Messages body (POST /model/{modelId}/invoke, …/invoke-with-response-stream):
// the body must carry anthropic_version "bedrock-2023-05-31" and max_tokens
// and no "model" or "stream" (400 ValidationException otherwise); the answer
// is a Messages JSON, or event-stream "chunk" messages whose payload
// {"bytes": <base64>} is one Messages stream event. A request with
// "thinking" gets a thinking block first; a trailing assistant message
// (prefill) is continued with BedrockPrefillAnswer. With
// BedrockCorruptPrompt the stream stops before message_stop.

// BedrockPrefillAnswer is the fake's continuation of a prefilled assistant turn.
const BedrockPrefillAnswer = " and that is the rest."

// BedrockThinking is the fake's thinking text when thinking is enabled.
const BedrockThinking = "Let me think about it."

// BedrockCorruptPrompt asks the fake for a stream with a checksum-failing frame.
const BedrockCorruptPrompt = "send a corrupt frame"

// BedrockReasoningPrompt asks Converse for an answer that reasons first, as
// the Runtime API reference shapes it: a ReasoningContentBlock
// reasoningText {text: BedrockReasoning, signature: BedrockReasoningSignature},
// then one redactedContent (BedrockRedactedReasoning, base64), then the
// text; streamed as contentBlockDelta events whose delta.reasoningContent
// carries the text, then the signature, then the redacted content.
const BedrockReasoningPrompt = "reason before you answer"

// The fake's reasoning, its signature and its redacted reasoning.
const (
	BedrockReasoning          = "The user wants a short answer."
	BedrockReasoningSignature = "EqgBCkgIARABGAIiQE0ycGPdLtHNi0wnHAXW6AYMuCkMMuOSYmr0LDSaWfJYJHWHyXVdUGahcaFWjcUcXgRk5ROkN8WYmzyIb2mnOUYS"
	BedrockRedactedReasoning  = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfUXG7sxRZt"
)

// awsCreds are an access key id's secret and optional session token.
type awsCreds struct{ secret, token string }

// SetAWSCredentials registers an access key id's secret (and session token, "" for none).
func (u *Upstream) SetAWSCredentials(keyID, secret, sessionToken string) {
	u.mu.Lock()
	if u.aws == nil {
		u.aws = map[string]awsCreds{}
	}
	m := maps.Clone(u.aws)
	m[keyID] = awsCreds{secret, sessionToken}
	u.aws = m
	u.mu.Unlock()
}

func (u *Upstream) bedrockError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	b, _ := json.Marshal(map[string]string{"message": msg})
	u.writeError(w, status, string(b))
}

// bedrockCall serves POST /model/{model}/{op}.
func (u *Upstream) bedrockCall(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		u.bedrockError(w, 400, "ValidationException", "unreadable body")
		return
	}
	keyID, problem := u.verifySigV4(r, body)
	if problem != "" {
		status, typ := 403, "InvalidSignatureException"
		if keyID == "" || strings.HasPrefix(problem, "unknown") {
			typ = "UnrecognizedClientException"
		}
		u.bedrockError(w, status, typ, problem)
		return
	}
	model := r.PathValue("model")
	f, _, _ := u.begin(keyID, r.URL.EscapedPath(), r.Header, body, model, true)
	defer u.end()
	if f != nil && f.Mode == ModeStatus {
		u.writeStatusFault(w, FormatOpenAI, f)
		return
	}
	msgs := gjson.GetBytes(body, "messages")
	if !msgs.IsArray() || len(msgs.Array()) == 0 {
		u.bedrockError(w, 400, "ValidationException", "1 validation error detected: Value null at 'messages' failed to satisfy constraint: Member must not be null")
		return
	}
	if op := r.PathValue("op"); op == "invoke" || op == "invoke-with-response-stream" {
		u.bedrockInvoke(w, body, keyID, op == "invoke-with-response-stream")
		return
	}
	last := msgs.Array()[len(msgs.Array())-1]
	text := Content(keyID)
	tool := gjson.GetBytes(body, "toolConfig.tools.0.toolSpec.name").String()
	if tr := last.Get("content.#(toolResult).toolResult.content.0.text"); tr.Exists() {
		text, tool = ToolResultText(tr.String()), ""
	}
	w.Header().Set("X-Amzn-Requestid", "fake-req-1")
	usage := map[string]int{"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}
	reasons := last.Get("content.0.text").String() == BedrockReasoningPrompt
	if r.PathValue("op") == "converse" {
		content := []any{map[string]any{"text": text}}
		if reasons {
			content = append([]any{
				map[string]any{"reasoningContent": map[string]any{"reasoningText": map[string]any{"text": BedrockReasoning, "signature": BedrockReasoningSignature}}},
				map[string]any{"reasoningContent": map[string]any{"redactedContent": BedrockRedactedReasoning}},
			}, content...)
		}
		stop := "end_turn"
		if tool != "" {
			content = []any{map[string]any{"toolUse": map[string]any{"toolUseId": "tooluse_fake1", "name": tool, "input": json.RawMessage(ToolArguments)}}}
			stop = "tool_use"
		}
		b, _ := json.Marshal(map[string]any{"output": map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
			"stopReason": stop, "usage": usage, "metrics": map[string]int{"latencyMs": 10}})
		w.Header()["Content-Type"] = u.ctJSON
		_, _ = w.Write(b)
		return
	}
	if r.PathValue("op") != "converse-stream" {
		u.bedrockError(w, 404, "UnknownOperationException", "")
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	fl, _ := w.(http.Flusher)
	send := func(typ string, v any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(eventFrame(typ, b))
		if fl != nil {
			fl.Flush()
		}
	}
	send("messageStart", map[string]any{"role": "assistant"})
	if last.Get("content.0.text").String() == BedrockCorruptPrompt {
		bad := eventFrame("contentBlockDelta", []byte(`{"contentBlockIndex":0,"delta":{"text":"half"}}`))
		bad[len(bad)-6] ^= 0xff // the payload changes after the checksum was computed
		_, _ = w.Write(bad)
		send("messageStop", map[string]any{"stopReason": "end_turn"})
		return
	}
	stop := "end_turn"
	if reasons {
		for i, d := range []map[string]any{{"text": BedrockReasoning}, {"signature": BedrockReasoningSignature}, {"redactedContent": BedrockRedactedReasoning}} {
			send("contentBlockDelta", map[string]any{"contentBlockIndex": i / 2, "delta": map[string]any{"reasoningContent": d}})
		}
	}
	if tool != "" {
		send("contentBlockStart", map[string]any{"contentBlockIndex": 0, "start": map[string]any{"toolUse": map[string]any{"toolUseId": "tooluse_fake1", "name": tool}}})
		send("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"toolUse": map[string]any{"input": ToolArguments}}})
		stop = "tool_use"
	} else {
		for _, piece := range splitChunks(text, DefaultStreamChunks) {
			send("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"text": piece}})
		}
	}
	send("contentBlockStop", map[string]any{"contentBlockIndex": 0})
	send("messageStop", map[string]any{"stopReason": stop})
	send("metadata", map[string]any{"usage": usage, "metrics": map[string]int{"latencyMs": 10}})
}

// BedrockFoundationModels are the fake's on-demand foundation models: id → output modality.
var BedrockFoundationModels = [][2]string{
	{"anthropic.claude-3-5-haiku-20241022-v1:0", "TEXT"},
	{"amazon.nova-lite-v1:0", "TEXT"},
	{"amazon.titan-embed-text-v2:0", "EMBEDDING"},
}

// BedrockInferenceProfiles are the fake's cross-region inference profiles.
var BedrockInferenceProfiles = []string{"us.anthropic.claude-3-5-haiku-20241022-v1:0"}

// bedrockList serves GET /foundation-models (ListFoundationModels, filtered
// by byOutputModality) and GET /inference-profiles (ListInferenceProfiles).
func (u *Upstream) bedrockList(w http.ResponseWriter, r *http.Request) {
	keyID, problem := u.verifySigV4(r, nil)
	if problem != "" {
		u.bedrockError(w, 403, "UnrecognizedClientException", problem)
		return
	}
	f, _, _ := u.begin(keyID, r.URL.EscapedPath(), r.Header, nil, "", true)
	defer u.end()
	if f != nil && f.Mode == ModeStatus {
		u.writeStatusFault(w, FormatOpenAI, f)
		return
	}
	var out any
	if r.URL.Path == "/foundation-models" {
		var list []map[string]any
		for _, m := range BedrockFoundationModels {
			if mod := r.URL.Query().Get("byOutputModality"); mod != "" && mod != m[1] {
				continue
			}
			list = append(list, map[string]any{"modelId": m[0], "outputModalities": []string{m[1]}, "inferenceTypesSupported": []string{"ON_DEMAND"}})
		}
		out = map[string]any{"modelSummaries": list}
	} else {
		var list []map[string]any
		for _, id := range BedrockInferenceProfiles {
			list = append(list, map[string]any{"inferenceProfileId": id, "status": "ACTIVE", "type": "SYSTEM_DEFINED"})
		}
		out = map[string]any{"inferenceProfileSummaries": list}
	}
	b, _ := json.Marshal(out)
	w.Header()["Content-Type"] = u.ctJSON
	_, _ = w.Write(b)
}

// splitChunks cuts s into at most n pieces.
func splitChunks(s string, n int) []string {
	if n < 1 || len(s) <= n {
		return []string{s}
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > size {
		out = append(out, s[:size])
		s = s[size:]
	}
	return append(out, s)
}

// eventFrame frames one event-stream event (string headers, CRC32 of the
// prelude and of the whole message), independently of the gateway's encoder.
func eventFrame(eventType string, payload []byte) []byte {
	var hb []byte
	for _, kv := range [][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}} {
		hb = append(hb, byte(len(kv[0])))
		hb = append(hb, kv[0]...)
		hb = append(hb, 7)
		hb = binary.BigEndian.AppendUint16(hb, uint16(len(kv[1])))
		hb = append(hb, kv[1]...)
	}
	total := 12 + len(hb) + len(payload) + 4
	b := binary.BigEndian.AppendUint32(nil, uint32(total))
	b = binary.BigEndian.AppendUint32(b, uint32(len(hb)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(append(b, hb...), payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// verifySigV4 recomputes the request's SigV4 signature. It returns the
// access key id and "" when it matches, else what is wrong.
func (u *Upstream) verifySigV4(r *http.Request, body []byte) (string, string) {
	const alg = "AWS4-HMAC-SHA256 "
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, alg) {
		return "", "missing AWS4-HMAC-SHA256 Authorization"
	}
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, alg), ", ") {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[3] != "bedrock" || cred[4] != "aws4_request" {
		return "", "credential scope " + fields["Credential"]
	}
	keyID, date, region := cred[0], cred[1], cred[2]
	u.mu.Lock()
	c, known := u.aws[keyID]
	u.mu.Unlock()
	if !known {
		return keyID, "unknown access key id"
	}
	if c.token != "" && r.Header.Get("X-Amz-Security-Token") != c.token {
		return keyID, "unknown access key id: the session token does not match"
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if !strings.HasPrefix(amzDate, date) {
		return keyID, "X-Amz-Date and the credential scope disagree"
	}
	sum := sha256.Sum256(body)
	var ch strings.Builder
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		v := r.Header.Get(h)
		if h == "host" {
			v = r.Host
		}
		ch.WriteString(h + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
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
	canonical := strings.Join([]string{r.Method, strings.Join(segs, "/"), strings.Join(cq, "&"), ch.String(), fields["SignedHeaders"], hex.EncodeToString(sum[:])}, "\n")
	hc := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + strings.Join(cred[1:], "/") + "\n" + hex.EncodeToString(hc[:])
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	k := mac(mac(mac(mac([]byte("AWS4"+c.secret), date), region), "bedrock"), "aws4_request")
	if hex.EncodeToString(mac(k, toSign)) != fields["Signature"] {
		return keyID, "The request signature we calculated does not match the signature you provided."
	}
	return keyID, ""
}

// bedrockInvoke serves the InvokeModel operations (Anthropic Messages body).
func (u *Upstream) bedrockInvoke(w http.ResponseWriter, body []byte, keyID string, stream bool) {
	root := gjson.ParseBytes(body)
	switch {
	case root.Get("anthropic_version").String() != "bedrock-2023-05-31":
		u.bedrockError(w, 400, "ValidationException", "Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.")
		return
	case root.Get("model").Exists() || root.Get("stream").Exists():
		u.bedrockError(w, 400, "ValidationException", "Malformed input request: #: extraneous key [model] is not permitted, please reformat your input and try again.")
		return
	case root.Get("max_tokens").Int() <= 0:
		u.bedrockError(w, 400, "ValidationException", "Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.")
		return
	}
	msgs := root.Get("messages").Array()
	last := msgs[len(msgs)-1]
	text := Content(keyID)
	if last.Get("role").String() == "assistant" {
		text = BedrockPrefillAnswer
	}
	thinking := root.Get("thinking.type").String() == "enabled"
	lastText := last.Get("content").String()
	if c := last.Get("content"); c.IsArray() {
		lastText = c.Get("0.text").String()
	}
	w.Header().Set("X-Amzn-Requestid", "fake-invoke-1")
	usage := map[string]int{"input_tokens": 5, "output_tokens": 3}
	if !stream {
		var content []any
		if thinking {
			content = append(content, map[string]any{"type": "thinking", "thinking": BedrockThinking, "signature": "sig-fake"})
		}
		content = append(content, map[string]any{"type": "text", "text": text})
		b, _ := json.Marshal(map[string]any{"id": "msg_bdrk_fake1", "type": "message", "role": "assistant", "model": "claude-fake",
			"content": content, "stop_reason": "end_turn", "stop_sequence": nil, "usage": usage})
		w.Header()["Content-Type"] = u.ctJSON
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	fl, _ := w.(http.Flusher)
	send := func(v map[string]any) {
		ev, _ := json.Marshal(v)
		b, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString(ev)})
		_, _ = w.Write(eventFrame("chunk", b))
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_bdrk_fake1", "type": "message", "role": "assistant",
		"model": "claude-fake", "content": []any{}, "stop_reason": nil, "usage": map[string]int{"input_tokens": 5, "output_tokens": 1}}})
	idx := 0
	if thinking {
		send(map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
		send(map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": BedrockThinking}})
		send(map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "signature_delta", "signature": "sig-fake"}})
		send(map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	send(map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
	for _, piece := range splitChunks(text, DefaultStreamChunks) {
		send(map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": piece}})
	}
	if lastText == BedrockCorruptPrompt {
		return // cut before message_stop
	}
	send(map[string]any{"type": "content_block_stop", "index": idx})
	send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 3}})
	send(map[string]any{"type": "message_stop", "amazon-bedrock-invocationMetrics": map[string]int{"inputTokenCount": 5, "outputTokenCount": 3}})
}
