// Package backup writes and restores one file holding a gateway's
// configuration: settings, connections, client keys (hashed), combos, rules,
// pricing overrides and budgets, and with the request log only when asked.
// Every secret in the file is sealed with a key derived (argon2id) from a
// passphrase the user types, never with a data directory's secret.key, so the
// file restores on any machine, SQLite desktop or PostgreSQL team server.
//
// The file names the schema version it was written at: a restore refuses a
// file from a newer schema, previews what it would change (added, changed,
// removed per kind) and then replaces those kinds in one transaction.
package backup

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/crypto/argon2"

	"omniroute/backend/errs"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// Format names a backup file; FormatVersion is its layout's version.
const (
	Format        = "omniroute-backup"
	FormatVersion = 1
)

// MaxFileSize bounds a backup read (the request log included).
const MaxFileSize = 512 << 20

// MinPassphrase is the shortest passphrase a backup is written with.
const MinPassphrase = 8

// checkText is sealed in every file: opening it tells a wrong passphrase
// before anything is restored.
const checkText = "omniroute-backup-check"

// Stable error codes (docs/API.md).
const (
	CodeInvalid            = "BACKUP_INVALID"
	CodeWrongPassphrase    = "BACKUP_WRONG_PASSPHRASE"
	CodeSchemaTooNew       = "BACKUP_SCHEMA_TOO_NEW"
	CodePassphraseRequired = "BACKUP_PASSPHRASE_REQUIRED"
	CodeWeakPassphrase     = "BACKUP_PASSPHRASE_TOO_SHORT"
)

// Namespaces of key_value a backup holds: the settings (general — with the
// provider error rules — and resilience) and the connections' pricing
// overrides. The others (instance heartbeats, probe claims) are runtime state.
var Namespaces = []string{"settings", "pricing"}

// ConfigTables are the tables every backup holds; LogTables are added with
// the request log. Every other table is runtime state (Excluded).
var (
	ConfigTables = []string{"provider_connections", "api_keys", "combos", "key_value"}
	LogTables    = []string{"request_logs", "usage_rollup", "key_spend"}
	// Excluded are the tables a backup never holds, with why: what they keep
	// is rebuilt at run time or expires within minutes.
	Excluded = map[string]string{
		"domain_circuit_breakers":     "breaker state, rebuilt by traffic",
		"session_account_affinity":    "session pins, expire within hours",
		"exclusive_connection_leases": "leases of running clients",
		"state_events":                "the state timeline (runtime history)",
		"model_locks":                 "model lockouts and cooldowns, expire within minutes",
		"request_bodies":              "captured request and response bodies: diagnostics with their own short retention, never carried off the machine",
		"connection_slots":            "a team server's concurrency slots, leases of running requests",
		"connection_pacing":           "a team server's next dispatch turns, seconds ahead at most",
		"users":                       "people and their password hashes stay with the team server's database (a file carries no password hash)",
		"user_sessions":               "sign-in sessions, expire within hours",
		"management_tokens":           "management tokens are the instances' own and the operators'; a restore never grants access",
		"audit_log":                   "the audit trail is never rewritten by a restore",
	}
)

// Scopes are the parts of the database a backup holds.
func Scopes(withLog bool) []store.Scope {
	out := make([]store.Scope, 0, len(ConfigTables)+len(LogTables))
	for _, t := range ConfigTables {
		sc := store.Scope{Table: t}
		if t == "key_value" {
			sc.Namespaces = Namespaces
		}
		out = append(out, sc)
	}
	if withLog {
		for _, t := range LogTables {
			out = append(out, store.Scope{Table: t})
		}
	}
	return out
}

// State is a database's backed-up rows per table with every secret in plain
// text: what a backup holds once opened, and what a restore writes.
type State map[string][]store.Row

// Canonical is the state as JSON with sorted keys and rows in primary-key
// order: two databases holding the same configuration give the same bytes.
func (s State) Canonical() []byte {
	b, _ := json.Marshal(s)
	return b
}

// HasLog reports whether the state holds the request log.
func (s State) HasLog() bool {
	_, ok := s["request_logs"]
	return ok
}

// Read reads the backed-up part of st, opening secrets with box (the data
// directory's key).
func Read(st *store.Store, box *secrets.Box, withLog bool) (State, error) {
	scopes := Scopes(withLog)
	all, err := st.ReadScopes(scopes)
	if err != nil {
		return nil, err
	}
	out := State{}
	for i, sc := range scopes {
		rows := all[i]
		for _, r := range rows {
			if err := transform(sc.Table, r, box.Open); err != nil {
				return nil, fmt.Errorf("%s: %w", sc.Table, err)
			}
		}
		out[sc.Table] = rows
	}
	return out, nil
}

// Apply replaces the backed-up part of st with s in one transaction, sealing
// secrets with box (the destination's key). The request log is replaced only
// when s holds it; otherwise the destination keeps its own.
func Apply(st *store.Store, box *secrets.Box, s State) error {
	scopes := Scopes(s.HasLog())
	rows := make([][]store.Row, len(scopes))
	for i, sc := range scopes {
		for _, r := range s[sc.Table] {
			c := copyRow(r)
			if err := transform(sc.Table, c, box.Seal); err != nil {
				return err
			}
			rows[i] = append(rows[i], c)
		}
	}
	return st.ReplaceRows(scopes, rows)
}

// KDF says how the file's key was derived from the passphrase.
type KDF struct {
	Name    string `json:"name"` // "argon2id"
	Salt    string `json:"salt"` // base64
	Time    uint32 `json:"time"`
	Memory  uint32 `json:"memoryKiB"`
	Threads uint8  `json:"threads"`
}

// The argon2id cost every backup is written with (RFC 9106's second
// recommended option, with one lane).
const (
	kdfTime    = 3
	kdfMemory  = 64 * 1024
	kdfThreads = 1
	// maxMemory bounds what a file may ask for (a crafted file must not
	// exhaust memory on restore).
	maxMemory = 1 << 20
	maxTime   = 16
)

// File is a backup as written: metadata, the passphrase check and the rows
// with secrets sealed under the passphrase's key.
type File struct {
	Format        string                 `json:"format"`
	FormatVersion int                    `json:"formatVersion"`
	SchemaVersion int                    `json:"schemaVersion"`
	AppVersion    string                 `json:"appVersion,omitempty"`
	CreatedAt     string                 `json:"createdAt"`
	WithLog       bool                   `json:"withLog"`
	KDF           KDF                    `json:"kdf"`
	Check         string                 `json:"check"`
	Tables        map[string][]store.Row `json:"tables"`
}

// Meta describes the database a backup is written from.
type Meta struct {
	SchemaVersion int
	AppVersion    string
	Now           time.Time
}

// Seal turns s into a file sealed with passphrase.
func Seal(s State, m Meta, passphrase string) (*File, error) {
	if passphrase == "" {
		return nil, errs.New(errs.Invalid, CodePassphraseRequired, "a backup needs a passphrase").WithParam("passphrase")
	}
	if len([]rune(passphrase)) < MinPassphrase {
		return nil, errs.New(errs.Invalid, CodeWeakPassphrase, "the passphrase must be at least %d characters", MinPassphrase).WithParam("passphrase")
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	k := KDF{Name: "argon2id", Salt: base64.StdEncoding.EncodeToString(salt), Time: kdfTime, Memory: kdfMemory, Threads: kdfThreads}
	box, err := k.box(passphrase)
	if err != nil {
		return nil, err
	}
	check, err := box.Seal(checkText)
	if err != nil {
		return nil, err
	}
	f := &File{Format: Format, FormatVersion: FormatVersion, SchemaVersion: m.SchemaVersion, AppVersion: m.AppVersion,
		CreatedAt: m.Now.UTC().Format(time.RFC3339), WithLog: s.HasLog(), KDF: k, Check: check, Tables: map[string][]store.Row{}}
	for table, rows := range s {
		out := make([]store.Row, 0, len(rows))
		for _, r := range rows {
			c := copyRow(r)
			if err := transform(table, c, box.Seal); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		f.Tables[table] = out
	}
	return f, nil
}

// Write writes f as JSON.
func (f *File) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	return enc.Encode(f)
}

// Parse reads a backup file (at most MaxFileSize bytes), refusing anything
// that is not one with BACKUP_INVALID.
func Parse(r io.Reader) (*File, error) {
	dec := json.NewDecoder(io.LimitReader(r, MaxFileSize+1))
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, invalid("not a backup file (%s)", shortJSONError(err))
	}
	if f.Format != Format {
		return nil, invalid("not an OmniRoute backup file (format %q)", truncate(f.Format, 40))
	}
	if f.FormatVersion < 1 || f.FormatVersion > FormatVersion {
		return nil, invalid("backup layout version %d is not one this version reads (up to %d); update OmniRoute", f.FormatVersion, FormatVersion)
	}
	if f.SchemaVersion < 1 || f.Check == "" || f.Tables == nil {
		return nil, invalid("the backup file is incomplete (schema version, check or tables missing)")
	}
	known := slices.Concat(ConfigTables, LogTables)
	for t := range f.Tables {
		if !slices.Contains(known, t) {
			return nil, invalid("the backup holds an unknown table %q", truncate(t, 40))
		}
	}
	return &f, nil
}

// Open checks f against the destination's schema version and passphrase and
// returns its rows with secrets in plain text. A newer schema is refused
// with BACKUP_SCHEMA_TOO_NEW and a wrong passphrase with
// BACKUP_WRONG_PASSPHRASE, before anything is read.
func (f *File) Open(passphrase string, schemaVersion int) (State, error) {
	if f.SchemaVersion > schemaVersion {
		return nil, errs.New(errs.Invalid, CodeSchemaTooNew,
			"the backup was written by a newer OmniRoute (schema version %d, this one has %d); update OmniRoute, then restore it", f.SchemaVersion, schemaVersion)
	}
	if passphrase == "" {
		return nil, errs.New(errs.Invalid, CodePassphraseRequired, "restoring a backup needs its passphrase").WithParam("passphrase")
	}
	box, err := f.KDF.box(passphrase)
	if err != nil {
		return nil, err
	}
	if got, err := box.Open(f.Check); err != nil || got != checkText {
		return nil, errs.New(errs.Invalid, CodeWrongPassphrase, "wrong passphrase: it does not open this backup; nothing was changed").WithParam("passphrase")
	}
	out := State{}
	for table, rows := range f.Tables {
		list := make([]store.Row, 0, len(rows))
		for _, r := range rows {
			c := copyRow(r)
			if err := transform(table, c, box.Open); err != nil {
				return nil, invalid("%s: %v", table, err)
			}
			list = append(list, c)
		}
		out[table] = list
	}
	for _, sc := range Scopes(f.WithLog) {
		if _, ok := out[sc.Table]; !ok {
			return nil, invalid("the backup lacks the table %s", sc.Table)
		}
	}
	return out, nil
}

func (k KDF) box(passphrase string) (*secrets.Box, error) {
	if k.Name != "argon2id" {
		return nil, invalid("unknown key derivation %q", truncate(k.Name, 40))
	}
	salt, err := base64.StdEncoding.DecodeString(k.Salt)
	if err != nil || len(salt) < 8 || k.Time < 1 || k.Time > maxTime || k.Memory < 8*uint32(max(1, k.Threads)) || k.Memory > maxMemory || k.Threads < 1 {
		return nil, invalid("the backup's key derivation parameters are invalid")
	}
	key := argon2.IDKey([]byte(passphrase), salt, k.Time, k.Memory, k.Threads, 32)
	return secrets.New(key)
}

func invalid(format string, args ...any) error {
	return errs.New(errs.Invalid, CodeInvalid, format, args...)
}

func copyRow(r store.Row) store.Row {
	c := make(store.Row, len(r))
	for k, v := range r {
		c[k] = v
	}
	return c
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func shortJSONError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	}
	if errors.Is(err, io.EOF) {
		return "empty"
	}
	return "unexpected content"
}
