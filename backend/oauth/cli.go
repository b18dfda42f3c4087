// Package oauth brings subscription logins into OmniRoute and keeps them
// alive: it reads the credential files the providers' own CLIs write (Claude
// Code, Codex, Gemini CLI) without ever changing them, creates or updates the
// matching OAuth connection (secrets sealed like every other credential), and
// refreshes access tokens before they expire, single-flight per connection,
// persisting each new token atomically.
package oauth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/errs"
)

// Import sources: the CLIs whose logins can be imported.
const (
	SourceClaudeCode = "claude-code"
	SourceCodex      = "codex"
	SourceGeminiCLI  = "gemini-cli"
)

// Sources lists the import sources.
func Sources() []string { return []string{SourceClaudeCode, SourceCodex, SourceGeminiCLI} }

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

// DefaultPath is where a source's CLI keeps its login under home.
func DefaultPath(source, home string) (string, error) {
	switch source {
	case SourceClaudeCode:
		return filepath.Join(home, ".claude", ".credentials.json"), nil
	case SourceCodex:
		return filepath.Join(home, ".codex", "auth.json"), nil
	case SourceGeminiCLI:
		return filepath.Join(home, ".gemini", "oauth_creds.json"), nil
	}
	return "", errUnknownSource(source)
}

func errUnknownSource(source string) error {
	if len(source) > 40 {
		source = source[:40]
	}
	return errs.New(errs.Invalid, "UNKNOWN_IMPORT_SOURCE", "unknown import source %q; use claude-code, codex or gemini-cli", source).WithParam("source")
}

// ReadLogin reads a source's credential file at path (read only). A missing
// file is CREDENTIALS_NOT_FOUND (404); a file without a usable login is
// INVALID_CREDENTIALS_FILE (400).
func ReadLogin(source, path string) (Login, error) {
	if _, err := DefaultPath(source, ""); err != nil {
		return Login{}, err
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
	if !gjson.ValidBytes(raw) {
		return Login{}, invalidFile(source, "it is not JSON")
	}
	root := gjson.ParseBytes(raw)
	var l Login
	switch source {
	case SourceClaudeCode:
		l = claudeLogin(root, path)
	case SourceCodex:
		l = codexLogin(root)
	case SourceGeminiCLI:
		l = geminiLogin(root, path)
	}
	l.Source = source
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

// claudeLogin reads ~/.claude/.credentials.json (claudeAiOauth) and, when it
// is there, the account of ~/.claude.json (oauthAccount) beside the .claude dir.
func claudeLogin(root gjson.Result, path string) Login {
	o := root.Get("claudeAiOauth")
	l := Login{AccessToken: o.Get("accessToken").String(), RefreshToken: o.Get("refreshToken").String(),
		Plan: o.Get("subscriptionType").String()}
	if ms := o.Get("expiresAt").Int(); ms > 0 {
		l.ExpiresAt = time.UnixMilli(ms)
	}
	if b, err := readSmall(filepath.Join(filepath.Dir(filepath.Dir(path)), ".claude.json")); err == nil && gjson.ValidBytes(b) {
		acc := gjson.GetBytes(b, "oauthAccount")
		l.AccountID = acc.Get("accountUuid").String()
		l.Email = acc.Get("emailAddress").String()
		l.OrganizationUUID = acc.Get("organizationUuid").String()
	}
	return l
}

// codexLogin reads ~/.codex/auth.json (tokens): the expiry and e-mail come
// from the JWT claims.
func codexLogin(root gjson.Result) Login {
	t := root.Get("tokens")
	l := Login{AccessToken: t.Get("access_token").String(), RefreshToken: t.Get("refresh_token").String(),
		AccountID: t.Get("account_id").String()}
	if exp := jwtClaims(l.AccessToken).Get("exp").Int(); exp > 0 {
		l.ExpiresAt = time.Unix(exp, 0)
	}
	id := jwtClaims(t.Get("id_token").String())
	l.Email = id.Get("email").String()
	auth := id.Get(`https://api\.openai\.com/auth`)
	if l.AccountID == "" {
		l.AccountID = auth.Get("chatgpt_account_id").String()
	}
	l.Plan = auth.Get("chatgpt_plan_type").String()
	return l
}

// geminiLogin reads ~/.gemini/oauth_creds.json (Google's token shape:
// access_token, refresh_token, expiry_date in ms, id_token); the account is
// the id token's sub and email, else the e-mail the CLI keeps as "active" in
// google_accounts.json beside it.
func geminiLogin(root gjson.Result, path string) Login {
	l := Login{AccessToken: root.Get("access_token").String(), RefreshToken: root.Get("refresh_token").String()}
	if ms := root.Get("expiry_date").Int(); ms > 0 {
		l.ExpiresAt = time.UnixMilli(ms)
	}
	id := jwtClaims(root.Get("id_token").String())
	l.AccountID, l.Email = id.Get("sub").String(), id.Get("email").String()
	if l.Email == "" {
		if b, err := readSmall(filepath.Join(filepath.Dir(path), "google_accounts.json")); err == nil && gjson.ValidBytes(b) {
			l.Email = gjson.GetBytes(b, "active").String()
		}
	}
	return l
}

// jwtClaims decodes a JWT's payload without verifying it (the token came from
// the user's own CLI file; only display and expiry hints are read).
func jwtClaims(tok string) gjson.Result {
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
