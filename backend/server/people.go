package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"omniroute/backend/api"
	"omniroute/backend/clock"
	"omniroute/backend/secrets"
	"omniroute/backend/sso"
	"omniroute/backend/store"
)

// publishInstanceToken stores this instance's management token (hashed) in
// the shared database, so that every instance of a team server accepts it: a
// dashboard behind a load balancer reaches any of them with one token.
func publishInstanceToken(st *store.Store, name, token string, nowMs int64) error {
	t := store.ManagementToken{ID: "instance:" + name, Name: "instance " + name, TokenHash: secrets.Hash(token),
		TokenPrefix: token[:min(4, len(token))], Role: api.RoleAdmin, CreatedBy: "instance", CreatedAt: nowMs}
	return st.UpsertManagementToken(&t)
}

// ssoFromEnv builds the OpenID Connect client from OMNIROUTE_OIDC_* (nil when
// OMNIROUTE_OIDC_ISSUER is unset).
func ssoFromEnv(getenv func(string) string, baseURL string, clk clock.Clock) (*sso.Client, error) {
	issuer := strings.TrimSpace(getenv("OMNIROUTE_OIDC_ISSUER"))
	if issuer == "" {
		return nil, nil
	}
	roles, err := sso.ParseRoles(getenv("OMNIROUTE_OIDC_ROLES"), func(r string) bool {
		return r == api.RoleAdmin || r == api.RoleOperator || r == api.RoleViewer
	})
	if err != nil {
		return nil, fmt.Errorf("OMNIROUTE_OIDC_ROLES: %w", err)
	}
	def := strings.TrimSpace(getenv("OMNIROUTE_OIDC_DEFAULT_ROLE"))
	switch def {
	case "", "none":
		def = ""
	case api.RoleAdmin, api.RoleOperator, api.RoleViewer:
	default:
		return nil, fmt.Errorf("OMNIROUTE_OIDC_DEFAULT_ROLE %q: want admin, operator, viewer or none", def)
	}
	redirect := strings.TrimSpace(getenv("OMNIROUTE_OIDC_REDIRECT_URL"))
	if redirect == "" {
		redirect = strings.TrimRight(baseURL, "/") + "/api/oidc/callback"
	}
	c, err := sso.New(sso.Config{Issuer: issuer, ClientID: strings.TrimSpace(getenv("OMNIROUTE_OIDC_CLIENT_ID")),
		ClientSecret: getenv("OMNIROUTE_OIDC_CLIENT_SECRET"), RedirectURL: redirect, Roles: roles, DefaultRole: def,
		HTTPClient: &http.Client{Timeout: 10 * time.Second}, Now: clk.Now})
	if err != nil {
		return nil, fmt.Errorf("OMNIROUTE_OIDC_*: %w", err)
	}
	return c, nil
}
