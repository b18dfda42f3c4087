// Package prefillcap keeps what the gateway knows of each (connection,
// model)'s assistant prefill — whether the target continues a trailing
// assistant message, which is how a cut stream is finished on another
// target — and how it came to know it: learned from a continuation,
// found by the connection Test's one-token probe, or declared on the
// connection (providerSpecificData.assistantPrefill, which wins over the
// other two). What is learned or probed is stored per (connection, model),
// so a target that refused is never asked again, restarts included.
package prefillcap

import (
	"log/slog"
	"strings"
	"sync"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

// State is whether a target continues a trailing assistant message.
type State string

// States.
const (
	Unknown  State = "unknown"
	Honoured State = "honoured"
	Refused  State = "refused"
)

// Source is how the state was found out ("" for Unknown).
type Source string

// Sources.
const (
	// Learned: a continuation showed it (it continued; a 400 naming the
	// prefill; the repeat guard saw the answer start over).
	Learned Source = "learned"
	// Declared: the connection's providerSpecificData.assistantPrefill.
	Declared Source = "declared"
	// Probe: the connection Test's one-token probe.
	Probe Source = "probe"
)

// DeclaredNone is the assistantPrefill value that declares no prefill
// (routing.PrefillNone).
const DeclaredNone = "none"

// Entry is what is known of one (connection, model).
type Entry struct {
	State  State  `json:"prefill"`
	Source Source `json:"prefillSource,omitempty"`
}

// Store keeps the entries across restarts (*store.Store).
type Store interface {
	SavePrefill(store.PrefillRow) error
	Prefills() ([]store.PrefillRow, error)
}

type key struct{ conn, model string }

// Book is the learned and probed entries, in memory and written through to
// the store when they change (a continuation's write is rare: one per
// target and model, then never again while nothing changes).
type Book struct {
	st  Store
	clk clock.Clock
	log *slog.Logger

	mu    sync.Mutex
	known map[key]Entry
}

// Open loads the stored entries. st may be nil (memory only, for tests);
// log may be nil.
func Open(st Store, clk clock.Clock, log *slog.Logger) (*Book, error) {
	b := &Book{st: st, clk: clk, log: log, known: make(map[key]Entry)}
	if err := b.Reload(); err != nil {
		return nil, err
	}
	return b, nil
}

// Reload replaces what is known with the stored rows (a team server's
// instance, when another one wrote); a failed read keeps what is known.
func (b *Book) Reload() error {
	if b.st == nil {
		return nil
	}
	rows, err := b.st.Prefills()
	if err != nil {
		return err
	}
	known := make(map[key]Entry, len(rows))
	for _, r := range rows {
		s, src := State(r.State), Source(r.Source)
		if (s != Honoured && s != Refused) || (src != Learned && src != Probe) {
			continue // not a value this version writes: learned again
		}
		known[key{r.ConnectionID, r.Model}] = Entry{State: s, Source: src}
	}
	b.mu.Lock()
	b.known = known
	b.mu.Unlock()
	return nil
}

// Known reports what was learned or probed of model on conn (the
// declaration is the caller's to check first).
func (b *Book) Known(conn, model string) (honoured, known bool) {
	e, ok := b.entry(conn, model)
	return e.State == Honoured, ok
}

// Learn records what a continuation showed of model on conn.
func (b *Book) Learn(conn, model string, honoured bool) {
	_ = b.record(conn, model, stateOf(honoured), Learned)
}

// Probed records what the connection Test's probe found.
func (b *Book) Probed(conn, model string, s State) error {
	if s != Honoured && s != Refused {
		return nil // a probe that found nothing changes nothing
	}
	return b.record(conn, model, s, Probe)
}

// Forget drops what is known of conn's models (the connection was
// deleted; the store drops its rows with it).
func (b *Book) Forget(conn string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.known {
		if k.conn == conn {
			delete(b.known, k)
		}
	}
}

// View is what is shown of model on conn: the declaration when there is one
// ("" none; DeclaredNone refuses, any other mode honours), else what was
// learned or probed, else Unknown.
func (b *Book) View(conn, model, declared string) Entry {
	if declared != "" {
		return Entry{State: stateOf(declared != DeclaredNone), Source: Declared}
	}
	if b != nil {
		if e, ok := b.entry(conn, model); ok {
			return e
		}
	}
	return Entry{State: Unknown}
}

func (b *Book) entry(conn, model string) (Entry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.known[key{conn, model}]
	return e, ok
}

// record keeps e for (conn, model) and writes it when it changed. The
// memory keeps it even when the write fails (logged): this run goes by it.
func (b *Book) record(conn, model string, s State, src Source) error {
	k, e := key{conn, model}, Entry{State: s, Source: src}
	b.mu.Lock()
	old, ok := b.known[k]
	b.known[k] = e
	b.mu.Unlock()
	if (ok && old == e && src != Probe) || b.st == nil {
		return nil
	}
	err := b.st.SavePrefill(store.PrefillRow{ConnectionID: conn, Model: model, State: string(s), Source: string(src),
		LearnedAt: b.clk.Now().UnixMilli()})
	if err != nil && b.log != nil {
		b.log.Warn("could not store what was learned of a model's prefill", "connection", conn, "model", model,
			"prefill", string(s), "err", err)
	}
	return err
}

func stateOf(honoured bool) State {
	if honoured {
		return Honoured
	}
	return Refused
}

// RefusesPrefill reports a 400 whose message names the prefill: "does not
// support assistant message prefill", "the conversation must end with a
// user message", or the continuation flags an OpenAI-compatible server does
// not know (continue_final_message, add_generation_prompt, "prefix").
func RefusesPrefill(status int, body []byte) bool {
	if status != 400 {
		return false
	}
	b := strings.ToLower(string(body))
	return strings.Contains(b, "prefill") || strings.Contains(b, "must end with a user message") ||
		strings.Contains(b, "continue_final_message") || strings.Contains(b, "add_generation_prompt") ||
		strings.Contains(b, `"prefix"`) || strings.Contains(b, "'prefix'") ||
		strings.Contains(b, "last message must be") && strings.Contains(b, "user")
}
