package codeassist

import (
	"path/filepath"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
)

// Source is the `omniroute import` source reading the Gemini CLI's login
// (the row's id: the CLI's name).
const Source = "gemini-cli"

// credentialImport reads the Gemini CLI's login, ~/.gemini/oauth_creds.json
// (Google's token shape: access_token, refresh_token, expiry_date in ms,
// id_token); the account is the id token's sub and email, else the e-mail
// the CLI keeps as "active" in google_accounts.json beside it.
func credentialImport() *providers.CredentialImport {
	return &providers.CredentialImport{Source: Source, Label: "Gemini CLI", File: ".gemini/oauth_creds.json", Parse: parseCredentials}
}

func parseCredentials(f providers.CredentialFile) (providers.CLILogin, error) {
	root, err := providers.JSONFile(f.Raw)
	if err != nil {
		return providers.CLILogin{}, err
	}
	l := providers.CLILogin{AccessToken: root.Get("access_token").String(), RefreshToken: root.Get("refresh_token").String()}
	if ms := root.Get("expiry_date").Int(); ms > 0 {
		l.ExpiresAt = time.UnixMilli(ms)
	}
	id := providers.JWTClaims(root.Get("id_token").String())
	l.AccountID, l.Email = id.Get("sub").String(), id.Get("email").String()
	if l.Email == "" {
		if b, err := f.Beside(filepath.Join(filepath.Dir(f.Path), "google_accounts.json")); err == nil && gjson.ValidBytes(b) {
			l.Email = gjson.GetBytes(b, "active").String()
		}
	}
	return l, nil
}
