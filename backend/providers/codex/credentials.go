package codex

import (
	"time"

	"omniroute/backend/providers"
)

// credentialImport reads the Codex CLI's login, ~/.codex/auth.json
// (tokens): the expiry and e-mail come from the JWT claims.
func credentialImport() *providers.CredentialImport {
	return &providers.CredentialImport{Source: Source, Label: "Codex", File: ".codex/auth.json", Parse: parseCredentials}
}

func parseCredentials(f providers.CredentialFile) (providers.CLILogin, error) {
	root, err := providers.JSONFile(f.Raw)
	if err != nil {
		return providers.CLILogin{}, err
	}
	t := root.Get("tokens")
	l := providers.CLILogin{AccessToken: t.Get("access_token").String(), RefreshToken: t.Get("refresh_token").String(),
		AccountID: t.Get("account_id").String()}
	if exp := providers.JWTClaims(l.AccessToken).Get("exp").Int(); exp > 0 {
		l.ExpiresAt = time.Unix(exp, 0)
	}
	id := providers.JWTClaims(t.Get("id_token").String())
	l.Email = id.Get("email").String()
	auth := id.Get(`https://api\.openai\.com/auth`)
	if l.AccountID == "" {
		l.AccountID = auth.Get("chatgpt_account_id").String()
	}
	l.Plan = auth.Get("chatgpt_plan_type").String()
	return l, nil
}
