package claude

import (
	"path/filepath"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
)

// credentialImport reads Claude Code's login: ~/.claude/.credentials.json
// (claudeAiOauth) and, when it is there, the account of ~/.claude.json
// (oauthAccount) beside the .claude folder.
func credentialImport() *providers.CredentialImport {
	return &providers.CredentialImport{Source: Source, Label: "Claude Code", File: ".claude/.credentials.json", Parse: parseCredentials}
}

func parseCredentials(f providers.CredentialFile) (providers.CLILogin, error) {
	root, err := providers.JSONFile(f.Raw)
	if err != nil {
		return providers.CLILogin{}, err
	}
	o := root.Get("claudeAiOauth")
	l := providers.CLILogin{AccessToken: o.Get("accessToken").String(), RefreshToken: o.Get("refreshToken").String(),
		Plan: o.Get("subscriptionType").String()}
	if ms := o.Get("expiresAt").Int(); ms > 0 {
		l.ExpiresAt = time.UnixMilli(ms)
	}
	if b, err := f.Beside(filepath.Join(filepath.Dir(filepath.Dir(f.Path)), ".claude.json")); err == nil && gjson.ValidBytes(b) {
		acc := gjson.GetBytes(b, "oauthAccount")
		l.AccountID = acc.Get("accountUuid").String()
		l.Email = acc.Get("emailAddress").String()
		l.OrganizationUUID = acc.Get("organizationUuid").String()
	}
	return l, nil
}
