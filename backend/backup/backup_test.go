package backup_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"omniroute/backend/backup"
	"omniroute/backend/errs"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
	"omniroute/tests/pgtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"))
}

const pass = "correct horse battery"

// side is one database with its own secret key.
type side struct {
	st  *store.Store
	box *secrets.Box
}

func newBox(t *testing.T) *secrets.Box {
	t.Helper()
	key, err := secrets.LoadOrCreateKey(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sqliteSide(t *testing.T) side {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "omniroute.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return side{st, newBox(t)}
}

func seal(t *testing.T, b *secrets.Box, v string) string {
	t.Helper()
	s, err := b.Seal(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// secretsUsed are the plain-text secrets fill stores; none may appear in a
// backup file.
var secretsUsed = []string{"sk-upstream-secret-1", "oauth-access-2", "oauth-refresh-3", "aws-session-4", "client-key-5"}

// fill writes one of everything a backup holds, plus runtime state it
// leaves out, with secrets sealed by s.box.
func fill(t *testing.T, s side) {
	t.Helper()
	mp := 4
	on := true
	conns := []store.Connection{
		{ID: "c1", Provider: "openai", Name: "work", AuthType: "apikey", Priority: 1, IsActive: true, MaxConcurrent: &mp,
			RateLimitProtection: &on, APIKeyEnc: seal(t, s.box, "sk-upstream-secret-1"), Models: `["gpt-4o"]`, DiscoveredModels: `["gpt-4o-mini"]`,
			HiddenModels: `["gpt-4o-mini"]`, ModelAliases: `{"fast":"gpt-4o"}`, ProviderSpecificData: `{"localAddress":"127.0.0.1"}`,
			RateLimitOverrides: `{"maxConcurrent":2}`, TestStatus: "active", CreatedAt: 1000, UpdatedAt: 2000},
		{ID: "c2", Provider: "claude", Name: "sub", AuthType: "oauth", Priority: 2, IsActive: false,
			AccessTokenEnc: seal(t, s.box, "oauth-access-2"), RefreshTokenEnc: seal(t, s.box, "oauth-refresh-3"), ExpiresAt: 99999,
			Models: `[]`, DiscoveredModels: `[]`, HiddenModels: `[]`, ModelAliases: `{}`, ProviderSpecificData: `{}`, RateLimitOverrides: `{}`,
			TestStatus: "cooldown", RateLimitedUntil: 5000, LastError: "429", CreatedAt: 1100, UpdatedAt: 2100},
		{ID: "c3", Provider: "bedrock", Name: "aws", AuthType: "apikey", Priority: 3, IsActive: true,
			APIKeyEnc:            seal(t, s.box, "aws-secret"),
			ProviderSpecificData: `{"region":"us-east-1","accessKeyId":"AKIA","sessionTokenSealed":"` + seal(t, s.box, "aws-session-4") + `"}`,
			Models:               `[]`, DiscoveredModels: `[]`, HiddenModels: `[]`, ModelAliases: `{}`, RateLimitOverrides: `{}`, TestStatus: "active", CreatedAt: 1200, UpdatedAt: 2200},
	}
	for i := range conns {
		if err := s.st.CreateConnection(&conns[i]); err != nil {
			t.Fatal(err)
		}
	}
	keys := []store.APIKey{
		{ID: "k1", Name: "default", KeyHash: secrets.Hash("client-key-5"), KeyEnc: seal(t, s.box, "client-key-5"), KeyPrefix: "sk-or",
			Scopes: `[]`, AllowedConnections: `[]`, AllowedModels: `[]`, IsDefault: true, CreatedAt: 10, LastUsedAt: 20},
		{ID: "k2", Name: "ci", KeyHash: secrets.Hash("other"), KeyPrefix: "sk-or", Scopes: `["inference"]`, AllowedConnections: `["c1"]`,
			AllowedModels: `["gpt-4o"]`, Budget: `{"usd":5,"period":"month"}`, Limits: `{"rpm":60}`, CreatedAt: 11},
	}
	for i := range keys {
		if err := s.st.CreateAPIKey(&keys[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.st.CreateCombo(&store.Combo{ID: "co1", Name: "best", Strategy: "priority", Targets: `[{"model":"gpt-4o"}]`, Config: `{}`, CreatedAt: 30, UpdatedAt: 31}); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][3]string{
		{"settings", "general", `{"maxAttempts":4,"providerErrorRules":[{"id":"r1","provider":"openai","match":{"status":400},"reason":"quota","scope":"connection"}]}`},
		{"settings", "resilience", `{"failover":{"retriesPerTarget":1}}`},
		{"pricing", "c1", `{"pricing":{"gpt-4o":{"input":2.5,"output":10}}}`},
		{"instances", "i1", `{"name":"runtime"}`}, // runtime: never backed up
		{"probes", "openai", "owner"},
	} {
		if err := s.st.SetValue(kv[0], kv[1], kv[2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.st.InsertRequestLogs([]store.RequestLog{{RequestID: "req-1", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), APIKeyID: "k1",
		Model: "gpt-4o", Provider: "openai", ConnectionID: "c1", Status: 200, Stream: true, Attempts: `[]`, LatencyMs: 12,
		PromptTokens: 3, CompletionTokens: 4, CostUSD: sql.NullFloat64{Float64: 0.125, Valid: true}}}); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s side, withLog bool) backup.State {
	t.Helper()
	st, err := backup.Read(s.st, s.box, withLog)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// cheap is the argon2id cost the tests write files with (one pass over
// 64 KiB): the default takes about a second under the race detector, and
// every open of the file pays it again. TestWrittenAtTheDefaultCost and
// TestRestoreRefusals use the default.
var cheap = backup.Cost{Time: 1, Memory: 64, Threads: 1}

// writeFile backs s up into bytes, sealed at the cheap cost.
func writeFile(t *testing.T, s side, withLog bool) []byte {
	t.Helper()
	return writeFileAt(t, s, withLog, cheap)
}

// writeFileAt backs s up into bytes, sealed at cost c.
func writeFileAt(t *testing.T, s side, withLog bool, c backup.Cost) []byte {
	t.Helper()
	v, err := s.st.SchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	f, err := backup.SealWith(read(t, s, withLog), backup.Meta{SchemaVersion: v, AppVersion: "test", Now: time.Unix(0, 0)}, pass, c)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// restore opens file with passphrase and applies it to s.
func restore(s side, file []byte, passphrase string) (backup.Preview, error) {
	f, err := backup.Parse(bytes.NewReader(file))
	if err != nil {
		return nil, err
	}
	v, err := s.st.SchemaVersion()
	if err != nil {
		return nil, err
	}
	next, err := f.Open(passphrase, v, backup.OpenOptions{})
	if err != nil {
		return nil, err
	}
	cur, err := backup.Read(s.st, s.box, next.HasLog())
	if err != nil {
		return nil, err
	}
	p := backup.Diff(cur, next)
	return p, backup.Apply(s.st, s.box, next)
}

func code(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// roundTrip backs from up, restores into to (another key, maybe another
// dialect) and compares the two states byte for byte.
func roundTrip(t *testing.T, from, to side, withLog bool) {
	t.Helper()
	file := writeFile(t, from, withLog)
	for _, s := range secretsUsed {
		if bytes.Contains(file, []byte(s)) {
			t.Fatalf("the backup file holds the plain secret %q", s)
		}
	}
	c1, _ := from.st.Connection("c1")
	if bytes.Contains(file, []byte(c1.APIKeyEnc)) {
		t.Fatal("the backup file holds a secret sealed with the machine key")
	}
	if bytes.Contains(file, []byte("runtime")) || bytes.Contains(file, []byte(`"probes"`)) {
		t.Fatal("runtime key_value rows were backed up")
	}
	p, err := restore(to, file, pass)
	if err != nil {
		t.Fatal(err)
	}
	if got := p["connections"].Added; len(got) != 3 {
		t.Fatalf("preview into an empty database: %+v", p)
	}
	want, got := read(t, from, withLog).Canonical(), read(t, to, withLog).Canonical()
	if !bytes.Equal(want, got) {
		t.Fatalf("restored state differs:\nwant %s\ngot  %s", want, got)
	}
	// The restored secrets are sealed with the destination's key.
	c, err := to.st.Connection("c1")
	if err != nil {
		t.Fatal(err)
	}
	if c.APIKeyEnc == c1.APIKeyEnc {
		t.Fatal("a restored secret kept the source machine's sealing")
	}
	if v, err := to.box.Open(c.APIKeyEnc); err != nil || v != "sk-upstream-secret-1" {
		t.Fatalf("restored secret opens to %q, %v", v, err)
	}
	// A second restore of the same file changes nothing.
	p, err = restore(to, file, pass)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range p {
		if !c.Empty() {
			t.Errorf("restoring again changes %s: %+v", k, c)
		}
	}
}

// TestRoundTripSQLite: backup → fresh data directory (new key) → restore
// gives the same state byte for byte, the request log included when asked
// and left alone otherwise.
func TestRoundTripSQLite(t *testing.T) {
	from := sqliteSide(t)
	fill(t, from)
	t.Run("config", func(t *testing.T) {
		to := sqliteSide(t)
		roundTrip(t, from, to, false)
		if rows, _ := to.st.ReadRows(store.Scope{Table: "request_logs"}); len(rows) != 0 {
			t.Fatalf("the log came along without --with-log: %v", rows)
		}
	})
	t.Run("with log", func(t *testing.T) {
		to := sqliteSide(t)
		roundTrip(t, from, to, true)
		if rows, _ := to.st.ReadRows(store.Scope{Table: "request_logs"}); len(rows) != 1 {
			t.Fatalf("log rows %v", rows)
		}
	})
	t.Run("without log keeps the destination's log", func(t *testing.T) {
		to := sqliteSide(t)
		if err := to.st.InsertRequestLogs([]store.RequestLog{{RequestID: "mine", CreatedAt: 5, Attempts: `[]`}}); err != nil {
			t.Fatal(err)
		}
		if _, err := restore(to, writeFile(t, from, false), pass); err != nil {
			t.Fatal(err)
		}
		if rows, _ := to.st.ReadRows(store.Scope{Table: "request_logs"}); len(rows) != 1 || rows[0]["request_id"] != "mine" {
			t.Fatalf("destination log %v", rows)
		}
	})
}

// TestRoundTripSQLiteToPostgres: a desktop's backup restores into a team
// server's PostgreSQL database and back into a new SQLite one unchanged.
func TestRoundTripSQLiteToPostgres(t *testing.T) {
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err) // PostgreSQL is required, as for every team-server test
	}
	t.Cleanup(srv.Stop)
	pgStore, err := store.OpenPostgres(srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgStore.Close() })
	desktop := sqliteSide(t)
	fill(t, desktop)
	team := side{pgStore, newBox(t)}
	roundTrip(t, desktop, team, true)
	back := sqliteSide(t)
	roundTrip(t, team, back, true)
	if !bytes.Equal(read(t, desktop, true).Canonical(), read(t, back, true).Canonical()) {
		t.Fatal("SQLite → PostgreSQL → SQLite changed the state")
	}
}

// TestRestoreRefusals: a wrong passphrase, a newer schema, a damaged check
// and what is not a backup are refused with stable codes, and the database
// is left exactly as it was.
func TestRestoreRefusals(t *testing.T) {
	from := sqliteSide(t)
	fill(t, from)
	// The default cost: the cases below raise its figures.
	file := writeFileAt(t, from, false, backup.DefaultCost())
	to := sqliteSide(t)
	if err := to.st.SetValue("settings", "general", `{"maxAttempts":9}`); err != nil {
		t.Fatal(err)
	}
	before := read(t, to, true).Canonical()
	v, _ := to.st.SchemaVersion()
	newer := sealed(t, read(t, from, false), v+1)
	for _, tc := range []struct {
		name, pass string
		file       []byte
		code       string
	}{
		{"wrong passphrase", "not the passphrase", file, backup.CodeWrongPassphrase},
		{"no passphrase", "", file, backup.CodePassphraseRequired},
		{"newer schema", pass, newer, backup.CodeSchemaTooNew},
		{"newer schema edited in", pass, bytes.Replace(file, []byte(`"schemaVersion":`+itoa(v)), []byte(`"schemaVersion":`+itoa(v+1)), 1), backup.CodeTampered},
		{"not JSON", pass, []byte("PK\x03\x04 zip"), backup.CodeInvalid},
		{"another format", pass, []byte(`{"format":"other"}`), backup.CodeInvalid},
		{"future layout", pass, bytes.Replace(file, []byte(`"formatVersion":2`), []byte(`"formatVersion":3`), 1), backup.CodeInvalid},
		{"unknown table", pass, bytes.Replace(file, []byte(`"tables":{`), []byte(`"tables":{"secrets":[],`), 1), backup.CodeInvalid},
		{"huge argon2 memory", pass, bytes.Replace(file, []byte(`"memoryKiB":65536`), []byte(`"memoryKiB":4000000000`), 1), backup.CodeKDFTooCostly},
		{"argon2 memory above what is written", pass, bytes.Replace(file, []byte(`"memoryKiB":65536`), []byte(`"memoryKiB":1048576`), 1), backup.CodeKDFTooCostly},
		{"argon2 time above what is written", pass, bytes.Replace(file, []byte(`"time":3`), []byte(`"time":16`), 1), backup.CodeKDFTooCostly},
		{"argon2 threads above what is written", pass, bytes.Replace(file, []byte(`"threads":1`), []byte(`"threads":16`), 1), backup.CodeKDFTooCostly},
		{"MAC removed", pass, bytes.Replace(file, []byte(`,"mac":"`), []byte(`,"xyz":"`), 1), backup.CodeTampered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := restore(to, tc.file, tc.pass)
			if code(err) != tc.code {
				t.Fatalf("got %v, want code %s", err, tc.code)
			}
			if got := read(t, to, true).Canonical(); !bytes.Equal(got, before) {
				t.Fatal("a refused restore changed the database")
			}
		})
	}
	if _, err := backup.Seal(backup.State{}, backup.Meta{}, "short"); code(err) != backup.CodeWeakPassphrase {
		t.Fatalf("short passphrase: %v", err)
	}
}

// sealed is s written as a file of schema version v, at the cheap cost.
func sealed(t *testing.T, s backup.State, v int) []byte {
	t.Helper()
	f, err := backup.SealWith(s, backup.Meta{SchemaVersion: v, AppVersion: "test", Now: time.Unix(0, 0)}, pass, cheap)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWrittenAtTheDefaultCost: Seal derives the key at RFC 9106's second
// recommended argon2id cost with one lane (3 passes over 64 MiB), the most a
// file may ask for; SealWith refuses a costlier one.
func TestWrittenAtTheDefaultCost(t *testing.T) {
	if got, want := backup.DefaultCost(), (backup.Cost{Time: 3, Memory: 64 * 1024, Threads: 1}); got != want {
		t.Fatalf("DefaultCost() = %+v, want %+v", got, want)
	}
	f, err := backup.Seal(backup.State{}, backup.Meta{}, pass)
	if err != nil {
		t.Fatal(err)
	}
	if k := f.KDF; k.Name != "argon2id" || k.Time != 3 || k.Memory != 64*1024 || k.Threads != 1 {
		t.Fatalf("Seal wrote %+v, want argon2id, 3 passes, 65536 KiB, 1 lane", k)
	}
	for _, c := range []backup.Cost{{Time: 4, Memory: 64 * 1024, Threads: 1}, {Time: 3, Memory: 64*1024 + 1, Threads: 1}, {Time: 3, Memory: 64 * 1024, Threads: 2}} {
		if _, err := backup.SealWith(backup.State{}, backup.Meta{}, pass, c); code(err) != backup.CodeKDFTooCostly {
			t.Errorf("SealWith(%+v) = %v, want %s", c, err, backup.CodeKDFTooCostly)
		}
	}
	// A file written cheaper opens: every other test here restores one.
}

// TestEditedFileIsRefused (issue 39): the whole file is authenticated. A
// connection's base URL pointed elsewhere, an added client key row, one byte
// changed anywhere (metadata, rows, salt, check, MAC, the final newline),
// a byte added or the end cut: each is refused before anything is
// previewed or written, with BACKUP_TAMPERED (or BACKUP_WRONG_PASSPHRASE
// when the edit also breaks the passphrase check), naming no secret.
func TestEditedFileIsRefused(t *testing.T) {
	from := sqliteSide(t)
	fill(t, from)
	file := writeFile(t, from, false)
	to := sqliteSide(t)
	before := read(t, to, true).Canonical()
	flip := func(at int) []byte {
		b := bytes.Clone(file)
		b[at] ^= 0x01
		return b
	}
	at := func(s string) int {
		i := bytes.Index(file, []byte(s))
		if i < 0 {
			t.Fatalf("%q not in the file", s)
		}
		return i + len(s)
	}
	cases := []struct {
		name string
		file []byte
	}{
		{"base URL of a connection", bytes.Replace(file, []byte(`"base_url":""`), []byte(`"base_url":"http://attacker.example/v1"`), 1)},
		{"an added key row", bytes.Replace(file, []byte(`"api_keys":[`), []byte(`"api_keys":[{"id":"evil","name":"evil","key_hash":"`+secrets.Hash("known")+`","created_at":1},`), 1)},
		{"one byte of the created time", flip(at(`"createdAt":"`))},
		{"one byte of a row", flip(at(`"name":"wor`))},
		{"one byte of the salt", flip(at(`"salt":"`) + 2)},
		{"one byte of the MAC", flip(at(`"mac":"`) + 5)},
		{"the final newline", flip(len(file) - 1)},
		{"the first byte", flip(0)},
		{"a space added", append(bytes.Clone(file[:len(file)-1]), ' ', '\n')},
		{"the end cut", file[:len(file)-1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Equal(tc.file, file) {
				t.Fatal("the edit changed nothing")
			}
			_, err := restore(to, tc.file, pass)
			if c := code(err); c != backup.CodeTampered && c != backup.CodeWrongPassphrase && c != backup.CodeInvalid {
				t.Fatalf("got %v, want BACKUP_TAMPERED", err)
			}
			for _, s := range secretsUsed {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("the refusal names a secret: %v", err)
				}
			}
			if got := read(t, to, true).Canonical(); !bytes.Equal(got, before) {
				t.Fatal("a refused restore changed the database")
			}
		})
	}
	// The two edits the issue names are told as edits, not as a wrong passphrase.
	for _, tc := range cases[:2] {
		if _, err := restore(to, tc.file, pass); code(err) != backup.CodeTampered {
			t.Errorf("%s: %v, want BACKUP_TAMPERED", tc.name, err)
		}
	}
	if _, err := restore(to, file, pass); err != nil {
		t.Fatalf("the unedited file: %v", err)
	}
}

// TestUnauthenticatedLayoutNeedsOptIn: a layout version 1 file (no MAC) is
// refused with BACKUP_UNAUTHENTICATED unless the caller accepts it.
func TestUnauthenticatedLayoutNeedsOptIn(t *testing.T) {
	from := sqliteSide(t)
	fill(t, from)
	file := writeFile(t, from, false)
	i := bytes.LastIndex(file, []byte(`,"mac":"`))
	legacy := append(bytes.Replace(file[:i], []byte(`"formatVersion":2`), []byte(`"formatVersion":1`), 1), "}\n"...)
	to := sqliteSide(t)
	if _, err := restore(to, legacy, pass); code(err) != backup.CodeUnauthenticated {
		t.Fatalf("a version 1 file without the opt-in: %v, want BACKUP_UNAUTHENTICATED", err)
	}
	f, err := backup.Parse(bytes.NewReader(legacy))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := to.st.SchemaVersion()
	next, err := f.Open(pass, v, backup.OpenOptions{AllowUnauthenticated: true})
	if err != nil {
		t.Fatalf("with the opt-in: %v", err)
	}
	if err := backup.Apply(to.st, to.box, next); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(t, from, false).Canonical(), read(t, to, false).Canonical()) {
		t.Fatal("the version 1 file did not restore the same state")
	}
}

// TestRowsAreTypeChecked (issue 39): a file whose rows the schema would not
// type (priority "abc", a missing required column, an unknown column, a
// duplicated id, a flag of 7) is refused by Check — the dry run — with
// BACKUP_INVALID_ROW naming the table, row and column, and Apply writes
// nothing.
func TestRowsAreTypeChecked(t *testing.T) {
	from := sqliteSide(t)
	fill(t, from)
	good := read(t, from, true)
	to := sqliteSide(t)
	fill(t, to)
	before := read(t, to, true).Canonical()
	edit := func(table string, f func(rows []store.Row) []store.Row) backup.State {
		s := backup.State{}
		for k, rows := range good {
			c := make([]store.Row, 0, len(rows))
			for _, r := range rows {
				cp := store.Row{}
				for kk, vv := range r {
					cp[kk] = vv
				}
				c = append(c, cp)
			}
			s[k] = c
		}
		s[table] = f(s[table])
		return s
	}
	for _, tc := range []struct {
		name, want string
		s          backup.State
	}{
		{"priority abc", "priority", edit("provider_connections", func(r []store.Row) []store.Row { r[0]["priority"] = "abc"; return r })},
		{"priority 1.5", "priority", edit("provider_connections", func(r []store.Row) []store.Row { r[0]["priority"] = json.Number("1.5"); return r })},
		{"name a number", "name", edit("provider_connections", func(r []store.Row) []store.Row { r[0]["name"] = json.Number("7"); return r })},
		{"flag 7", "is_active", edit("provider_connections", func(r []store.Row) []store.Row { r[0]["is_active"] = json.Number("7"); return r })},
		{"created_at missing", "created_at", edit("combos", func(r []store.Row) []store.Row { delete(r[0], "created_at"); return r })},
		{"name null", "name", edit("combos", func(r []store.Row) []store.Row { r[0]["name"] = nil; return r })},
		{"unknown column", "evil", edit("api_keys", func(r []store.Row) []store.Row { r[0]["evil"] = "x"; return r })},
		{"duplicate id", "id", edit("api_keys", func(r []store.Row) []store.Row { r[1]["id"] = r[0]["id"]; return r })},
		{"log latency text", "latency_ms", edit("request_logs", func(r []store.Row) []store.Row { r[0]["latency_ms"] = "slow"; return r })},
		{"cost text", "cost_usd", edit("request_logs", func(r []store.Row) []store.Row { r[0]["cost_usd"] = "free"; return r })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := backup.Check(to.st, tc.s)
			if code(err) != backup.CodeInvalidRow || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want BACKUP_INVALID_ROW naming %s", err, tc.want)
			}
			if err := backup.Apply(to.st, to.box, tc.s); code(err) != backup.CodeInvalidRow {
				t.Fatalf("Apply: %v", err)
			}
			if got := read(t, to, true).Canonical(); !bytes.Equal(got, before) {
				t.Fatal("a refused restore changed the database")
			}
		})
	}
	if err := backup.Check(to.st, good); err != nil {
		t.Fatalf("a good state: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestPreview: a restore over a changed configuration names what it adds,
// changes and removes per kind, rules and budgets included.
func TestPreview(t *testing.T) {
	s := sqliteSide(t)
	fill(t, s)
	file := writeFile(t, s, false)
	// After the backup: one connection renamed, one added, one deleted; a
	// rule and a budget changed; a combo removed.
	c1, _ := s.st.Connection("c1")
	c1.Name = "renamed"
	if err := s.st.SaveConnection(&c1); err != nil {
		t.Fatal(err)
	}
	if err := s.st.DeleteConnection("c3"); err != nil {
		t.Fatal(err)
	}
	if err := s.st.CreateConnection(&store.Connection{ID: "c9", Provider: "openai", Name: "new", Models: "[]", CreatedAt: 1, UpdatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.st.SetValue("settings", "general", `{"maxAttempts":4,"providerErrorRules":[]}`); err != nil {
		t.Fatal(err)
	}
	k2 := store.APIKey{ID: "k2", Name: "ci", Scopes: `["inference"]`, AllowedConnections: `["c1"]`, AllowedModels: `["gpt-4o"]`, Budget: `{"usd":50,"period":"month"}`, Limits: `{"rpm":60}`}
	if err := s.st.SaveAPIKey(&k2); err != nil {
		t.Fatal(err)
	}
	if err := s.st.DeleteCombo("co1"); err != nil {
		t.Fatal(err)
	}
	f, _ := backup.Parse(bytes.NewReader(file))
	v, _ := s.st.SchemaVersion()
	next, err := f.Open(pass, v, backup.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := backup.Diff(read(t, s, false), next)
	ids := func(items []backup.Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	for _, tc := range []struct {
		kind                    string
		added, changed, removed []string
	}{
		{"connections", []string{"c3"}, []string{"c1"}, []string{"c9"}},
		{"rules", []string{"r1"}, nil, nil},
		{"budgets", nil, []string{"k2"}, nil},
		{"keys", nil, []string{"k2"}, nil},
		{"combos", []string{"co1"}, nil, nil},
		{"settings", nil, nil, nil}, // the rules are their own kind
		{"pricing", nil, nil, nil},
	} {
		c := p[tc.kind]
		if !slices.Equal(ids(c.Added), tc.added) || !slices.Equal(ids(c.Changed), tc.changed) || !slices.Equal(ids(c.Removed), tc.removed) {
			t.Errorf("%s: %+v, want +%v ~%v -%v", tc.kind, c, tc.added, tc.changed, tc.removed)
		}
	}
	if p["connections"].Changed[0].Name != "work" {
		t.Errorf("a changed item carries the backup's name: %+v", p["connections"].Changed)
	}
}

// TestEveryTableIsClassified: each table of the schema is either backed up
// or excluded with a reason, so a new table forces a decision here.
func TestEveryTableIsClassified(t *testing.T) {
	for _, table := range store.CopyTables() {
		in := slices.Contains(backup.ConfigTables, table) || slices.Contains(backup.LogTables, table)
		_, out := backup.Excluded[table]
		if in == out {
			t.Errorf("table %s: backed up %v, excluded %v; it must be exactly one", table, in, out)
		}
	}
}
