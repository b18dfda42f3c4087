package oauth

import "omniroute/backend/providers"

// SignedIn is the Login a provider module's sign-in gave (LoginFlow.Finish):
// what Upsert stores for row p, found again by its login source.
func SignedIn(p providers.Provider, t providers.Tokens) Login {
	l := Login{AccessToken: t.Access, RefreshToken: t.Refresh, ExpiresAt: t.ExpiresAt, AccountID: t.AccountID,
		Username: t.Username, Endpoint: t.Endpoint}
	if p.OAuth != nil {
		l.Source = p.OAuth.ImportSource
	}
	return l
}
