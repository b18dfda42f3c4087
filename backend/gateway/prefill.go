package gateway

import (
	"strings"
	"sync"

	"omniroute/backend/providers"
	"omniroute/backend/routing"
)

// prefillMemory is what continuations learned of each (connection, model)'s
// assistant prefill: a target that refused one (a 400 naming it, or an
// answer started over) is never asked again; one that honoured it is
// remembered as such. An explicit providerSpecificData.assistantPrefill wins over it. In
// memory: a restart learns again, at the cost of one refused continuation.
// The zero value is ready.
type prefillMemory struct {
	mu    sync.Mutex
	known map[prefillKey]bool
}

type prefillKey struct{ conn, model string }

func (m *prefillMemory) get(conn, model string) (supported, known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	supported, known = m.known[prefillKey{conn, model}]
	return supported, known
}

func (m *prefillMemory) set(conn, model string, supported bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known == nil {
		m.known = make(map[prefillKey]bool)
	}
	m.known[prefillKey{conn, model}] = supported
}

// mayPrefill reports whether a continuation may ask cand to go on from a
// trailing assistant message: the connection's declaration when it made
// one, else what was learned of this model on it, else the catalogue's
// AssistantPrefill, else yes for an OpenAI-format target (vLLM, DeepSeek,
// llama.cpp and most OpenAI-compatible servers honour it; one that does not
// refuses it or starts over, which the repeat guard catches, and is then
// never asked again).
func (g *Gateway) mayPrefill(cand routing.Candidate) bool {
	if cand.Conn.Prefill != "" {
		return cand.Conn.Prefill != routing.PrefillNone
	}
	if ok, known := g.prefills.get(cand.Conn.ID, cand.Model); known {
		return ok
	}
	return cand.Conn.Provider.Prefills(cand.Model) || cand.Conn.Provider.FormatOf(cand.Model) == providers.FormatOpenAI
}

// prefillBoth asks an undeclared OpenAI-format target to continue the way
// vLLM (continue_final_message) and DeepSeek ("prefix": true) read it, and
// llama.cpp's server does anyway; a server that knows neither either ignores
// the flags or refuses them (a 400 naming them), and is then never asked
// again.
const prefillBoth routing.PrefillMode = "vllm+deepseek"

// prefillStyle is how cand is asked to continue: its declaration, else
// prefillBoth for an OpenAI-format target the catalogue says nothing of.
func (g *Gateway) prefillStyle(cand routing.Candidate) routing.PrefillMode {
	if cand.Conn.Prefill != "" || cand.Conn.Provider.Prefills(cand.Model) {
		return cand.Conn.Prefill
	}
	return prefillBoth
}

// learnPrefill records what a continuation showed of cand's prefill support
// (nothing when the connection declares it).
func (g *Gateway) learnPrefill(cand routing.Candidate, supported bool) {
	if cand.Conn.Prefill == "" {
		g.prefills.set(cand.Conn.ID, cand.Model, supported)
	}
}

// refusesPrefill reports a 400 whose message names the prefill: "does not
// support assistant message prefill", "the conversation must end with a
// user message".
func refusesPrefill(status int, body []byte) bool {
	if status != 400 {
		return false
	}
	b := strings.ToLower(string(body))
	return strings.Contains(b, "prefill") || strings.Contains(b, "must end with a user message") ||
		strings.Contains(b, "continue_final_message") || strings.Contains(b, "add_generation_prompt") ||
		strings.Contains(b, `"prefix"`) || strings.Contains(b, "'prefix'") ||
		strings.Contains(b, "last message must be") && strings.Contains(b, "user")
}
