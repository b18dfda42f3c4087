// Package fakeupstream is a fake LLM provider for the gateway's tests and
// benchmarks. It speaks the real OpenAI (/v1/chat/completions, /v1/models) and
// Anthropic (/v1/messages) wire formats, JSON and SSE, records what it
// receives per API key (hits, headers, body, path and model), and injects
// faults (error statuses, resets, stalls, slow drips, latency, and broken
// streams: cut, no [DONE], malformed event, slow first token, reasoning-only
// heartbeats, in-stream error) per API key, programmable in Go or over HTTP
// under /_fake/ for out-of-process tests.
//
// Answers are deterministic and echo the requested model. Their shape is
// chosen per request:
//
//   - The last message is a tool result (OpenAI role "tool"; Anthropic a user
//     message with a tool_result block, the first one): the text
//     ToolResultText(content), "Tool said: <content>", content being the
//     string or the concatenated text parts.
//   - Otherwise, the request has tools (OpenAI tools[0].function.name,
//     Anthropic tools[0].name): a call to the first tool, id ToolCallIDOpenAI
//     or ToolCallIDAnthropic, arguments ToolArguments; finish_reason
//     "tool_calls" / stop_reason "tool_use". A first tool without a name
//     there gets the provider's 400 (OpenAIMissingToolNameBody,
//     AnthropicMissingToolNameBody): the shape of a request sent in the
//     other format.
//   - Otherwise: the text Content(key), e.g. "Hello from key-a", so a test
//     can tell which gateway connection served a request.
//   - When the request asks for reasoning (OpenAI reasoning_effort set;
//     Anthropic thinking.type "enabled"), ReasoningText comes first: the
//     OpenAI-compatible message.reasoning_content / delta.reasoning_content,
//     or an Anthropic thinking block (thinking_delta events, then a
//     signature_delta with ThinkingSignature).
//
// Usage: JSON answers always carry it; OpenAI streams only when the request
// sets stream_options.include_usage, as OpenAI does (then every chunk has
// "usage":null and a last chunk with "choices":[] carries the usage before
// [DONE]); Anthropic streams always (message_start input_tokens,
// message_delta output_tokens). Output tokens count the content events,
// reasoning ones included (OpenAI completion_tokens_details.reasoning_tokens).
//
// Streams carry a preamble (OpenAI: the role chunk; Anthropic: message_start,
// the first content_block_start, ping), then the content events, each block
// of the answer (reasoning, text, tool arguments) in DefaultStreamChunks
// pieces (see SetStreamChunks), then the closing frames (OpenAI: the
// finish_reason chunk, the usage chunk if asked, [DONE]; Anthropic:
// content_block_stop, message_delta, message_stop); every frame is flushed.
// Fault modes that count (Fault.AfterChunks) count content events only:
// deltas of text, reasoning or tool arguments, not the block boundaries or
// the tool call header that precede a block's first delta. A fault can be
// limited to some models (Fault.Models) and to the answers after a tool
// result (Fault.ToolResultsOnly: an agent's final text, whatever side
// requests it sends).
//
// It also plays Azure OpenAI's deployment routes (azure.go), AWS Bedrock's
// Converse API with SigV4 checks (bedrock.go) and Google's Gemini API (/v1beta/models/{model}:generateContent,
// :streamGenerateContent with and without alt=sse, :countTokens, the model
// list: gemini.go), the ChatGPT Codex backend (POST /backend-api/codex/responses,
// checking its wire contract: codex.go), Google's Code Assist API (POST
// /v1internal:{loadCodeAssist,onboardUser,generateContent,streamGenerateContent,
// retrieveUserQuota}) and Vertex AI's publisher routes (google.go),
// Anthropic's limit reset endpoints (SetLimitReset), and, as separate
// servers, an OAuth token endpoint (NewTokenServer: oauth.go) and a
// service-account token endpoint that verifies JWT signatures
// (NewJWTTokenServer: google.go).
//
// Control API (JSON, no auth): POST /_fake/faults {"key":K,"fault":{...},
// "append":bool} (key "*" = every key), GET and DELETE /_fake/faults
// (?key=K deletes one key's), GET /_fake/stats, GET /_fake/last?key=K,
// POST /_fake/reset, POST /_fake/config {"streamChunks":N,"models":[...],
// "toolCalls":{"name":"{json args}"}}.
// Remote is a Go client for it.
package fakeupstream

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultStreamChunks is how many content chunks a streamed answer has unless
// SetStreamChunks says otherwise.
const DefaultStreamChunks = 5

// maxStreamChunks bounds SetStreamChunks so a typo cannot make huge answers.
const maxStreamChunks = 10000

// maxCachedAnswers bounds the precomputed-answer cache; past it answers are
// built per request (only a test sending thousands of distinct models gets there).
const maxCachedAnswers = 4096

// DefaultModels is the model list GET /v1/models answers unless SetModels
// says otherwise.
func DefaultModels() []string {
	return []string{"gpt-4o-mini", "gpt-4o", "claude-3-5-haiku-latest", "claude-sonnet-4-5", "glm-4.5-flash"}
}

// Upstream is the fake provider. It is an http.Handler; Start or Serve put it
// on a socket. The zero value is not usable: call New.
type Upstream struct {
	mux       *http.ServeMux
	done      chan struct{} // closed by Close: wakes every blocked handler
	closeOnce sync.Once

	// Precomputed header values, shared by every response (net/http only reads them).
	ctJSON, ctSSE, noCache []string

	mu       sync.Mutex
	closed   bool
	stats    map[string]*keyRecord
	faults   map[string][]*faultState
	inflight int
	// modelInFlight and modelPeak count completion requests in flight per
	// model and the most seen at once; canceled counts completion requests
	// whose client went away before the answer ended.
	modelInFlight  map[string]int
	modelPeak      map[string]int
	canceled       int
	peakInFlight   int
	changed        chan struct{} // closed when hits or inflight change; nil without waiters
	chunks         int
	models         []string
	modelsPage     int      // Anthropic model list page size (0: one page); Gemini's default pageSize
	geminiModelIDs []string // GET /v1beta/models
	// azureDeployments are the Azure resource's deployments (name → model; nil: any name).
	azureDeployments map[string]string
	// aws are the Bedrock access key ids the fake knows (replaced, never mutated).
	aws         map[string]awsCreds
	toolCalls   map[string]string // scripted tool calls: name → arguments; replaced, never mutated
	modelsByFmt [2]*answer
	testSrv     *httptest.Server
	limitReset  *LimitReset
	claims      []string
	servers     []*http.Server
	google      *googleState // Code Assist and Vertex calls (google.go)

	cacheMu sync.RWMutex
	cache   map[answerKey]*answer
}

// keyRecord is what the fake remembers about one API key.
type keyRecord struct {
	hits int
	// byModel counts the requests per model field.
	byModel map[string]int
	header  http.Header
	body    []byte
	path    string
	model   string
	// arrivals are the times the requests arrived, in order.
	arrivals []time.Time
}

// answerKey identifies a precomputed answer.
type answerKey struct {
	format Format
	chunks int
	model  string
	label  string // caller key, for kindText answers only
	shape  shape
}

// maxCachedResult bounds the tool result length of cached answers, so big
// tool outputs do not pile up in the cache.
const maxCachedResult = 1024

// New returns a fake with no faults, DefaultStreamChunks and DefaultModels.
func New() *Upstream {
	u := &Upstream{
		done:    make(chan struct{}),
		ctJSON:  []string{"application/json"},
		ctSSE:   []string{"text/event-stream; charset=utf-8"},
		noCache: []string{"no-cache"},
		cache:   make(map[answerKey]*answer),
	}
	u.resetLocked()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", u.completion(FormatOpenAI))
	mux.HandleFunc("POST /v1/messages", u.completion(FormatAnthropic))
	mux.HandleFunc("POST /v1/embeddings", u.embeddings)
	mux.HandleFunc("POST /v1/completions", u.textCompletion)
	mux.HandleFunc("GET /v1/models", u.listModels)
	mux.HandleFunc("POST /backend-api/codex/responses", u.codexResponses)
	mux.HandleFunc("POST /v1beta/models/{call}", u.geminiCall)
	mux.HandleFunc("GET /v1beta/models", u.geminiModels)
	mux.HandleFunc("GET /v1beta/models/{call}", u.geminiGetModel)
	mux.HandleFunc("POST /openai/deployments/{deployment}/{op...}", u.azureCall)
	mux.HandleFunc("GET /openai/deployments", u.azureList)
	mux.HandleFunc("POST /openai/v1/responses", u.azureResponses)
	mux.HandleFunc("POST /model/{model}/{op}", u.bedrockCall)
	mux.HandleFunc("GET /foundation-models", u.bedrockList)
	mux.HandleFunc("GET /inference-profiles", u.bedrockList)
	mux.HandleFunc("POST /api/chat", u.ollamaChat)
	mux.HandleFunc("GET /api/tags", u.ollamaTags)
	mux.HandleFunc("POST /api/embed", u.ollamaEmbed)
	mux.HandleFunc("POST /{call}", u.codeAssistCall)
	mux.HandleFunc("POST /v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{call}", u.vertexCall)
	mux.HandleFunc("GET /api/oauth/usage", u.limitResetHandler(false))
	mux.HandleFunc("POST /api/organizations/{org}/reset_rate_limits", u.limitResetHandler(true))
	mux.HandleFunc("GET /api/claude_cli/bootstrap", u.accountLookup(false))
	mux.HandleFunc("GET /api/oauth/profile", u.accountLookup(true))
	u.control(mux)
	mux.HandleFunc("/", notFound)
	u.mux = mux
	return u
}

// resetLocked puts the mutable state back to what New makes.
func (u *Upstream) resetLocked() {
	u.limitReset, u.claims, u.google = nil, nil, nil
	u.stats = make(map[string]*keyRecord)
	u.modelInFlight, u.modelPeak, u.canceled, u.peakInFlight = map[string]int{}, map[string]int{}, 0, 0
	u.faults = make(map[string][]*faultState)
	u.chunks = DefaultStreamChunks
	u.toolCalls = nil
	u.setModelsLocked(DefaultModels())
	u.geminiModelIDs = DefaultGeminiModels()
	u.azureDeployments, u.aws = nil, nil
	u.notifyLocked()
}

// ServeHTTP serves the fake API and the /_fake/ control API. The reset modes
// need a hijackable connection (a real server), not an httptest.ResponseRecorder.
func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.mux.ServeHTTP(w, r) }

// Start serves the fake on an httptest.Server on 127.0.0.1 and returns its
// base URL (without /v1). Calling it again returns the same URL.
func (u *Upstream) Start() (baseURL string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		panic("fakeupstream: Start after Close")
	}
	if u.testSrv == nil {
		u.testSrv = httptest.NewServer(u)
	}
	return u.testSrv.URL
}

// Serve serves the fake on l until Close, for the standalone command. It
// returns nil after Close and the server's error otherwise.
func (u *Upstream) Serve(l net.Listener) error {
	srv := &http.Server{Handler: u, ReadHeaderTimeout: readHeaderTimeout}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		_ = l.Close()
		return nil
	}
	u.servers = append(u.servers, srv)
	u.mu.Unlock()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close wakes every stalled handler, shuts down the servers started by Start
// and Serve, and waits until no /v1 handler is running, so tests that close
// the fake leak no goroutine. Safe to call twice.
func (u *Upstream) Close() {
	u.closeOnce.Do(func() { close(u.done) })
	u.mu.Lock()
	u.closed = true
	ts, servers := u.testSrv, u.servers
	u.testSrv, u.servers = nil, nil
	u.mu.Unlock()
	if ts != nil {
		ts.Close()
	}
	for _, s := range servers {
		_ = s.Close()
	}
	// Hijacked connections are not waited for by the servers: wait for their
	// handlers here (they return promptly, since done is closed).
	_ = u.WaitInFlight(context.Background(), 0)
}

// Hits returns how many /v1 requests carried key (requests without
// credentials count under "").
func (u *Upstream) Hits(key string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if rec := u.stats[key]; rec != nil {
		return rec.hits
	}
	return 0
}

// Arrivals returns when each /v1 request carrying key arrived, in order: what
// pacing spaces (the answers' return to the client adds the machine's jitter).
func (u *Upstream) Arrivals(key string) []time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	if rec := u.stats[key]; rec != nil {
		return slices.Clone(rec.arrivals)
	}
	return nil
}

// ModelHits returns how many /v1 requests carried key and asked for model, so
// tests can tell a connection's models apart (one key serving a failing model
// and its fallback).
func (u *Upstream) ModelHits(key, model string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if rec := u.stats[key]; rec != nil {
		return rec.byModel[model]
	}
	return 0
}

// AllHits returns the request count of every key seen.
func (u *Upstream) AllHits() map[string]int {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[string]int, len(u.stats))
	for k, rec := range u.stats {
		out[k] = rec.hits
	}
	return out
}

// LastPath returns the URL path of the last request that carried key (""
// if none arrived), so tests can check which upstream endpoint a gateway
// used, e.g. that a Claude Code request reached an OpenAI upstream as
// /v1/chat/completions.
func (u *Upstream) LastPath(key string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if rec := u.stats[key]; rec != nil {
		return rec.path
	}
	return ""
}

// LastModel returns the model field of the last request that carried key
// ("" if none arrived, or its body had no model or was not JSON).
func (u *Upstream) LastModel(key string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if rec := u.stats[key]; rec != nil {
		return rec.model
	}
	return ""
}

// LastRequest returns a copy of the headers and the body of the last request
// that carried key, so tests can check what the gateway forwarded; both are
// nil if none arrived.
func (u *Upstream) LastRequest(key string) (http.Header, []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	rec := u.stats[key]
	if rec == nil {
		return nil, nil
	}
	return rec.header.Clone(), slices.Clone(rec.body)
}

// lastRecord returns a copy of key's record, taken under one lock so its
// fields describe the same request.
func (u *Upstream) lastRecord(key string) (keyRecord, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	rec := u.stats[key]
	if rec == nil {
		return keyRecord{}, false
	}
	out := *rec
	out.header, out.body = rec.header.Clone(), slices.Clone(rec.body)
	return out, true
}

// InFlight returns how many /v1 requests are being handled right now.
func (u *Upstream) InFlight() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.inflight
}

// WaitInFlight blocks until exactly n /v1 requests are in flight or ctx ends,
// so tests can synchronise on "the fake is stalling" or "every handler has
// returned" without sleeping.
func (u *Upstream) WaitInFlight(ctx context.Context, n int) error {
	return u.wait(ctx, func() bool { return u.inflight == n })
}

// WaitHits blocks until key has at least n hits or ctx ends.
func (u *Upstream) WaitHits(ctx context.Context, key string, n int) error {
	return u.wait(ctx, func() bool {
		rec := u.stats[key]
		return rec != nil && rec.hits >= n
	})
}

func (u *Upstream) wait(ctx context.Context, cond func() bool) error {
	for {
		u.mu.Lock()
		if cond() {
			u.mu.Unlock()
			return nil
		}
		if u.changed == nil {
			u.changed = make(chan struct{})
		}
		ch := u.changed
		u.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// notifyLocked wakes the waiters, if any (no allocation on the hot path otherwise).
func (u *Upstream) notifyLocked() {
	if u.changed != nil {
		close(u.changed)
		u.changed = nil
	}
}

// Reset puts the fake back in its New state: it forgets hits and last
// requests, clears every fault and restores the chunk count and model list.
func (u *Upstream) Reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.resetLocked()
}

// SetFault makes f the only fault of key ("*" = every key without a fault
// of its own that matches). It panics on an invalid fault: that is a bug in
// the test.
func (u *Upstream) SetFault(key string, f Fault) {
	u.installFault(key, f, false)
}

// AddFault appends f to key's faults; a request gets the first of its key's
// faults that matches its model, then the first matching "*" fault. This
// scripts sequences such as "one 429, then two 500s".
func (u *Upstream) AddFault(key string, f Fault) {
	u.installFault(key, f, true)
}

func (u *Upstream) installFault(key string, f Fault, appendIt bool) {
	if err := f.Validate(); err != nil {
		panic(err)
	}
	if f.Gather > 0 {
		f.gate = &gather{n: f.Gather, open: make(chan struct{})}
	}
	s := &faultState{f: f, left: f.Times}
	if f.Times == 0 {
		s.left = -1
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if appendIt {
		u.faults[key] = append(u.faults[key], s)
	} else {
		u.faults[key] = []*faultState{s}
	}
}

// ClearFaults removes every fault of every key.
func (u *Upstream) ClearFaults() {
	u.mu.Lock()
	defer u.mu.Unlock()
	clear(u.faults)
}

// ClearFault removes the faults of one key.
func (u *Upstream) ClearFault(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.faults, key)
}

// Faults returns the installed faults per key, with Times set to the number
// of requests each still applies to (0: unlimited).
func (u *Upstream) Faults() map[string][]Fault {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[string][]Fault, len(u.faults))
	for k, list := range u.faults {
		for _, s := range list {
			f := s.f
			f.Times = max(s.left, 0)
			out[k] = append(out[k], f)
		}
	}
	return out
}

// SetStreamChunks sets how many content chunks streamed answers have
// (clamped to 1..10000).
func (u *Upstream) SetStreamChunks(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.chunks = min(max(n, 1), maxStreamChunks)
}

// SetModels sets the model list GET /v1/models answers.
func (u *Upstream) SetModels(ids []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.setModelsLocked(slices.Clone(ids))
}

// SetModelsPageSize makes the Anthropic-format model list answer n models
// per page with has_more / last_id, the way Anthropic pages (0: one page).
func (u *Upstream) SetModelsPageSize(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.modelsPage = max(n, 0)
}

// modelsPageAfter returns the Anthropic page after afterID ("" for the
// first), or nil when the list is not paged.
func (u *Upstream) modelsPageAfter(afterID string) *answer {
	u.mu.Lock()
	ids, size := u.models, u.modelsPage
	u.mu.Unlock()
	if size <= 0 {
		return nil
	}
	start := 0
	if afterID != "" {
		start = len(ids)
		for i, id := range ids {
			if id == afterID {
				start = i + 1
				break
			}
		}
	}
	end := min(start+size, len(ids))
	return buildModelPage(ids[start:end], end < len(ids))
}

// SetToolCalls scripts tool calls: a request offering a tool named in calls
// (the first such tool in its list) gets a call to that tool with the given
// JSON arguments instead of a call to its first tool with ToolArguments. Real
// clients then run a real tool (Claude Code's Bash, Codex's exec_command).
// nil or empty restores the default.
func (u *Upstream) SetToolCalls(calls map[string]string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.toolCalls = maps.Clone(calls)
}

func (u *Upstream) scriptedToolCalls() map[string]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.toolCalls
}

func (u *Upstream) setModelsLocked(ids []string) {
	u.models = ids
	u.modelsByFmt = [2]*answer{buildModels(FormatOpenAI, ids), buildModels(FormatAnthropic, ids)}
}

// begin records a /v1 request (its path, headers, body and parsed model)
// and returns the fault it gets (nil: none when withFaults is false or
// nothing matches), the chunk count and the model list answers. The caller
// must call end when done.
func (u *Upstream) begin(key, path string, h http.Header, body []byte, model string, withFaults bool) (*Fault, int, [2]*answer) {
	return u.beginReq(key, path, h, body, model, false, withFaults)
}

// beginReq is begin for a request that may end with a tool result
// (toolResult), which the faults with ToolResultsOnly match.
func (u *Upstream) beginReq(key, path string, h http.Header, body []byte, model string, toolResult, withFaults bool) (*Fault, int, [2]*answer) {
	u.mu.Lock()
	defer u.mu.Unlock()
	rec := u.stats[key]
	if rec == nil {
		rec = &keyRecord{}
		u.stats[key] = rec
	}
	rec.hits++
	rec.arrivals = append(rec.arrivals, time.Now())
	if rec.byModel == nil {
		rec.byModel = map[string]int{}
	}
	rec.byModel[model]++
	rec.header, rec.body, rec.path, rec.model = h, body, path, model
	u.inflight++
	u.notifyLocked()
	var f *Fault
	if withFaults {
		if list := u.faults[key]; len(list) > 0 {
			f, u.faults[key] = takeFault(list, model, toolResult)
		}
		if list := u.faults["*"]; f == nil && len(list) > 0 {
			f, u.faults["*"] = takeFault(list, model, toolResult)
		}
	}
	return f, u.chunks, u.modelsByFmt
}

// modelBegin counts a completion request for model in flight.
func (u *Upstream) modelBegin(model string) {
	u.mu.Lock()
	u.modelInFlight[model]++
	u.modelPeak[model] = max(u.modelPeak[model], u.modelInFlight[model])
	n := 0
	for _, v := range u.modelInFlight {
		n += v
	}
	u.peakInFlight = max(u.peakInFlight, n)
	u.mu.Unlock()
}

// modelEnd ends it; canceled reports that its client went away first.
func (u *Upstream) modelEnd(model string, canceled bool) {
	u.mu.Lock()
	if u.modelInFlight[model]--; u.modelInFlight[model] <= 0 {
		delete(u.modelInFlight, model)
	}
	if canceled {
		u.canceled++
	}
	u.notifyLocked()
	u.mu.Unlock()
}

// PeakInFlight is the most completion requests for model seen in flight at once.
func (u *Upstream) PeakInFlight(model string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.modelPeak[model]
}

// PeakInFlightAll is the most completion requests seen in flight at once, all models together.
func (u *Upstream) PeakInFlightAll() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.peakInFlight
}

// Canceled counts completion requests whose client went away before the answer ended.
func (u *Upstream) Canceled() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.canceled
}

func (u *Upstream) end() {
	u.mu.Lock()
	u.inflight--
	u.notifyLocked()
	u.mu.Unlock()
}

// answerFor returns the precomputed answer of a combination, building and
// caching it on first use.
func (u *Upstream) answerFor(format Format, model, label string, n int, s shape) *answer {
	k := answerKey{format: format, chunks: n, model: model, shape: s}
	if s.kind == kindText || s.kind == kindContinue {
		k.label = label
	}
	u.cacheMu.RLock()
	a := u.cache[k]
	u.cacheMu.RUnlock()
	if a != nil {
		return a
	}
	var text string
	switch s.kind {
	case kindText:
		text = Content(label)
	case kindContinue:
		text = strings.TrimPrefix(s.continued.text(label), s.result)
	case kindToolResult:
		text = ToolResultText(s.result)
	}
	a = buildAnswer(format, model, s, text, n)
	u.cacheMu.Lock()
	if len(u.cache) < maxCachedAnswers && len(s.result) <= maxCachedResult {
		u.cache[k] = a
	}
	u.cacheMu.Unlock()
	return a
}

// ClosedURL is a loopback base URL ("http://127.0.0.1:PORT/v1") nothing
// listens on: the port was taken from the system and given back.
func ClosedURL() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/v1", nil
}
