// Package oauth brings subscription logins into OmniRoute and keeps them
// alive: it reads the credential files the providers' own CLIs write (each
// provider module's Import hook says where and how) without ever changing
// them, creates or updates the matching OAuth connection (secrets sealed
// like every other credential), and refreshes access tokens before they expire, single-flight per connection,
// persisting each new token atomically.
package oauth

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
)

// maxCredFile bounds a credential file read.
const maxCredFile = 1 << 20

// Login is one CLI login as read from its credential file. Tokens are secrets:
// never logged, never returned by the API.
type Login struct {
	Source           string
	AccessToken      string
	RefreshToken     string
	ExpiresAt        time.Time // zero: unknown
	AccountID        string
	Email            string
	OrganizationUUID string
	Plan             string
	// Username is the account's login name where the provider has one (GitHub).
	Username string
	// Endpoint is the base URL the login's token exchange named (a module's
	// sign-in, providers.Tokens.Endpoint); "" keeps the provider's.
	Endpoint string
}

// Sources lists the catalogue's import sources (its modules' Import hooks).
func Sources(cat *providers.Catalog) []string { return cat.ImportSources() }

// DefaultPath is where a source's CLI keeps its login under home.
func DefaultPath(cat *providers.Catalog, source, home string) (string, error) {
	ci, ok := cat.Import(source)
	if !ok {
		return "", errUnknownSource(cat, source)
	}
	return ci.DefaultPath(home), nil
}

func errUnknownSource(cat *providers.Catalog, source string) error {
	if len(source) > 40 {
		source = source[:40]
	}
	return errs.New(errs.Invalid, "UNKNOWN_IMPORT_SOURCE", "unknown import source %q; use %s", source, SourceList(cat)).WithParam("source")
}

// SourceList is the import sources for a message: "a, b or c".
func SourceList(cat *providers.Catalog) string {
	s := cat.ImportSources()
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ReadLogin reads a source's credential file at path (read only) with its
// module's parser (providers.CredentialImport). A missing file is
// CREDENTIALS_NOT_FOUND (404); a file without a usable login is
// INVALID_CREDENTIALS_FILE (400).
func ReadLogin(cat *providers.Catalog, source, path string) (Login, error) {
	ci, ok := cat.Import(source)
	if !ok {
		return Login{}, errUnknownSource(cat, source)
	}
	if !filepath.IsAbs(path) {
		return Login{}, errs.New(errs.Invalid, "INVALID_PATH", "path must be absolute").WithParam("path")
	}
	raw, err := readSmall(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Login{}, errs.New(errs.NotFound, "CREDENTIALS_NOT_FOUND", "no %s login at %s; sign in with the CLI first or give its path", source, path)
		}
		return Login{}, errs.New(errs.Invalid, "INVALID_CREDENTIALS_FILE", "cannot read %s: %s", path, cleanErr(err)).WithParam("path")
	}
	cl, err := ci.Parse(providers.CredentialFile{Raw: raw, Path: path, ReadBeside: readSmall})
	if err != nil {
		why := "it holds no login"
		var ie *providers.ImportError
		if errors.As(err, &ie) {
			why = ie.Why
		}
		return Login{}, invalidFile(source, why)
	}
	l := Login{Source: source, AccessToken: cl.AccessToken, RefreshToken: cl.RefreshToken, ExpiresAt: cl.ExpiresAt,
		AccountID: cl.AccountID, Email: cl.Email, OrganizationUUID: cl.OrganizationUUID, Plan: cl.Plan}
	if l.AccessToken == "" && l.RefreshToken == "" {
		return Login{}, invalidFile(source, "it holds no OAuth tokens")
	}
	return l, nil
}

func invalidFile(source, why string) error {
	return errs.New(errs.Invalid, "INVALID_CREDENTIALS_FILE", "the %s credential file cannot be imported: %s", source, why).WithParam("path")
}

func cleanErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCredFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCredFile {
		return nil, errors.New("file too large")
	}
	return b, nil
}
