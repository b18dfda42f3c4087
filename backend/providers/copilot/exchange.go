package copilot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
)

// notEntitled is the exchange's code for an account without a Copilot seat.
const notEntitled = "copilot_not_entitled"

// Exchange trades the GitHub token for a Copilot token (GET TokenURL with
// "Authorization: token …"): the short-lived bearer of the chat API, when
// it stops working and the chat API's base URL for this account
// (endpoints.api; "" when not named). A refusal is a *providers.TokenError:
// a 401 is a revoked GitHub login; a 403 or 404 is an account without a
// Copilot seat (Code "copilot_not_entitled").
func Exchange(ctx context.Context, x providers.LoginCall, githubToken string) (providers.Tokens, error) {
	o := x.OAuth
	if o.TokenURL == "" {
		return providers.Tokens{}, &providers.TokenError{Message: "no Copilot token endpoint is configured"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.TokenURL, nil)
	if err != nil {
		return providers.Tokens{}, &providers.TokenError{Message: "the Copilot token endpoint URL is invalid"}
	}
	req.Header.Set("Authorization", "token "+githubToken)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Editor-Version", EditorVersion)
	req.Header.Set("Editor-Plugin-Version", PluginVersion)
	req.Header.Set("X-Github-Api-Version", APIVersion)
	resp, err := x.Client.Do(req)
	if err != nil {
		return providers.Tokens{}, &providers.TokenError{Message: "the Copilot token endpoint is unreachable"}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxGitHubBody))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return providers.Tokens{}, &providers.TokenError{Status: resp.StatusCode, Code: "bad_credentials",
			Message: "GitHub refused the login (HTTP 401): sign in again with `omniroute login copilot`"}
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound:
		return providers.Tokens{}, &providers.TokenError{Status: resp.StatusCode, Code: notEntitled,
			Message: fmt.Sprintf("this GitHub account has no Copilot access (HTTP %d)", resp.StatusCode)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return providers.Tokens{}, &providers.TokenError{Status: resp.StatusCode,
			Message: fmt.Sprintf("the Copilot token exchange failed (HTTP %d)", resp.StatusCode)}
	}
	t := providers.Tokens{Access: gjson.GetBytes(raw, "token").String(), Refresh: githubToken,
		Endpoint: strings.TrimRight(gjson.GetBytes(raw, "endpoints.api").String(), "/")}
	if t.Access == "" {
		return providers.Tokens{}, &providers.TokenError{Status: resp.StatusCode, Message: "the Copilot token exchange answered without a token"}
	}
	if t.Endpoint != "" {
		if u, err := url.Parse(t.Endpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			t.Endpoint = ""
		}
	}
	switch exp := gjson.GetBytes(raw, "expires_at").Int(); {
	case exp > 0:
		t.ExpiresAt = time.Unix(exp, 0)
	case gjson.GetBytes(raw, "refresh_in").Int() > 0:
		t.ExpiresAt = x.Now.Add(time.Duration(gjson.GetBytes(raw, "refresh_in").Int()) * time.Second)
	default:
		t.ExpiresAt = x.Now.Add(25 * time.Minute)
	}
	return t, nil
}

// Refresh is GitHub Copilot's "refresh": the stored GitHub token (the
// refresh token) buys a new short-lived Copilot token; the GitHub token
// itself stays.
func Refresh(ctx context.Context, x providers.LoginCall, githubToken string) (providers.Tokens, error) {
	return Exchange(ctx, x, githubToken)
}

// user names the account of a GitHub token (GET UserURL): its numeric id
// and login. Best effort: ("", "") when GitHub does not say.
func user(ctx context.Context, x providers.LoginCall, githubToken string) (id, login string) {
	if x.OAuth.UserURL == "" {
		return "", ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, x.OAuth.UserURL, nil)
	if err != nil {
		return "", ""
	}
	req.Header.Set("Authorization", "token "+githubToken)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := x.Client.Do(req)
	if err != nil {
		return "", ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxGitHubBody))
	if resp.StatusCode != http.StatusOK {
		return "", ""
	}
	return gjson.GetBytes(raw, "id").String(), gjson.GetBytes(raw, "login").String()
}

// Finish completes a device login: the GitHub token is exchanged for a
// first Copilot token (which proves the account has a seat and names its
// endpoint) and the account is named. The connection stores the Copilot
// token as access token, the GitHub token as refresh token, the endpoint
// as its base URL.
func Finish(ctx context.Context, x providers.LoginCall, githubToken string) (providers.Tokens, error) {
	t, err := Exchange(ctx, x, githubToken)
	if err != nil {
		var te *providers.TokenError
		if errors.As(err, &te) && te.Code == notEntitled {
			return providers.Tokens{}, errs.New(errs.Permission, "COPILOT_NOT_ENTITLED", "the GitHub account signed in but has no GitHub Copilot access")
		}
		return providers.Tokens{}, errs.New(errs.Upstream, "COPILOT_TOKEN_FAILED", "%s", err.Error())
	}
	t.AccountID, t.Username = user(ctx, x, githubToken)
	return t, nil
}
