package fakeupstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// The fake ChatGPT Codex backend: POST /backend-api/codex/responses, the
// Responses API as the Codex CLI's backend speaks it. It checks the wire
// contract and refuses a request that breaks it with 400 {"detail": …}:
//
//   - Authorization: Bearer <token> (the token is the record key),
//     chatgpt-account-id, OpenAI-Beta: responses=experimental and an
//     originator header;
//   - a JSON body with store false, stream true, an instructions string, an
//     input array and no max_output_tokens / temperature / top_p.
//
// It always streams: response.created, then either a function_call item (the
// request has tools and its last input item is not a function_call_output:
// a call to tools[0] with ToolArguments and id ToolCallIDOpenAI) or the text
// Content(key) (ToolResultText(output) after a tool result) in
// DefaultStreamChunks output_text deltas, then response.completed with usage.
// Every answer carries the usage-window headers of CodexWindowHeaders.
// Faults apply per key like the other routes.

// CodexWindowHeaders are the x-codex-* usage-window headers the fake sends:
// 5-hour window 42 % used resetting in an hour, weekly 10 % resetting in a day.
func CodexWindowHeaders() map[string]string {
	return map[string]string{
		"x-codex-primary-used-percent": "42", "x-codex-primary-window-minutes": "300", "x-codex-primary-reset-after-seconds": "3600",
		"x-codex-secondary-used-percent": "10", "x-codex-secondary-window-minutes": "10080", "x-codex-secondary-reset-after-seconds": "86400",
	}
}

// CodexContractError reports what a request to the fake Codex backend got
// wrong ("" when nothing), for the fake's own 400 and for tests.
func CodexContractError(h http.Header, body []byte) string {
	switch {
	case h.Get("chatgpt-account-id") == "":
		return "missing chatgpt-account-id header"
	case h.Get("OpenAI-Beta") != "responses=experimental":
		return "OpenAI-Beta must be responses=experimental"
	case h.Get("originator") == "":
		return "missing originator header"
	case !gjson.ValidBytes(body):
		return "body is not JSON"
	}
	root := gjson.ParseBytes(body)
	switch {
	case root.Get("store").Type != gjson.False:
		return "Store must be set to false"
	case root.Get("stream").Type != gjson.True:
		return "Stream must be set to true"
	case root.Get("instructions").Type != gjson.String:
		return "Instructions are required"
	case !root.Get("input").IsArray():
		return "Input must be a list"
	}
	for _, k := range []string{"max_output_tokens", "temperature", "top_p"} {
		if root.Get(k).Exists() {
			return "Unsupported parameter: " + k
		}
	}
	return ""
}

func (u *Upstream) codexResponses(w http.ResponseWriter, r *http.Request) {
	key, authed := apiKey(r, FormatOpenAI)
	body, err := readBody(w, r)
	if err != nil {
		u.writeError(w, http.StatusBadRequest, `{"detail":"unreadable body"}`)
		return
	}
	model := gjson.GetBytes(body, "model").String()
	f, n, _ := u.begin(key, r.URL.Path, r.Header, body, model, authed)
	defer u.end()
	if !authed {
		u.writeError(w, http.StatusUnauthorized, `{"detail":"Unauthorized"}`)
		return
	}
	if f != nil && f.Mode == ModeStatus {
		u.writeStatusFault(w, FormatOpenAI, f)
		return
	}
	if msg := CodexContractError(r.Header, body); msg != "" {
		b, _ := json.Marshal(map[string]string{"detail": msg})
		u.writeError(w, http.StatusBadRequest, string(b))
		return
	}
	h := w.Header()
	h["Content-Type"] = u.ctSSE
	h["Cache-Control"] = u.noCache
	for k, v := range CodexWindowHeaders() {
		h.Set(k, v)
	}
	if f != nil {
		for k, v := range f.Headers {
			h.Set(k, v)
		}
	}
	w.WriteHeader(http.StatusOK)
	cut := -1
	if f != nil && f.Mode == ModeCutAfterEvents {
		cut = f.AfterChunks
	}
	_, _ = w.Write(codexStream(key, model, body, n, cut))
}

// codexStream builds the Responses event stream of one answer (a reasoning
// summary first when the request sets reasoning.effort): the whole of it, or
// (cut ≥ 0) up to its cut-th delta event, reasoning deltas included, then
// nothing more, as a backend whose stream breaks without its closing events.
func codexStream(key, model string, body []byte, chunks, cut int) []byte {
	var b bytes.Buffer
	deltas, cutHere := 0, false
	ev := func(v map[string]any) {
		typ := v["type"].(string)
		isDelta := strings.HasSuffix(typ, ".delta")
		// The cut comes after the cut-th delta: before the next delta, or
		// before the closing events when it was the last.
		cutHere = cutHere || cut >= 0 && deltas >= cut && (isDelta || deltas > 0)
		if cutHere {
			return
		}
		sseEvent(&b, typ, v)
		if isDelta {
			deltas++
		}
	}
	resp := map[string]any{"id": "resp_fake01", "object": "response", "created_at": fakeCreated, "model": model, "status": "in_progress", "output": []any{}}
	ev(map[string]any{"type": "response.created", "response": resp})
	root := gjson.ParseBytes(body)
	input := root.Get("input").Array()
	var last gjson.Result
	if len(input) > 0 {
		last = input[len(input)-1]
	}
	var item map[string]any
	outTokens, reasoningTokens := 0, 0
	// A request asking for reasoning gets its summary first, as its own
	// output item (the message or call is then the second).
	var output []any
	at := 0
	if root.Get("reasoning.effort").String() != "" {
		const id = "rs_fake01"
		ev(map[string]any{"type": "response.output_item.added", "output_index": at,
			"item": map[string]any{"type": "reasoning", "id": id, "summary": []any{}}})
		ev(map[string]any{"type": "response.reasoning_summary_part.added", "item_id": id, "output_index": at, "summary_index": 0,
			"part": map[string]any{"type": "summary_text", "text": ""}})
		for _, p := range splitContent(ReasoningText, chunks) {
			reasoningTokens++
			ev(map[string]any{"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": at, "summary_index": 0, "delta": p})
		}
		ev(map[string]any{"type": "response.reasoning_summary_text.done", "item_id": id, "output_index": at, "summary_index": 0, "text": ReasoningText})
		summary := map[string]any{"type": "summary_text", "text": ReasoningText}
		ev(map[string]any{"type": "response.reasoning_summary_part.done", "item_id": id, "output_index": at, "summary_index": 0, "part": summary})
		reasoning := map[string]any{"type": "reasoning", "id": id, "summary": []any{summary}}
		ev(map[string]any{"type": "response.output_item.done", "output_index": at, "item": reasoning})
		output = append(output, reasoning)
		at++
	}
	if tool := root.Get("tools.0.name").String(); tool != "" && last.Get("type").String() != "function_call_output" {
		item = map[string]any{"type": "function_call", "id": "fc_fake01", "call_id": ToolCallIDOpenAI, "name": tool, "arguments": ToolArguments, "status": "completed"}
		ev(map[string]any{"type": "response.output_item.added", "output_index": at,
			"item": map[string]any{"type": "function_call", "id": "fc_fake01", "call_id": ToolCallIDOpenAI, "name": tool, "arguments": "", "status": "in_progress"}})
		for _, p := range splitContent(ToolArguments, chunks) {
			outTokens++
			ev(map[string]any{"type": "response.function_call_arguments.delta", "item_id": "fc_fake01", "output_index": at, "delta": p})
		}
		ev(map[string]any{"type": "response.function_call_arguments.done", "item_id": "fc_fake01", "output_index": at, "arguments": ToolArguments})
	} else {
		text := Content(key)
		if last.Get("type").String() == "function_call_output" {
			text = ToolResultText(last.Get("output").String())
		}
		item = map[string]any{"type": "message", "id": "msg_fake01", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
		ev(map[string]any{"type": "response.output_item.added", "output_index": at,
			"item": map[string]any{"type": "message", "id": "msg_fake01", "role": "assistant", "status": "in_progress", "content": []any{}}})
		ev(map[string]any{"type": "response.content_part.added", "item_id": "msg_fake01", "output_index": at, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": ""}})
		for _, p := range splitContent(text, chunks) {
			outTokens++
			ev(map[string]any{"type": "response.output_text.delta", "item_id": "msg_fake01", "output_index": at, "content_index": 0, "delta": p})
		}
		ev(map[string]any{"type": "response.output_text.done", "item_id": "msg_fake01", "output_index": at, "content_index": 0, "text": text})
	}
	ev(map[string]any{"type": "response.output_item.done", "output_index": at, "item": item})
	resp["status"] = "completed"
	resp["output"] = append(output, item)
	outTokens += reasoningTokens
	resp["usage"] = map[string]any{"input_tokens": fakePromptTokens, "output_tokens": outTokens, "total_tokens": fakePromptTokens + outTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": reasoningTokens}}
	ev(map[string]any{"type": "response.completed", "response": resp})
	return b.Bytes()
}

// LimitReset scripts the Claude limit reset endpoints of the fake:
// GET /api/oauth/usage answers Usage (status UsageStatus, default 200),
// POST /api/organizations/{org}/reset_rate_limits answers Claim (ClaimStatus),
// and the organisation look-ups GET /api/claude_cli/bootstrap and GET
// /api/oauth/profile answer Bootstrap and Profile (404 when empty).
type LimitReset struct {
	Usage       string `json:"usage"`
	UsageStatus int    `json:"usageStatus,omitempty"`
	Claim       string `json:"claim"`
	ClaimStatus int    `json:"claimStatus,omitempty"`
	Bootstrap   string `json:"bootstrap,omitempty"`
	Profile     string `json:"profile,omitempty"`
}

// accountLookup answers the organisation look-ups from the limit reset
// script: bootstrap or profile.
func (u *Upstream) accountLookup(profile bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		s := u.limitReset
		u.mu.Unlock()
		body := ""
		if s != nil {
			body = s.Bootstrap
			if profile {
				body = s.Profile
			}
		}
		if body == "" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			u.writeError(w, http.StatusNotFound, `{"error":{"type":"not_found_error","message":"not found"}}`)
			return
		}
		u.writeError(w, http.StatusOK, body)
	}
}

// SetLimitReset installs the limit reset script (nil: both endpoints 404).
func (u *Upstream) SetLimitReset(s *LimitReset) {
	u.mu.Lock()
	u.limitReset = s
	u.mu.Unlock()
}

// ResetClaims lists the organisations whose reset was claimed, in order.
func (u *Upstream) ResetClaims() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.claims...)
}

func (u *Upstream) limitResetHandler(claim bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxBodyBytes))
		u.mu.Lock()
		s := u.limitReset
		if claim && s != nil {
			u.claims = append(u.claims, r.PathValue("org"))
		}
		u.mu.Unlock()
		if s == nil || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			u.writeError(w, http.StatusNotFound, `{"error":{"type":"not_found_error","message":"not found"}}`)
			return
		}
		body, status := s.Usage, s.UsageStatus
		if claim {
			body, status = s.Claim, s.ClaimStatus
		}
		if status == 0 {
			status = http.StatusOK
		}
		u.writeError(w, status, body)
	}
}
