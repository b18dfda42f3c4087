package claude

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/resilience/wall"
)

// oauthBeta is the anthropic-beta a subscription token needs on these endpoints.
const oauthBeta = "oauth-2025-04-20"

// Program is the reset programme named by the usage endpoint and the claim.
const Program = "juniper_tide"

// resetTimeout bounds each reset call.
const resetTimeout = 15 * time.Second

// ResetClient speaks the limit reset endpoints of the connection's origin (the
// baseUrl without /v1): GET /api/oauth/usage?at_wall=1&skip_spend=1, then
// POST /api/organizations/{orgUUID}/reset_rate_limits {"program":"juniper_tide"}.
// The organisation is the connection's organizationUUID, else looked up
// (GET /api/claude_cli/bootstrap, then /api/oauth/profile).
type ResetClient struct {
	client    providers.Doer
	userAgent string
}

// NewResetClient returns a reset client over client.
func NewResetClient(client providers.Doer, userAgent string) *ResetClient {
	return &ResetClient{client: client, userAgent: userAgent}
}

// Origin is a connection's API origin: its baseUrl without a trailing /v1.
func Origin(baseURL string) string {
	return strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1")
}

// Claim runs the reset flow for t's organisation. Any failure (transport,
// non-2xx, unreadable body, no organisation) is ResultFailed; an arm other than
// an available reset is not_offered with the server's next_available_at.
func (c *ResetClient) Claim(ctx context.Context, t providers.Target) wall.ResetOutcome {
	failed := wall.ResetOutcome{Result: wall.ResultFailed}
	if c == nil {
		return failed
	}
	ctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	origin := Origin(t.BaseURL)
	org := t.Account.OrganizationUUID
	if org == "" {
		// A hand-added connection has no organisation: look it up first.
		if org = c.organization(ctx, t, origin); org == "" {
			return failed
		}
	}
	body, ok := c.call(ctx, t, http.MethodGet, origin+"/api/oauth/usage?at_wall=1&skip_spend=1", nil)
	if !ok {
		return failed
	}
	arm := gjson.GetBytes(body, Program)
	if arm.Get("arm").String() != "reset" || !arm.Get("available").Bool() {
		return wall.ResetOutcome{Result: wall.ResultNotOffered, NextAvailableAt: parseTime(arm.Get("next_available_at"))}
	}
	body, ok = c.call(ctx, t, http.MethodPost, origin+"/api/organizations/"+url.PathEscape(org)+"/reset_rate_limits",
		[]byte(`{"program":"`+Program+`"}`))
	if !ok {
		return failed
	}
	switch r := gjson.GetBytes(body, "result").String(); r {
	case wall.ResultReset, wall.ResultNotLimited, wall.ResultAlreadyUsed, wall.ResultNotOffered:
		return wall.ResetOutcome{Result: r, NextAvailableAt: parseTime(gjson.GetBytes(body, "next_available_at"))}
	}
	return failed
}

// organization looks the token's organisation up, as Claude Code does: its
// bootstrap (oauth_account.organization_uuid), else the OAuth profile
// (organization.uuid). "" when neither names one.
func (c *ResetClient) organization(ctx context.Context, t providers.Target, origin string) string {
	for _, q := range [...]struct{ path, field string }{
		{"/api/claude_cli/bootstrap", "oauth_account.organization_uuid"},
		{"/api/oauth/profile", "organization.uuid"},
	} {
		if body, ok := c.call(ctx, t, http.MethodGet, origin+q.path, nil); ok {
			if org := strings.TrimSpace(gjson.GetBytes(body, q.field).String()); org != "" {
				return org
			}
		}
	}
	return ""
}

func (c *ResetClient) call(ctx context.Context, t providers.Target, method, u string, body []byte) ([]byte, bool) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, false
	}
	req.Header.Set("Authorization", "Bearer "+t.Secret)
	req.Header.Set("anthropic-beta", oauthBeta)
	req.Header.Set("anthropic-version", anthropic.Version)
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 || !gjson.ValidBytes(b) {
		return nil, false
	}
	return b, true
}

// parseTime reads an RFC 3339 string or Unix seconds.
func parseTime(v gjson.Result) time.Time {
	switch v.Type {
	case gjson.Number:
		if v.Float() > 0 {
			return time.UnixMilli(int64(v.Float() * 1000))
		}
	case gjson.String:
		if t, err := time.Parse(time.RFC3339, v.Str); err == nil {
			return t
		}
	}
	return time.Time{}
}
