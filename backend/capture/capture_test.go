package capture

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/store"
)

// memStore is the Store in memory.
type memStore struct {
	kv   map[string]string
	rows map[string]store.RequestBodies
}

func newMemStore() *memStore {
	return &memStore{kv: map[string]string{}, rows: map[string]store.RequestBodies{}}
}

func (m *memStore) GetValue(ns, k string) (string, bool, error) {
	v, ok := m.kv[ns+"/"+k]
	return v, ok, nil
}
func (m *memStore) SetValue(ns, k, v string) error { m.kv[ns+"/"+k] = v; return nil }
func (m *memStore) SaveRequestBodies(b *store.RequestBodies) error {
	m.rows[b.RequestID] = *b
	return nil
}
func (m *memStore) RequestBodies(id string) (store.RequestBodies, error) {
	b, ok := m.rows[id]
	if !ok {
		return b, store.ErrNotFound
	}
	return b, nil
}
func (m *memStore) DeleteRequestBodiesBefore(ms int64) error {
	for id, b := range m.rows {
		if b.CreatedAt < ms {
			delete(m.rows, id)
		}
	}
	return nil
}
func (m *memStore) PruneRequestBodies(keep int64) error {
	var all []store.RequestBodies
	for _, b := range m.rows {
		all = append(all, b)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].CreatedAt > all[j].CreatedAt })
	var total int64
	for _, b := range all {
		if total+b.Bytes > keep {
			delete(m.rows, b.RequestID)
			continue
		}
		total += b.Bytes
	}
	return nil
}

func TestRedact(t *testing.T) {
	const connSecret = "zq-Conn/Secret+Value=42" // no known shape: only removed by value
	for _, c := range []struct {
		name, in string
		gone     []string // must not survive
		keep     []string // must survive
	}{
		{"sk key in JSON", `{"api_key_hint":"sk-proj-abcdefghijklmnop1234","x":1}`, []string{"sk-proj-abcdefghijklmnop1234"}, []string{`"x":1`}},
		{"gateway client key", `{"note":"use sk-omni-AbCdEfGhIjKlMnOpQrStUvWx"}`, []string{"AbCdEfGhIjKlMnOp"}, []string{`"note"`}},
		{"bearer token in JSON", `{"headers":{"auth":"Bearer eyJhbGciOi.JIUzI1NiJ9.abc"}}`, []string{"eyJhbGciOi"}, []string{"Bearer [redacted]"}},
		{"bearer token in SSE", "data: {\"text\":\"Authorization: bearer abcdefgh12345678\"}\n\n", []string{"abcdefgh12345678"}, []string{"data: ", "\n\n"}},
		{"Google key in SSE", "event: x\ndata: {\"k\":\"AIzaSyA1234567890abcdefghijklmnop\"}\n\n", []string{"AIzaSyA1234567890"}, []string{"event: x\n"}},
		{"credential-named member", `{"apiKey":"short-ish-value","model":"m"}`, []string{"short-ish-value"}, []string{`"apiKey":"[redacted]"`, `"model":"m"`}},
		{"connection secret raw", `{"echo":"` + "zq-Conn/Secret+Value=42" + `"}`, []string{connSecret}, []string{`"echo":"[redacted]"`}},
		{"connection secret in SSE", "data: {\"t\":\"" + connSecret + "\"}\n\n", []string{connSecret}, []string{"data: {\"t\":\"[redacted]\"}\n\n"}},
		{"connection secret URL-encoded", `{"url":"https://x/?key=zq-Conn%2FSecret%2BValue%3D42"}`, []string{"zq-Conn%2FSecret"}, []string{"key=[redacted]"}},
		{"management token", `{"t":"omt_abcdefghijkl"}`, []string{"omt_abcdefghijkl"}, nil},
		{"AWS access key id", `{"t":"AKIAIOSFODNN7EXAMPLE"}`, []string{"AKIAIOSFODNN7"}, nil},
		{"PEM private key", `{"t":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----"}`, []string{"MIIEvQIBADANBg"}, nil},
		{"escaped member name", `{"api\u005fkey":"opaque-1","x":1}`, []string{"opaque-1"}, []string{`"x":1`}},
		{"JWT", `{"t":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dozjgNryP4J3"}`, []string{"eyJhbGciOiJIUzI1NiJ9"}, nil},
		{"ordinary text kept", `{"messages":[{"role":"user","content":"ask a task"}]}`, nil, []string{"ask a task"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := string(Redact([]byte(c.in), []string{connSecret, "ab"})) // "ab" is too short to redact
			for _, g := range c.gone {
				if strings.Contains(out, g) {
					t.Errorf("%q survived: %s", g, out)
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(out, k) {
					t.Errorf("%q lost: %s", k, out)
				}
			}
			if strings.HasPrefix(c.in, "{") && json.Valid([]byte(c.in)) && !json.Valid([]byte(out)) {
				t.Errorf("redaction broke the JSON: %s", out)
			}
		})
	}
	// A secret with characters JSON escapes is removed in its escaped spelling.
	sec := `p"ss\word-123`
	esc, _ := json.Marshal(map[string]string{"v": sec})
	if out := string(Redact(esc, []string{sec})); strings.Contains(out, "ss\\\\word") || !json.Valid([]byte(out)) {
		t.Errorf("escaped secret: %s", out)
	}
}

func newService(t *testing.T, st *memStore, clk clock.Clock, c Config) *Service {
	t.Helper()
	s, err := New(clk, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(c); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOffByDefault(t *testing.T) {
	s, err := New(clock.NewFake(time.Unix(1000, 0)), newMemStore())
	if err != nil {
		t.Fatal(err)
	}
	if s.Begin("k1", "m", false, "chat", []byte(`{}`)) != nil || s.Active() {
		t.Fatal("captured with default settings")
	}
	if n := testing.AllocsPerRun(100, func() { s.Begin("k1", "m", false, "chat", []byte(`{}`)) }); n != 0 {
		t.Fatalf("Begin while off: %v allocations, want 0", n)
	}
}

func TestWhichRequestsAreCaptured(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	until := clk.Now().Add(time.Minute).UnixMilli()
	c := Defaults()
	c.Enabled, c.UntilMs, c.KeyIDs, c.Models = true, until, []string{"k1"}, []string{"m1"}
	s := newService(t, newMemStore(), clk, c)
	for _, tc := range []struct {
		name    string
		key     string
		model   string
		private bool
		advance time.Duration
		want    bool
	}{
		{"key and model listed", "k1", "m1", false, 0, true},
		{"other key", "k2", "m1", false, 0, false},
		{"other model", "k1", "m2", false, 0, false},
		{"private key", "k1", "m1", true, 0, false},
		{"1 ms before the window ends", "k1", "m1", false, time.Minute - time.Millisecond, true},
		{"when the window ends", "k1", "m1", false, time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1000, 0).Add(tc.advance))
			s.clk = clk
			if got := s.Begin(tc.key, tc.model, tc.private, "chat", nil) != nil; got != tc.want {
				t.Fatalf("captured %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCapsAndExpiry(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	st := newMemStore()
	c := Defaults()
	c.Enabled, c.MaxBodyBytes, c.MaxTotalBytes, c.RetentionMinutes = true, 1024, 4096, 10
	s := newService(t, st, clk, c)

	// Per body: at most maxBodyBytes, the rest counted.
	r := s.Begin("k", "m", false, "chat", []byte(strings.Repeat("a", 1500)))
	r.Upstream([]byte(strings.Repeat("b", 1024)), "openai", "")
	_, _ = r.UpstreamResponse.Write([]byte(strings.Repeat("c", 10)))
	if err := s.Finish("r1", r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ClientRequest) != 1024 || got.Truncated != 476 || len(got.UpstreamRequest) != 1024 || got.UpstreamResponse != strings.Repeat("c", 10) {
		t.Fatalf("caps: client %d upstream %d truncated %d", len(got.ClientRequest), len(got.UpstreamRequest), got.Truncated)
	}

	// In total: the oldest captures go to make room for the newest.
	for i, id := range []string{"r2", "r3", "r4"} {
		clk.Advance(time.Second)
		r := s.Begin("k", "m", false, "chat", []byte(strings.Repeat("x", 1000+i)))
		if err := s.Finish(id, r); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []string {
		var out []string
		for id := range st.rows {
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"r2", "r3", "r4"}) {
		t.Fatalf("kept %v, want r2 r3 r4 (r1 dropped for the 4096-byte total)", got)
	}

	// Retention: kept until exactly retention has passed, then gone.
	clk.Advance(10*time.Minute - 2*time.Second - time.Millisecond) // r2 is 10 min - 1 ms old
	if _, err := s.Get("r2"); err != nil {
		t.Fatalf("r2 before its retention ends: %v", err)
	}
	clk.Advance(time.Millisecond) // r2 is now exactly 10 min old
	if _, err := s.Get("r2"); err != ErrNotFound {
		t.Fatalf("r2 at its retention's end: %v, want ErrNotFound", err)
	}
	if _, err := s.Get("r3"); err != nil {
		t.Fatalf("r3 (1 s younger): %v", err)
	}
}

func TestLargerThanTotalIsNotKept(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	st := newMemStore()
	c := Defaults()
	c.Enabled, c.MaxBodyBytes, c.MaxTotalBytes = true, 2048, 2048
	s := newService(t, st, clk, c)
	r := s.Begin("k", "m", false, "chat", []byte(strings.Repeat("a", 2000)))
	_, _ = r.ClientResponse.Write([]byte(strings.Repeat("b", 2000)))
	if err := s.Finish("big", r); err != nil {
		t.Fatal(err)
	}
	if len(st.rows) != 0 {
		t.Fatal("a capture larger than the whole cap was kept")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Config)
		param string
	}{
		{"retention 0", func(c *Config) { c.RetentionMinutes = 0 }, "retentionMinutes"},
		{"body too small", func(c *Config) { c.MaxBodyBytes = 1023 }, "maxBodyBytes"},
		{"total below body", func(c *Config) { c.MaxTotalBytes = int64(c.MaxBodyBytes) - 1 }, "maxTotalBytes"},
	} {
		cfg := Defaults()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.param) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestReloadAdoptsAnotherInstancesSettings: a team server's other instance
// switched capture on in the shared store; Reload makes this one capture too.
func TestReloadAdoptsAnotherInstancesSettings(t *testing.T) {
	st := newMemStore()
	clk := clock.NewFake(time.Unix(1000, 0))
	mine, err := New(clk, st)
	if err != nil {
		t.Fatal(err)
	}
	c := Defaults()
	c.Enabled = true
	newService(t, st, clk, c) // the other instance
	if mine.Begin("k", "m", false, "chat", nil) != nil {
		t.Fatal("captured before reloading")
	}
	if err := mine.Reload(); err != nil {
		t.Fatal(err)
	}
	if mine.Begin("k", "m", false, "chat", nil) == nil {
		t.Fatal("not captured after reloading")
	}
}

// TestSweepDropsExpiredBodies: expired bodies go on a sweep, read or not.
func TestSweepDropsExpiredBodies(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	st := newMemStore()
	c := Defaults()
	c.Enabled, c.RetentionMinutes = true, 1
	s := newService(t, st, clk, c)
	if err := s.Finish("r1", s.Begin("k", "m", false, "chat", []byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute - time.Millisecond)
	if err := s.Sweep(); err != nil || len(st.rows) != 1 {
		t.Fatalf("swept before the retention ended: %v %d", err, len(st.rows))
	}
	clk.Advance(time.Millisecond)
	if err := s.Sweep(); err != nil || len(st.rows) != 0 {
		t.Fatalf("kept after the retention ended: %v %d", err, len(st.rows))
	}
}

// TestNoSecretPrefixSurvivesTheCut: a credential of each shape placed across
// the body cap at every offset leaves none of its characters in the stored
// body (cut first, then redacted, its first characters survived: too short
// for any shape).
func TestNoSecretPrefixSurvivesTheCut(t *testing.T) {
	const max = 1024
	secrets := map[string]struct{ before, secret, after string }{
		"sk":        {`{"x":"`, "sk-proj-Q7abcdefghijklmnop1234", `"}`},
		"aws id":    {`{"x":"`, "AKIAQ7SFODNN7EXAMPLE", `"}`},
		"aws pair":  {`{"x":"AKIAIOSFODNN7EXAMPLE `, "Q7lrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1", `"}`},
		"github":    {`{"x":"`, "ghp_Q7b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", `"}`},
		"slack":     {`{"x":"`, "xoxb-Q7456789012-1234567890123-AbCdEfGhIjKlMnOp", `"}`},
		"jwt":       {`{"x":"`, "eyJQ7ciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dozjgNryP4J3jVmNHl0w5N", `"}`},
		"ya29":      {`{"x":"`, "ya29.Q7fH6SMBx1y2z3A4b5C6d7E8f9G0h1", `"}`},
		"google":    {`{"x":"`, "AIzaQ7A1234567890abcdefghijklmnopqrstu", `"}`},
		"bearer":    {`{"x":"Bearer `, "Q7abcdefgh12345678", `"}`},
		"member":    {`{"password":"`, "Q7opaque-value", `"}`},
		"pem":       {`{"k":"`, `-----BEGIN PRIVATE KEY-----\nQ7IEowIBAAKCAQEA7bq9\n-----END PRIVATE KEY-----`, `"}`},
		"known key": {`{"echo":"`, "Q7conn-key&%tail0001", `"}`},
	}
	clk := clock.NewFake(time.UnixMilli(1_000_000))
	for name, c := range secrets {
		t.Run(name, func(t *testing.T) {
			s := newService(t, newMemStore(), clk, Config{Enabled: true, MaxBodyBytes: max, MaxTotalBytes: 1 << 20, RetentionMinutes: 10})
			for off := 1; off < len(c.secret); off++ {
				// The secret starts off bytes before the cap.
				pad := max - off - len(c.before)
				body := `{"p":"` + strings.Repeat("a", pad-len(`{"p":"`)-len(`",`)) + `",` + c.before[1:] + c.secret + c.after
				r := s.Begin("k", "m", false, "chat", []byte(body))
				r.Upstream([]byte("{}"), "openai", "Q7conn-key&%tail0001")
				id := fmt.Sprintf("r%d", off)
				if err := s.Finish(id, r); err != nil {
					t.Fatal(err)
				}
				got, err := s.Get(id)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(got.ClientRequest, "Q7") {
					t.Fatalf("cut %d bytes into the secret: its start survived: …%s", off, got.ClientRequest[max-60:])
				}
				if len(got.ClientRequest) > max {
					t.Fatalf("kept %d bytes, over the %d cap", len(got.ClientRequest), max)
				}
			}
		})
	}
}
