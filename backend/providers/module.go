package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"omniroute/backend/resilience/rules"
)

// Module is what one provider folder (backend/providers/<name>/) tells the
// rest of the gateway about its provider, so that the management API,
// discovery, routing and the wiring place ask the module instead of naming
// the provider. A folder exports a func Module() Module; the one list of
// modules is backend/providers/registry, and the wiring place builds the
// catalogue from it (Catalog.WithModules). Every hook is optional.
type Module struct {
	// ID is the catalogue id the module serves (its rows' id).
	ID string
	// Dialect is the wire variant the module's executor speaks ("" : none).
	Dialect Dialect
	// Rows are the catalogue rows the module adds (Catalog.WithModules).
	Rows []Provider
	// FormatOf is the wire a model of the module's rows is served on when
	// it is not the row's Format (nil or "": the row's).
	FormatOf func(model string) Format
	// Rules are the provider's built-in error rules (Catalog.Rules; the
	// wiring place hands them to rules.New).
	Rules []rules.Rule
	// Restatements are the provider's built-in status corrections
	// (Catalog.Restatements; the wiring place hands them to rules.New).
	Restatements []rules.Restatement
	// Prices are the provider's API prices: JSON {"entries": [...]} in the
	// shape of pricing.Entry (provider, model, per-million-token prices,
	// date, source), usually its folder's embedded prices.json; the wiring
	// place merges every module's (Catalog.Prices) into pricing.New.
	Prices []byte
	// Words are the plain sentences of the error codes only this provider
	// emits (Catalog.Words; GET /api/words carries them).
	Words map[string]string
	// Prefills reports a model that continues a trailing assistant message
	// whatever the row's prefill flags say (nil: the flags decide).
	Prefills func(model string) bool
	// NewExecutor builds the executor of Dialect from the wiring place's
	// shared parts, once: it serves every wire format of Formats.
	NewExecutor func(ExecDeps) Executor
	// Formats are the wire formats NewExecutor's executor is a dialect of.
	Formats []Format
	// Data is the schema of a connection's providerSpecificData (nil: free form).
	Data *DataSchema
	// Key says how the dashboard asks for a connection's apiKey (zero: a
	// secret text field labelled "API key").
	Key KeyForm
	// MaxKey bounds the apiKey's length (0: the API's default).
	MaxKey int
	// Check runs when a connection is created or its apiKey or
	// providerSpecificData changes, after both are applied: it checks the
	// credential against the object and returns the object to store.
	Check func(KeyCheck) (string, error)
	// CheckedByCompletion: an OAuth connection's check sends a one-token
	// completion (the provider's own CLI sends one), and the executor may
	// read its quota (QuotaReader).
	CheckedByCompletion bool
	// Connect reads a stored connection's providerSpecificData into the
	// parts of its targets (credentials, default base URL).
	Connect func(ConnInput) (ConnData, error)
	// Models is the provider's own model list (nil: the wire format's).
	Models *ModelList
	// OwnModels are the model names a target's connection names itself
	// (e.g. a deployments map): added to what discovery lists, and served
	// when the upstream's list does not answer.
	OwnModels func(Target) []string
	// Login is the provider's own device-code sign-in (nil: none); the
	// API, the CLI and the dashboard drive it (docs/PROVIDERS.md).
	Login *LoginFlow
	// Refresh is the provider's own token refresh (nil: the OAuth
	// refresh_token grant); the token refresher calls it.
	Refresh Refresher
	// Import is where the provider's own CLI keeps its login and how to
	// read it (nil: no CLI login to import); `omniroute import`, the API
	// and the dashboard list the catalogue's (Catalog.Imports).
	Import *CredentialImport
	// RediscoverOnImport: an imported login (`omniroute import`, the
	// dashboard's import) lists the upstream's own models at once, and
	// drops the catalogue's import list it was seeded with when they answer.
	RediscoverOnImport bool
}

// ExecDeps are the shared parts an executor is built from.
type ExecDeps struct {
	Client    Doer
	UserAgent string
	Now       func() time.Time
	// Getenv reads the process environment (test endpoints); never nil.
	Getenv func(string) string
	// Observe, when set, hears the headers of the answers an executor
	// consumes itself (a usage wall's waits and retries), which the caller
	// never sees: they carry the account's usage windows.
	Observe func(t Target, h http.Header)
	// OnChange, when set, hears each change of a connection's usage wall
	// state with the transition that made it, for the dashboard's live view.
	OnChange func(connID, transition string)
}

// UsageWallReader is an executor that keeps a per-connection usage wall
// state: UsageWall is what the dashboard shows of t's connection (ok false:
// the wall does not apply to it).
type UsageWallReader interface {
	UsageWall(t Target, now time.Time) (state map[string]any, ok bool)
}

// KeyCheck is a connection's credential and providerSpecificData as saved.
type KeyCheck struct {
	// Key is the plain apiKey (this edit's, else the stored one; "" : none).
	Key string
	// Data is the providerSpecificData object to store ("" : none).
	Data string
}

// QuotaBucket is one quota an upstream reports for an account: the model,
// the fraction left (0…1) and when it resets.
type QuotaBucket struct {
	Model     string
	Remaining float64
	ResetsAt  time.Time
}

// QuotaReader is an executor that reads its account's quota buckets; status
// is the upstream's answer (a refusal is not an error).
type QuotaReader interface {
	QuotaBuckets(ctx context.Context, t *Target) (buckets []QuotaBucket, status int, err error)
}

// DataSchema is a provider's providerSpecificData: its fields and how a
// saved object is checked and stored.
type DataSchema struct {
	// Fields describe the object (GET /api/providers/catalog, docs).
	Fields []Field
	// Required: creating a connection without providerSpecificData is
	// refused with RequiredMessage.
	Required        bool
	RequiredMessage string
	// Apply checks a saved object and returns what to store: secrets
	// sealed (a Field with Sealed set moves out of the object), every
	// error field-precise (*FieldError).
	Apply func(DataInput) (DataOutput, error)
}

// Field is one providerSpecificData field. Beyond its JSON shape it says
// how a connection form shows it (GET /api/providers/catalog): the
// dashboard renders every provider's form from these, with no view of its own.
type Field struct {
	Name string
	// Type is the JSON type: "string", "object", "boolean".
	Type     string
	Required bool
	// Secret fields are never stored in clear nor returned: SealedAs names
	// where the sealed value goes ("apiKey": the connection's key column;
	// otherwise a providerSpecificData field ending in "Sealed").
	Secret   bool
	SealedAs string
	Doc      string
	// Label is the form's label ("" : Name).
	Label string
	// Kind is the form control (FieldKind; "" : KindSecret for a Secret
	// field, KindJSON for an object, KindBool for a boolean, else KindText).
	Kind FieldKind
	// Options are a KindSelect field's values.
	Options []string
	// Default is the value the gateway uses when the field is left empty.
	Default string
	// Placeholder is an example shown in an empty control.
	Placeholder string
	// ReadOnly fields are the gateway's own (filled on save): shown, never sent.
	ReadOnly bool
	// Summary, when set, shows the field's value on the connection's row
	// after this word ("project", "region").
	Summary string
	// RequiredUnless names a field that, when set, makes this one optional
	// (values read from a profile).
	RequiredUnless string
	// MapKey and MapValue name a KindMap field's two sides ("model", "deployment").
	MapKey, MapValue string
}

// FieldKind is how a connection form shows a field or the apiKey.
type FieldKind string

// The form controls a Field or KeyForm can ask for.
const (
	KindText   FieldKind = "text"
	KindURL    FieldKind = "url"
	KindSecret FieldKind = "secret"
	KindSelect FieldKind = "select"
	KindBool   FieldKind = "boolean"
	// KindJSON is a JSON value typed in a text area.
	KindJSON FieldKind = "json"
	// KindMap is an object of string → string, one "key = value" a line.
	KindMap FieldKind = "map"
	// KindFile is a file's text (a JSON key file), read in the browser.
	KindFile FieldKind = "file"
	// KindNone hides the apiKey: the Data fields carry the credential.
	KindNone FieldKind = "none"
)

// FormKind is f's control: Kind, else the one its type and secrecy imply.
func (f Field) FormKind() FieldKind {
	switch {
	case f.Kind != "":
		return f.Kind
	case f.Secret:
		return KindSecret
	case f.Type == "object":
		return KindJSON
	case f.Type == "boolean":
		return KindBool
	}
	return KindText
}

// KeyForm is how a connection form asks for the apiKey.
type KeyForm struct {
	// Kind is KindSecret (""), KindFile or KindNone.
	Kind FieldKind
	// Label ("" : "API key"), Doc (the help line) and, for a file, Accept
	// (the file chooser's types, ".json,application/json").
	Label, Doc, Accept string
}

// SealedFieldSuffix ends a providerSpecificData field holding a sealed
// value: stored, resealed with the store, never returned.
const SealedFieldSuffix = "Sealed"

// PublicData is a stored providerSpecificData object as it may be shown
// (management API answers): without its sealed fields (SealedFieldSuffix).
// Text that is not an object is returned as it is.
func PublicData(raw string) json.RawMessage {
	if !strings.Contains(raw, SealedFieldSuffix) {
		return json.RawMessage(raw)
	}
	var d map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &d) != nil {
		return json.RawMessage(raw)
	}
	for k := range d {
		if strings.HasSuffix(k, SealedFieldSuffix) {
			delete(d, k)
		}
	}
	b, _ := json.Marshal(d)
	return b
}

// DataInput is one save of a connection's providerSpecificData.
type DataInput struct {
	// Raw is the object sent (JSON); Stored is the connection's current
	// object ("" on create).
	Raw, Stored string
	// Seal seals a secret with the gateway's key.
	Seal func(string) (string, error)
	// Home is the user's home directory (files a provider reads its
	// credentials from, e.g. a CLI's profile).
	Home func() (string, error)
}

// DataOutput is what a save stores.
type DataOutput struct {
	// Data is the object to store.
	Data string
	// APIKeySealed, when set, replaces the connection's sealed API key.
	APIKeySealed string
}

// FieldError is a refused providerSpecificData: Field is the path of the
// offending field ("providerSpecificData.region"), Code a stable error code.
type FieldError struct {
	Field, Code, Message string
}

func (e *FieldError) Error() string { return e.Message }

// ConnInput is a stored connection as its module reads it.
type ConnInput struct {
	// Data is the providerSpecificData object; Secret the opened API key or token.
	Data, Secret string
	// Open opens a value sealed in Data.
	Open func(string) (string, error)
}

// ConnData is what a module reads from a stored connection.
type ConnData struct {
	// BaseURL is the connection's default endpoint when it sets none ("" : the row's).
	BaseURL string
	// Parts are the target fields the module fills (signing credentials,
	// project and region, deployments); routing starts every target of the
	// connection from them.
	Parts Target
	// Format, when set, is the wire the connection is served on instead of the row's.
	Format Format
	// Models are model names the connection serves before any discovery.
	Models []string
}

// ModelList is a provider's own model discovery: the requests to send, in
// order (a failure of a later one keeps the names of earlier ones), and how
// to read each answer.
type ModelList struct {
	Requests func(ctx context.Context, t Target, userAgent string, now time.Time) ([]*http.Request, error)
	Parse    func(body []byte) (ids []string, ok bool)
	// Shape names what Parse did not find, for the error ("modelSummaries").
	Shape string
}

// WithModules returns a copy of the catalogue with the modules' rows added
// (their OAuth endpoints overridden like the built-in rows', NewCatalogEnv)
// and every row a module serves pointing at its module (Provider.Module).
func (c *Catalog) WithModules(ms ...Module) *Catalog {
	byModule := map[string]*Module{}
	list := append([]Provider(nil), c.list...)
	for i := range ms {
		m := &ms[i]
		byModule[m.ID] = m
		rows := append([]Provider(nil), m.Rows...)
		applyEnv(rows, c.getenv)
		list = append(list, rows...)
	}
	out := &Catalog{byID: map[string]Provider{}, list: list, modules: ms, getenv: c.getenv}
	for i, p := range list {
		if m, ok := byModule[p.ID]; ok {
			list[i].Module = m
		}
		out.byID[p.ID] = list[i]
		for _, a := range p.Aliases {
			out.byID[a] = list[i]
		}
	}
	return out
}

// Modules are the catalogue's modules (WithModules).
func (c *Catalog) Modules() []Module { return c.modules }

// Rules are the modules' built-in error rules, in module order.
func (c *Catalog) Rules() []rules.Rule {
	var out []rules.Rule
	for _, m := range c.modules {
		out = append(out, m.Rules...)
	}
	return out
}

// Restatements are the modules' built-in status corrections, in module order.
func (c *Catalog) Restatements() []rules.Restatement {
	var out []rules.Restatement
	for _, m := range c.modules {
		out = append(out, m.Restatements...)
	}
	return out
}

// Prices are the modules' price lists (Module.Prices), in module order.
func (c *Catalog) Prices() [][]byte {
	var out [][]byte
	for _, m := range c.modules {
		if len(m.Prices) > 0 {
			out = append(out, m.Prices)
		}
	}
	return out
}

// Words are the modules' sentences of their own error codes, merged.
func (c *Catalog) Words() map[string]string {
	out := map[string]string{}
	for _, m := range c.modules {
		for code, sentence := range m.Words {
			out[code] = sentence
		}
	}
	return out
}

// Executors are the modules' executors by wire format and dialect, each
// module's built once (one executor may serve several formats).
func (c *Catalog) Executors(deps ExecDeps) map[Format]map[Dialect]Executor {
	out := map[Format]map[Dialect]Executor{}
	for _, m := range c.modules {
		if m.NewExecutor == nil || m.Dialect == "" {
			continue
		}
		e := m.NewExecutor(deps)
		for _, f := range m.Formats {
			if out[f] == nil {
				out[f] = map[Dialect]Executor{}
			}
			out[f][m.Dialect] = e
		}
	}
	return out
}

// DataSchema is the providerSpecificData schema of the row's module (nil: none).
func (p Provider) DataSchema() *DataSchema {
	if p.Module == nil {
		return nil
	}
	return p.Module.Data
}

// KeyLimit is the longest apiKey the row's module takes (def when it sets none).
func (p Provider) KeyLimit(def int) int {
	if p.Module == nil || p.Module.MaxKey == 0 {
		return def
	}
	return p.Module.MaxKey
}
