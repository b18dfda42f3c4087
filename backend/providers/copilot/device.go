package copilot

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
)

// GitHub device flow (RFC 8628 as GitHub serves it) and Copilot token
// exchange limits.
const (
	// defaultDeviceInterval is the polling interval when GitHub names none.
	defaultDeviceInterval = 5 * time.Second
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

// githubPost posts fields as a form and reads the JSON answer (GitHub's
// device flow endpoints answer JSON when asked with Accept).
func githubPost(ctx context.Context, client providers.Doer, endpoint string, fields url.Values) (int, gjson.Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(fields.Encode()))
	if err != nil {
		return 0, gjson.Result{}, errs.New(errs.Internal, "GITHUB_URL_INVALID", "the GitHub login URL is invalid")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
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
func StartDevice(ctx context.Context, x providers.LoginCall) (providers.Device, error) {
	o := x.OAuth
	status, body, err := githubPost(ctx, x.Client, o.DeviceCodeURL, url.Values{"client_id": {o.ClientID}, "scope": {o.Scope}})
	if err != nil {
		return providers.Device{}, err
	}
	d := providers.Device{DeviceCode: body.Get("device_code").String(), UserCode: body.Get("user_code").String(),
		VerificationURI: body.Get("verification_uri").String()}
	if status != http.StatusOK || d.DeviceCode == "" || d.UserCode == "" || d.VerificationURI == "" {
		return providers.Device{}, errs.New(errs.Upstream, "GITHUB_DEVICE_CODE_FAILED", "GitHub refused the device login (HTTP %d%s)", status,
			providers.CodeSuffix(providers.SafeOAuthCode(body.Get("error").String())))
	}
	if !providers.SafeVerificationURI(d.VerificationURI) {
		// It becomes a link in the dashboard: a javascript: or data: URL
		// would run in the gateway's origin.
		return providers.Device{}, errs.New(errs.Upstream, "GITHUB_DEVICE_CODE_FAILED", "GitHub's device login named a verification page that is not an https URL")
	}
	d.Interval = defaultDeviceInterval
	if v := body.Get("interval"); v.Exists() {
		d.Interval = time.Duration(min(max(v.Int(), 1), int64(maxDeviceInterval/time.Second))) * time.Second
	}
	life := defaultDeviceLifetime
	if v := body.Get("expires_in").Int(); v > 0 {
		life = time.Duration(min(v, int64(maxDeviceLifetime/time.Second))) * time.Second
	}
	d.ExpiresAt = x.Now.Add(life)
	return d, nil
}

// PollDevice asks GitHub once whether the user approved the device code
// (POST /login/oauth/access_token with the device_code grant). It returns
// the GitHub OAuth token, or a *providers.DeviceError saying why there is none yet.
func PollDevice(ctx context.Context, x providers.LoginCall, deviceCode string) (string, error) {
	o := x.OAuth
	_, body, err := githubPost(ctx, x.Client, o.AccessTokenURL, url.Values{"client_id": {o.ClientID}, "device_code": {deviceCode},
		"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}})
	if err != nil {
		return "", err
	}
	if tok := body.Get("access_token").String(); tok != "" {
		return tok, nil
	}
	code := providers.SafeOAuthCode(body.Get("error").String())
	if code == "" {
		code = "unknown_error"
	}
	de := &providers.DeviceError{Code: code}
	if v := body.Get("interval").Int(); v > 0 {
		de.Interval = time.Duration(min(v, int64(maxDeviceInterval/time.Second))) * time.Second
	}
	return "", de
}
