package connprobe_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/clock"
	"omniroute/backend/connprobe"
	"omniroute/backend/prefillcap"
	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/providers/openai"
	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/breaker"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
	"omniroute/tests/fakeupstream"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"))
}

// executors are the wire formats' default executors (the gateway's set).
type executors map[providers.Format]providers.Executor

func (e executors) For(f providers.Format) (providers.Executor, bool) {
	x, ok := e[f]
	return x, ok
}

// rig is a Prober on real parts: a SQLite store, the catalogue, the
// routing engine and the executors, against a fake upstream over loopback.
type rig struct {
	t      *testing.T
	st     *store.Store
	box    *secrets.Box
	cat    *providers.Catalog
	engine *routing.Engine
	clk    *clock.Fake
	up     *fakeupstream.Upstream
	upURL  string
	p      *connprobe.Prober
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func newRig(t *testing.T) *rig {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "omniroute.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	box, err := secrets.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	up := fakeupstream.New()
	t.Cleanup(up.Close)
	clk := clock.NewFake(t0)
	cat := registry.Catalog(nil)
	reg := routing.NewRegistry(cat)
	engine := routing.NewEngine(routing.EngineDeps{Registry: reg, Clock: clk, Breakers: breaker.NewRegistry(clk, nil, nil), Store: st})
	// As the wiring place's client: an upstream's redirect is answered, not followed.
	client := &http.Client{Transport: &http.Transport{}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(client.CloseIdleConnections)
	direct := providers.NewDirect(client)
	book, err := prefillcap.Open(st, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, st: st, box: box, cat: cat, engine: engine, clk: clk, up: up, upURL: up.Start() + "/v1"}
	r.p = &connprobe.Prober{Engine: engine, Store: st, Discovery: &discovery.Client{HTTP: client, UserAgent: "connprobe-test", Now: clk.Now},
		Executors: executors{providers.FormatOpenAI: openai.New(direct, "connprobe-test"), providers.FormatAnthropic: anthropic.New(direct, "connprobe-test")},
		Prefills:  book, Reload: r.reload, Clock: clk}
	return r
}

// fresh points the rig at a new fake upstream (a case's own: its faults
// and model list), closed when t ends, and its helpers at t; the store, the engine and the
// catalogue stay (building them is what costs under -race).
func (r *rig) fresh(t *testing.T) {
	t.Helper()
	r.t = t
	r.up = fakeupstream.New()
	t.Cleanup(r.up.Close)
	r.upURL = r.up.Start() + "/v1"
}

// reload loads the stored connections into the routing registry.
func (r *rig) reload() error {
	rows, err := r.st.Connections()
	if err != nil {
		return err
	}
	return r.engine.Registry().Load(rows, r.box)
}

// endpointProvider is the catalogue's row for a user's own endpoint of a
// wire (its base URL the user's, the wire's default executor): a test
// connection points it at the fake upstream.
func (r *rig) endpointProvider(wire providers.Format) string {
	r.t.Helper()
	for _, p := range r.cat.All() {
		if p.UserDefined && p.Format == wire && p.Dialect == "" {
			return p.ID
		}
	}
	r.t.Fatalf("no user-defined %s row in the catalogue", wire)
	return ""
}

// conn stores a connection of the user's own endpoint of wire with key, its base URL baseURL
// ("" : the fake upstream's) and models listed by hand, edited by edit.
func (r *rig) conn(wire providers.Format, key, baseURL string, models string, edit func(*store.Connection)) string {
	r.t.Helper()
	provider := r.endpointProvider(wire)
	sealed, err := r.box.Seal(key)
	if err != nil {
		r.t.Fatal(err)
	}
	if baseURL == "" {
		baseURL = r.upURL
	}
	row := store.Connection{ID: secrets.RandomID(), Provider: provider, Name: key, AuthType: "apikey", APIKeyEnc: sealed, BaseURL: baseURL,
		Priority: 1, IsActive: true, Models: models, DiscoveredModels: "[]", HiddenModels: "[]", ModelAliases: "{}", ProviderSpecificData: "{}",
		RateLimitOverrides: "{}", TestStatus: "active", CreatedAt: t0.UnixMilli(), UpdatedAt: t0.UnixMilli()}
	if edit != nil {
		edit(&row)
	}
	if err := r.st.CreateConnection(&row); err != nil {
		r.t.Fatal(err)
	}
	if err := r.reload(); err != nil {
		r.t.Fatal(err)
	}
	return row.ID
}

// row is the stored connection id.
func (r *rig) row(id string) store.Connection {
	r.t.Helper()
	row, err := r.st.Connection(id)
	if err != nil {
		r.t.Fatal(err)
	}
	return row
}

// run is the check of id, discovery's list kept.
func (r *rig) run(id string) (connprobe.Check, discovery.Result) {
	r.t.Helper()
	ch, res, err := r.p.Run(context.Background(), id, true)
	if err != nil {
		r.t.Fatal(err)
	}
	return ch, res
}

// steps maps a check's steps by name.
func steps(ch connprobe.Check) map[string]connprobe.CheckStep {
	out := map[string]connprobe.CheckStep{}
	for _, s := range ch.Steps {
		out[s.Step] = s
	}
	return out
}
