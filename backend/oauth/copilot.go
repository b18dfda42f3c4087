package oauth

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

// SourceCopilot is the login source of GitHub Copilot connections: a GitHub
// device login (`omniroute login copilot` or the dashboard), not a CLI file.
const SourceCopilot = "github-copilot"

// GitHub device flow (RFC 8628 as GitHub serves it) and Copilot token
// exchange limits.
const (
	// defaultDeviceInterval is the polling interval when GitHub names none.
	defaultDeviceInterval = 5 * time.Second
	// slowDownStep is what a slow_down answer adds to the interval.
	slowDownStep = 5 * time.Second
	// defaultDeviceLifetime is a device code's life when GitHub names none.
	defaultDeviceLifetime = 15 * time.Minute
	// maxDeviceLifetime caps the life GitHub names: a pending login holds
	// one of the few login slots until it expires.
	maxDeviceLifetime = 30 * time.Minute
	// maxDeviceInterval caps the polling interval GitHub names.
	maxDeviceInterval = time.Minute
	// maxGitHubBody bounds a GitHub answer read.
	maxGitHubBody = 1 << 20
)

// Device is a started device login. DeviceCode is a secret (it redeems the
// login): never logged or returned by the API.
type Device struct {
	DeviceCode      string
	UserCode        string
	VerificationURI string
	ExpiresAt       time.Time
	Interval        time.Duration
}

// Device poll outcomes other than a token, as GitHub names them.
const (
	DevicePending  = "authorization_pending"
	DeviceSlowDown = "slow_down"
	DeviceExpired  = "expired_token"
	DeviceDenied   = "access_denied"
)

// DeviceError is a device poll that gave no token: Code is GitHub's error
// (DevicePending, DeviceSlowDown, DeviceExpired, DeviceDenied or another),
// Interval the new polling interval GitHub asked for (slow_down), if any.
type DeviceError struct {
	Code     string
	Interval time.Duration
}

func (e *DeviceError) Error() string { return "device login: " + e.Code }

// Terminal reports whether polling again cannot succeed.
func (e *DeviceError) Terminal() bool { return e.Code != DevicePending && e.Code != DeviceSlowDown }

// githubPost posts fields as a form and reads the JSON answer (GitHub's
// device flow endpoints answer JSON when asked with Accept).
func githubPost(ctx context.Context, client *http.Client, endpoint string, fields url.Values) (int, gjson.Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(fields.Encode()))
	if err != nil {
		return 0, gjson.Result{}, errs.New(errs.Internal, "GITHUB_URL_INVALID", "the GitHub login URL is invalid")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", providers.CopilotUserAgent)
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, gjson.Result{}, ctx.Err()
		}
		return 0, gjson.Result{}, errs.New(errs.Upstream, "GITHUB_UNREACHABLE", "GitHub's login endpoint is unreachable")
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxGitHubBody))
	if !gjson.ValidBytes(raw) {
		return resp.StatusCode, gjson.Result{}, errs.New(errs.Upstream, "GITHUB_BAD_ANSWER", "GitHub's login endpoint answered HTTP %d without JSON", resp.StatusCode)
	}
	return resp.StatusCode, gjson.ParseBytes(raw), nil
}

// StartDevice asks GitHub for a device code (POST /login/device/code with the
// Copilot client id and scope): the user enters UserCode at VerificationURI.
func StartDevice(ctx context.Context, client *http.Client, o providers.OAuth, now time.Time) (Device, error) {
	status, body, err := githubPost(ctx, client, o.DeviceCodeURL, url.Values{"client_id": {o.ClientID}, "scope": {o.Scope}})
	if err != nil {
		return Device{}, err
	}
	d := Device{DeviceCode: body.Get("device_code").String(), UserCode: body.Get("user_code").String(),
		VerificationURI: body.Get("verification_uri").String()}
	if status != http.StatusOK || d.DeviceCode == "" || d.UserCode == "" || d.VerificationURI == "" {
		return Device{}, errs.New(errs.Upstream, "GITHUB_DEVICE_CODE_FAILED", "GitHub refused the device login (HTTP %d%s)", status,
			codeSuffix(safeCode(body.Get("error").String())))
	}
	if !SafeVerificationURI(d.VerificationURI) {
		// It becomes a link in the dashboard: a javascript: or data: URL
		// would run in the gateway's origin.
		return Device{}, errs.New(errs.Upstream, "GITHUB_DEVICE_CODE_FAILED", "GitHub's device login named a verification page that is not an https URL")
	}
	d.Interval = defaultDeviceInterval
	if v := body.Get("interval"); v.Exists() {
		d.Interval = time.Duration(min(max(v.Int(), 1), int64(maxDeviceInterval/time.Second))) * time.Second
	}
	life := defaultDeviceLifetime
	if v := body.Get("expires_in").Int(); v > 0 {
		life = time.Duration(min(v, int64(maxDeviceLifetime/time.Second))) * time.Second
	}
	d.ExpiresAt = now.Add(life)
	return d, nil
}

// SafeVerificationURI reports whether a device login's verification page
// may be shown as a link: an absolute https URL (plain http only for a
// loopback host, a local test double), without credentials.
func SafeVerificationURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || len(s) > 2048 {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		return h == "127.0.0.1" || h == "localhost" || h == "::1"
	}
	return false
}

// PollDevice asks GitHub once whether the user approved the device code
// (POST /login/oauth/access_token with the device_code grant). It returns
// the GitHub OAuth token, or a *DeviceError saying why there is none yet.
func PollDevice(ctx context.Context, client *http.Client, o providers.OAuth, deviceCode string) (string, error) {
	_, body, err := githubPost(ctx, client, o.AccessTokenURL, url.Values{"client_id": {o.ClientID}, "device_code": {deviceCode},
		"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}})
	if err != nil {
		return "", err
	}
	if tok := body.Get("access_token").String(); tok != "" {
		return tok, nil
	}
	code := safeCode(body.Get("error").String())
	if code == "" {
		code = "unknown_error"
	}
	de := &DeviceError{Code: code}
	if v := body.Get("interval").Int(); v > 0 {
		de.Interval = time.Duration(min(v, int64(maxDeviceInterval/time.Second))) * time.Second
	}
	return "", de
}

// NextInterval is the polling interval after a poll answered e.
func NextInterval(cur time.Duration, e *DeviceError) time.Duration {
	if e == nil || e.Code != DeviceSlowDown {
		return cur
	}
	if e.Interval > cur {
		return e.Interval
	}
	return cur + slowDownStep
}

// CopilotToken is the Copilot token exchange's answer.
type CopilotToken struct {
	// Token is the short-lived bearer of the chat API (a secret).
	Token string
	// ExpiresAt is when Token stops working.
	ExpiresAt time.Time
	// Endpoint is the chat API's base URL for this account (endpoints.api; "" when not named).
	Endpoint string
}

// ExchangeCopilot trades the GitHub token for a Copilot token (GET TokenURL
// with "Authorization: token …"). A 401 is a revoked GitHub login; a 403 or
// 404 is an account without a Copilot seat (Code "copilot_not_entitled").
func ExchangeCopilot(ctx context.Context, client *http.Client, o providers.OAuth, githubToken string, now time.Time) (CopilotToken, error) {
	if o.TokenURL == "" {
		return CopilotToken{}, &RefreshError{msg: "no Copilot token endpoint is configured"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.TokenURL, nil)
	if err != nil {
		return CopilotToken{}, &RefreshError{msg: "the Copilot token endpoint URL is invalid"}
	}
	req.Header.Set("Authorization", "token "+githubToken)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", providers.CopilotUserAgent)
	req.Header.Set("Editor-Version", providers.CopilotEditorVersion)
	req.Header.Set("Editor-Plugin-Version", providers.CopilotPluginVersion)
	req.Header.Set("X-Github-Api-Version", providers.CopilotAPIVersion)
	resp, err := client.Do(req)
	if err != nil {
		return CopilotToken{}, &RefreshError{msg: "the Copilot token endpoint is unreachable"}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxGitHubBody))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return CopilotToken{}, &RefreshError{Status: resp.StatusCode, Code: "bad_credentials",
			msg: "GitHub refused the login (HTTP 401): sign in again with `omniroute login copilot`"}
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound:
		return CopilotToken{}, &RefreshError{Status: resp.StatusCode, Code: "copilot_not_entitled",
			msg: fmt.Sprintf("this GitHub account has no Copilot access (HTTP %d)", resp.StatusCode)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return CopilotToken{}, &RefreshError{Status: resp.StatusCode,
			msg: fmt.Sprintf("the Copilot token exchange failed (HTTP %d)", resp.StatusCode)}
	}
	t := CopilotToken{Token: gjson.GetBytes(raw, "token").String(), Endpoint: strings.TrimRight(gjson.GetBytes(raw, "endpoints.api").String(), "/")}
	if t.Token == "" {
		return CopilotToken{}, &RefreshError{Status: resp.StatusCode, msg: "the Copilot token exchange answered without a token"}
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
		t.ExpiresAt = now.Add(time.Duration(gjson.GetBytes(raw, "refresh_in").Int()) * time.Second)
	default:
		t.ExpiresAt = now.Add(25 * time.Minute)
	}
	return t, nil
}

// GitHubUser names the account of a GitHub token (GET UserURL): its numeric
// id and login. Best effort: ("", "") when GitHub does not say.
func GitHubUser(ctx context.Context, client *http.Client, o providers.OAuth, githubToken string) (id, login string) {
	if o.UserURL == "" {
		return "", ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.UserURL, nil)
	if err != nil {
		return "", ""
	}
	req.Header.Set("Authorization", "token "+githubToken)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", providers.CopilotUserAgent)
	resp, err := client.Do(req)
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

// CopilotLogin finishes a device login: the GitHub token is exchanged for a
// first Copilot token (which proves the account has a seat and names its
// endpoint) and the account is named. The Login it returns is what Upsert
// stores: the Copilot token as access token, the GitHub token as refresh
// token, the endpoint as Endpoint.
func CopilotLogin(ctx context.Context, client *http.Client, o providers.OAuth, githubToken string, now time.Time) (Login, error) {
	ct, err := ExchangeCopilot(ctx, client, o, githubToken, now)
	if err != nil {
		var re *RefreshError
		if errors.As(err, &re) && re.Code == "copilot_not_entitled" {
			return Login{}, errs.New(errs.Permission, "COPILOT_NOT_ENTITLED", "the GitHub account signed in but has no GitHub Copilot access")
		}
		return Login{}, errs.New(errs.Upstream, "COPILOT_TOKEN_FAILED", "%s", err.Error())
	}
	id, login := GitHubUser(ctx, client, o, githubToken)
	return Login{Source: SourceCopilot, AccessToken: ct.Token, RefreshToken: githubToken, ExpiresAt: ct.ExpiresAt,
		AccountID: id, Username: login, Endpoint: ct.Endpoint}, nil
}
