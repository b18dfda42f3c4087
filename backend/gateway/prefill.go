package gateway

import (
	"sync"

	"omniroute/backend/prefillcap"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/translate"
)

// Prefills is what the gateway knows of each (connection, model)'s
// assistant prefill beyond the connection's declaration: a target that
// refused one (a 400 naming it, or an answer started over) is never asked
// again; one that honoured it is remembered as such. The server wires the
// stored book (prefillcap.Book), so what was learned survives a restart.
type Prefills interface {
	Known(conn, model string) (honoured, known bool)
	Learn(conn, model string, honoured bool)
}

// prefillMemory is the Prefills of a gateway wired without one: in memory
// only. The zero value is ready.
type prefillMemory struct {
	mu    sync.Mutex
	known map[prefillKey]bool
}

type prefillKey struct{ conn, model string }

func (m *prefillMemory) Known(conn, model string) (supported, known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	supported, known = m.known[prefillKey{conn, model}]
	return supported, known
}

func (m *prefillMemory) Learn(conn, model string, supported bool) {
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
	if ok, known := g.prefills.Known(cand.Conn.ID, cand.Model); known {
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
	return prefillStyleOf(cand)
}

func prefillStyleOf(cand routing.Candidate) routing.PrefillMode {
	if cand.Conn.Prefill != "" || cand.Conn.Provider.Prefills(cand.Model) {
		return cand.Conn.Prefill
	}
	return prefillBoth
}

// learnPrefill records what a continuation showed of cand's prefill support
// (nothing when the connection declares it).
func (g *Gateway) learnPrefill(cand routing.Candidate, supported bool) {
	if cand.Conn.Prefill == "" {
		g.prefills.Learn(cand.Conn.ID, cand.Model, supported)
	}
}

// refusesPrefill reports a 400 whose message names the prefill
// (prefillcap.RefusesPrefill, which the connection Test's probe reads too).
func refusesPrefill(status int, body []byte) bool { return prefillcap.RefusesPrefill(status, body) }

// PrefillFlags marks a Chat body's trailing assistant message the way a
// continuation on model of c asks for it (prefillStyle): the connection
// Test's probe sends exactly what a continuation would.
func PrefillFlags(c *routing.Conn, model string, body []byte) ([]byte, error) {
	return prefillFlags(body, translate.Chat, prefillStyleOf(routing.Candidate{Conn: c, Model: model}))
}
