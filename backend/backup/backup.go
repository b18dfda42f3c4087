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
//
// Every byte of a file (layout version 2) is authenticated: an HMAC-SHA256
// keyed from the passphrase (through the same argon2id derivation) closes the
// file, so a file edited anywhere — a connection's base URL, an added key
// row, one byte of whitespace — is refused before anything is previewed or
// written. Layout version 1 files (sealed secrets only) are refused unless
// the caller explicitly accepts an unauthenticated file.
package backup

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
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
	FormatVersion = 2
	// LegacyFormatVersion is the layout without a whole-file MAC: read only
	// when the caller accepts an unauthenticated file (OpenOptions).
	LegacyFormatVersion = 1
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
	// CodeTampered: the passphrase is right but the file's bytes are not the
	// ones written (edited, truncated or damaged).
	CodeTampered = "BACKUP_TAMPERED"
	// CodeUnauthenticated: a layout version 1 file, whose content is not
	// authenticated, without the explicit opt-in.
	CodeUnauthenticated = "BACKUP_UNAUTHENTICATED"
	// CodeKDFTooCostly: the file asks for a key derivation costlier than any
	// this version writes.
	CodeKDFTooCostly = "BACKUP_KDF_TOO_COSTLY"
	// CodeInvalidRow: a row's column is unknown, of the wrong type, missing
	// or duplicated, or a setting or budget would not load.
	CodeInvalidRow = "BACKUP_INVALID_ROW"
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
		"model_prefill":               "what continuations and Test learned of each model's assistant prefill, learned again by traffic",
		"key_rate_tokens":             "a team server's per-key request and token windows, a minute long",
		"budget_alerts":               "which budget alerts the team has raised this period (a restore must not silence or repeat them)",
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

// Check refuses, with BACKUP_INVALID_ROW naming the table, row and column,
// a state st could not store as its schema types it (a text where a number
// belongs, a missing required column, a duplicated key): what a restore's dry
// run runs, so a file that would fail half-way, or write rows the gateway
// cannot read back, is refused before anything is written.
func Check(st *store.Store, s State) error {
	scopes := Scopes(s.HasLog())
	rows := make([][]store.Row, len(scopes))
	for i, sc := range scopes {
		rows[i] = s[sc.Table]
	}
	err := st.CheckRows(scopes, rows)
	var re *store.RowError
	if errors.As(err, &re) {
		return errs.New(errs.Invalid, CodeInvalidRow, "the backup cannot be restored: %s; nothing was changed", re.Error())
	}
	return err
}

// Apply replaces the backed-up part of st with s in one transaction, sealing
// secrets with box (the destination's key), after Check: either every row is
// written or, on any error, none. The request log is replaced only when s
// holds it; otherwise the destination keeps its own.
func Apply(st *store.Store, box *secrets.Box, s State) error {
	if err := Check(st, s); err != nil {
		return err
	}
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
	// The most a file may ask for: exactly what this version writes (a
	// crafted file must not cost seconds and a gigabyte before its
	// passphrase is even checked).
	maxMemory  = kdfMemory
	maxTime    = kdfTime
	maxThreads = kdfThreads
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
	// MAC authenticates every other byte of the file (layout version 2):
	// HMAC-SHA256 under a key derived from the passphrase, base64url.
	MAC string `json:"mac,omitempty"`

	// raw is the file as read (Parse), which the MAC is checked over.
	raw []byte
	// macKey is the MAC key of a file Seal made (Write needs it).
	macKey []byte
}

// Meta describes the database a backup is written from.
type Meta struct {
	SchemaVersion int
	AppVersion    string
	Now           time.Time
}

// Cost is an argon2id cost: passes, memory in KiB and lanes.
type Cost struct {
	Time    uint32
	Memory  uint32
	Threads uint8
}

// DefaultCost is the cost every backup is written with, and the most a file
// may ask for.
func DefaultCost() Cost { return Cost{Time: kdfTime, Memory: kdfMemory, Threads: kdfThreads} }

// Seal turns s into a file sealed with passphrase, its key derived at
// DefaultCost.
func Seal(s State, m Meta, passphrase string) (*File, error) {
	return SealWith(s, m, passphrase, DefaultCost())
}

// SealWith is Seal at cost c, which may not exceed DefaultCost (a costlier
// file is refused when read). Tests write with a cheap one: under the race
// detector the default derivation takes about a second of CPU, and every
// open of the file (a restore, a wrong passphrase, a tampered file) pays it
// again.
func SealWith(s State, m Meta, passphrase string, c Cost) (*File, error) {
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
	k := KDF{Name: "argon2id", Salt: base64.StdEncoding.EncodeToString(salt), Time: c.Time, Memory: c.Memory, Threads: c.Threads}
	box, macKey, err := k.keys(passphrase)
	if err != nil {
		return nil, err
	}
	check, err := box.Seal(checkText)
	if err != nil {
		return nil, err
	}
	f := &File{Format: Format, FormatVersion: FormatVersion, SchemaVersion: m.SchemaVersion, AppVersion: m.AppVersion,
		CreatedAt: m.Now.UTC().Format(time.RFC3339), WithLog: s.HasLog(), KDF: k, Check: check, Tables: map[string][]store.Row{},
		macKey: macKey}
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

// macField is how the MAC member opens in a written file: the last member.
var macField = []byte(`,"mac":"`)

// macLen is the length of a base64url HMAC-SHA256.
var macLen = base64.RawURLEncoding.EncodedLen(sha256.Size)

// Write writes f as JSON closed by its MAC (layout version 2): the MAC is
// computed over the whole file with an empty MAC value, then put in. It
// needs the passphrase's key, so only a file Seal made is written.
func (f *File) Write(w io.Writer) error {
	if f.macKey == nil {
		return errors.New("backup: only a sealed file can be written")
	}
	c := *f
	c.MAC = ""
	b, err := json.Marshal(struct {
		*File
		MAC string `json:"mac"`
	}{&c, ""})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	i := bytes.LastIndex(b, macField)
	if i < 0 {
		return errors.New("backup: the MAC member is missing")
	}
	at := i + len(macField)
	mac := base64.RawURLEncoding.EncodeToString(fileMAC(f.macKey, b))
	out := make([]byte, 0, len(b)+len(mac))
	out = append(append(append(out, b[:at]...), mac...), b[at:]...)
	_, err = w.Write(out)
	return err
}

// fileMAC is the HMAC-SHA256 of a file's bytes with an empty MAC value.
func fileMAC(key, b []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return m.Sum(nil)
}

// splitMAC finds the MAC of a written file: its value and the file's bytes
// with that value removed. ok is false when the file does not end with a MAC
// member as Write puts it.
func splitMAC(raw []byte) (mac []byte, rest []byte, ok bool) {
	i := bytes.LastIndex(raw, macField)
	if i < 0 {
		return nil, nil, false
	}
	at := i + len(macField)
	end := bytes.IndexByte(raw[at:], '"')
	if end != macLen {
		return nil, nil, false
	}
	mac, err := base64.RawURLEncoding.DecodeString(string(raw[at : at+end]))
	if err != nil {
		return nil, nil, false
	}
	rest = make([]byte, 0, len(raw)-end)
	rest = append(append(rest, raw[:at]...), raw[at+end:]...)
	return mac, rest, true
}

// Parse reads a backup file (at most MaxFileSize bytes), refusing anything
// that is not one with BACKUP_INVALID, and key derivation parameters above
// what this version writes with BACKUP_KDF_TOO_COSTLY (before any
// passphrase is tried).
func Parse(r io.Reader) (*File, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxFileSize {
		return nil, errs.New(errs.TooLarge, "REQUEST_TOO_LARGE", "the backup file is larger than %d bytes", int64(MaxFileSize))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, invalid("not a backup file (%s)", shortJSONError(err))
	}
	if f.Format != Format {
		return nil, invalid("not an OmniRoute backup file (format %q)", truncate(f.Format, 40))
	}
	if f.FormatVersion < LegacyFormatVersion || f.FormatVersion > FormatVersion {
		return nil, invalid("backup layout version %d is not one this version reads (up to %d); update OmniRoute", f.FormatVersion, FormatVersion)
	}
	if f.SchemaVersion < 1 || f.Check == "" || f.Tables == nil {
		return nil, invalid("the backup file is incomplete (schema version, check or tables missing)")
	}
	if f.FormatVersion >= 2 && f.MAC == "" {
		return nil, tampered()
	}
	if err := f.KDF.valid(); err != nil {
		return nil, err
	}
	known := slices.Concat(ConfigTables, LogTables)
	for t := range f.Tables {
		if !slices.Contains(known, t) {
			return nil, invalid("the backup holds an unknown table %q", truncate(t, 40))
		}
	}
	f.raw = raw
	return &f, nil
}

// Authenticated reports whether the file's layout authenticates every byte
// (version 2 and later).
func (f *File) Authenticated() bool { return f.FormatVersion >= 2 }

// OpenOptions are a restore's opt-ins.
type OpenOptions struct {
	// AllowUnauthenticated reads a layout version 1 file, whose content
	// (anything but its secrets) anyone could have edited without the
	// passphrase.
	AllowUnauthenticated bool
}

// Open checks f against the passphrase, its MAC and the destination's
// schema version and returns its rows with secrets in plain text. A wrong
// passphrase is refused with BACKUP_WRONG_PASSPHRASE, a file whose bytes are
// not the ones written with BACKUP_TAMPERED, an unauthenticated (version 1)
// file with BACKUP_UNAUTHENTICATED unless o allows it, and a newer schema
// with BACKUP_SCHEMA_TOO_NEW, all before anything is read.
func (f *File) Open(passphrase string, schemaVersion int, o OpenOptions) (State, error) {
	if !f.Authenticated() && !o.AllowUnauthenticated {
		return nil, errs.New(errs.Invalid, CodeUnauthenticated,
			"this backup was written by an older OmniRoute (layout version %d) that did not authenticate the whole file: anyone could have edited it without the passphrase; "+
				"restore it only if you trust the file, with allowUnauthenticated=true (API) or --allow-unauthenticated (command line)", f.FormatVersion)
	}
	if passphrase == "" {
		return nil, errs.New(errs.Invalid, CodePassphraseRequired, "restoring a backup needs its passphrase").WithParam("passphrase")
	}
	box, macKey, err := f.KDF.keys(passphrase)
	if err != nil {
		return nil, err
	}
	checkOpens := func() bool { got, err := box.Open(f.Check); return err == nil && got == checkText }
	if f.Authenticated() {
		mac, rest, ok := splitMAC(f.raw)
		if !ok || !hmac.Equal(mac, fileMAC(macKey, rest)) {
			if !checkOpens() {
				return nil, wrongPassphrase()
			}
			return nil, tampered()
		}
	}
	if !checkOpens() {
		return nil, wrongPassphrase()
	}
	if f.SchemaVersion > schemaVersion {
		return nil, errs.New(errs.Invalid, CodeSchemaTooNew,
			"the backup was written by a newer OmniRoute (schema version %d, this one has %d); update OmniRoute, then restore it", f.SchemaVersion, schemaVersion)
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

func wrongPassphrase() error {
	return errs.New(errs.Invalid, CodeWrongPassphrase, "wrong passphrase: it does not open this backup (or the file was damaged); nothing was changed").WithParam("passphrase")
}

func tampered() error {
	return errs.New(errs.Invalid, CodeTampered,
		"the backup file is not the one OmniRoute wrote: it was edited or damaged after it was made, so it is not restored; nothing was changed")
}

// valid refuses parameters this version would never write: an unknown
// derivation, a short salt, or a cost above kdfTime × kdfMemory × kdfThreads.
func (k KDF) valid() error {
	if k.Name != "argon2id" {
		return invalid("unknown key derivation %q", truncate(k.Name, 40))
	}
	salt, err := base64.StdEncoding.DecodeString(k.Salt)
	if err != nil || len(salt) < 8 || k.Time < 1 || k.Threads < 1 || k.Memory < 8*uint32(k.Threads) {
		return invalid("the backup's key derivation parameters are invalid")
	}
	if k.Time > maxTime || k.Memory > maxMemory || k.Threads > maxThreads {
		return errs.New(errs.Invalid, CodeKDFTooCostly,
			"the backup asks for a key derivation costlier than OmniRoute writes (time %d, memory %d KiB, threads %d; at most %d, %d KiB, %d): not a file OmniRoute made",
			k.Time, k.Memory, k.Threads, maxTime, maxMemory, maxThreads)
	}
	return nil
}

// keys derives the file's keys from the passphrase: the box sealing its
// secrets (the argon2id output) and the MAC key (HMAC of that output with a
// label, so the two are independent).
func (k KDF) keys(passphrase string) (*secrets.Box, []byte, error) {
	if err := k.valid(); err != nil {
		return nil, nil, err
	}
	salt, _ := base64.StdEncoding.DecodeString(k.Salt)
	key := argon2.IDKey([]byte(passphrase), salt, k.Time, k.Memory, k.Threads, 32)
	box, err := secrets.New(key)
	if err != nil {
		return nil, nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("omniroute-backup-file-mac-v2"))
	return box, m.Sum(nil), nil
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
