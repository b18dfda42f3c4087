package providers

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// CredentialImport is where a provider's own CLI keeps its login and how to
// read it: `omniroute import <Source>`, POST /api/providers/import and the
// dashboard's import card list and run the catalogue's imports
// (Catalog.Imports) without naming a CLI. The CLI's file is only read.
type CredentialImport struct {
	// Source is the import's word (`omniroute import <Source>`); the
	// module's row has it as OAuth.ImportSource, the key its connections
	// are found by.
	Source string
	// Label names the CLI ("Claude Code"): the import card's choice and
	// the first words of an imported connection's name.
	Label string
	// File is the CLI's credential file relative to the user's home,
	// slash-separated (".codex/auth.json"): DefaultPath.
	File string
	// Parse reads the login out of the file (a *ImportError when it cannot).
	// A login without tokens is refused by the caller.
	Parse func(f CredentialFile) (CLILogin, error)
}

// CredentialFile is a CLI's credential file as read for Parse.
type CredentialFile struct {
	// Raw is the file's content; Path its absolute path.
	Raw  []byte
	Path string
	// ReadBeside reads another file of the CLI's (its account file next
	// to the credentials), read only and bounded like Raw.
	ReadBeside func(path string) ([]byte, error)
}

// CLILogin is one login as a CLI's file holds it. The tokens are secrets:
// never logged, never returned by the API.
type CLILogin struct {
	AccessToken, RefreshToken string
	// ExpiresAt is when AccessToken stops working (zero: unknown).
	ExpiresAt time.Time
	// AccountID, Email, OrganizationUUID and Plan describe the account
	// ("" : unknown).
	AccountID, Email, OrganizationUUID, Plan string
}

// ImportError is a file Parse cannot read a login from; Why completes
// "the <source> credential file cannot be imported: …".
type ImportError struct{ Why string }

func (e *ImportError) Error() string { return e.Why }

// DefaultPath is the CLI's credential file under home.
func (ci CredentialImport) DefaultPath(home string) string {
	return filepath.Join(home, filepath.FromSlash(ci.File))
}

// PathHint is the default file as a user types it ("~/.codex/auth.json").
func (ci CredentialImport) PathHint() string { return path.Join("~", ci.File) }

// Imports are the modules' credential imports, sorted by Source.
func (c *Catalog) Imports() []CredentialImport {
	var out []CredentialImport
	for _, m := range c.modules {
		if m.Import != nil {
			out = append(out, *m.Import)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

// Import finds the credential import of source.
func (c *Catalog) Import(source string) (CredentialImport, bool) {
	for _, ci := range c.Imports() {
		if ci.Source == source {
			return ci, true
		}
	}
	return CredentialImport{}, false
}

// ImportSources are the imports' words, sorted.
func (c *Catalog) ImportSources() []string {
	var out []string
	for _, ci := range c.Imports() {
		out = append(out, ci.Source)
	}
	return out
}

// JSONFile parses a credential file that must be a JSON document.
func JSONFile(raw []byte) (gjson.Result, error) {
	if !gjson.ValidBytes(raw) {
		return gjson.Result{}, &ImportError{Why: "it is not JSON"}
	}
	return gjson.ParseBytes(raw), nil
}

// JWTClaims decodes a JWT's payload without verifying it (the token came
// from the user's own CLI file; only display and expiry hints are read).
func JWTClaims(tok string) gjson.Result {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return gjson.Result{}
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil || !json.Valid(b) {
		return gjson.Result{}
	}
	return gjson.ParseBytes(b)
}

// Beside reads a file next to f's through ReadBeside (an error when unset).
func (f CredentialFile) Beside(path string) ([]byte, error) {
	if f.ReadBeside == nil {
		return nil, errors.New("no file beside the credentials can be read")
	}
	return f.ReadBeside(path)
}
