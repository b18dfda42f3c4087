package api

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/providers"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// connectionInput is the body of POST/PUT /api/providers; pointer fields are
// optional so a PUT changes only what it names.
type connectionInput struct {
	Provider             *string          `json:"provider"`
	Name                 *string          `json:"name"`
	AuthType             *string          `json:"authType"`
	APIKey               *string          `json:"apiKey"`
	AccessToken          *string          `json:"accessToken"`
	RefreshToken         *string          `json:"refreshToken"`
	ExpiresAt            *string          `json:"expiresAt"`
	BaseURL              *string          `json:"baseUrl"`
	Prefix               *string          `json:"prefix"`
	Priority             *int             `json:"priority"`
	IsActive             *bool            `json:"isActive"`
	MaxConcurrent        *int             `json:"maxConcurrent"`
	RateLimitProtection  *bool            `json:"rateLimitProtection"` // accepted, never changed here (POST /api/rate-limits does)
	RateLimitOverrides   *json.RawMessage `json:"rateLimitOverrides"`
	ProviderSpecificData *json.RawMessage `json:"providerSpecificData"`
	Models               *[]string        `json:"models"`
}

var prefixPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

func (a *API) listCatalog(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Category    string `json:"category"`
		Format      string `json:"format"`
		BaseURL     string `json:"baseUrl"`
		UserDefined bool   `json:"userDefined"`
		// Provider error rule and egress-bucket flags (docs/RULES.md).
		RuleFullText    bool `json:"ruleFullText"`
		HonorsRuleScope bool `json:"honorsRuleScope"`
		EgressBucketed  bool `json:"egressBucketed"`
	}
	var out []entry
	for _, p := range a.Catalog.All() {
		out = append(out, entry{p.ID, p.Name, string(p.Category), string(p.Format), p.BaseURL, p.UserDefined,
			p.RuleFullText, p.HonorsRuleScope, p.EgressBucketed})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"providers": out})
}

func (a *API) listConnections(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.Connections()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		out = append(out, a.connectionJSON(row))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"connections": out})
}

func (a *API) getConnection(w http.ResponseWriter, r *http.Request) {
	row, err := a.Store.Connection(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"connection": a.connectionJSON(row)})
}

func notFound(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errs.New(errs.NotFound, strings.ToUpper(what)+"_NOT_FOUND", "%s not found", what)
	}
	return err
}

func (a *API) createConnection(w http.ResponseWriter, r *http.Request) {
	var in connectionInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Provider == nil || strings.TrimSpace(*in.Provider) == "" {
		httpx.WriteError(w, errs.New(errs.Invalid, "PROVIDER_REQUIRED", "field \"provider\" is required").WithParam("provider"))
		return
	}
	p, ok := a.Catalog.Lookup(strings.TrimSpace(*in.Provider))
	if !ok {
		httpx.WriteError(w, errs.New(errs.Invalid, "UNKNOWN_PROVIDER", "unknown provider %q; see GET /api/providers/catalog", truncate(*in.Provider, 60)).WithParam("provider"))
		return
	}
	now := a.Clock.Now().UnixMilli()
	row := store.Connection{ID: secrets.RandomID(), Provider: p.ID, Name: p.Name, AuthType: "apikey",
		Priority: a.nextPriority(p.ID), IsActive: true, Models: "[]", ProviderSpecificData: "{}",
		RateLimitOverrides: "{}", TestStatus: "active", CreatedAt: now, UpdatedAt: now}
	if p.Category == providers.CategoryLocal {
		row.AuthType = "none"
	}
	if p.Category == providers.CategoryOAuth {
		row.AuthType = "oauth"
	}
	if err := a.applyConnectionInput(&row, in, p, true); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Store.CreateConnection(&row); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"connection": a.connectionJSON(row)})
}

func (a *API) nextPriority(provider string) int {
	rows, _ := a.Store.Connections()
	n := 1
	for _, r := range rows {
		if r.Provider == provider && r.Priority >= n {
			n = r.Priority + 1
		}
	}
	return n
}

func (a *API) updateConnection(w http.ResponseWriter, r *http.Request) {
	row, err := a.Store.Connection(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	var in connectionInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Provider != nil && !strings.EqualFold(strings.TrimSpace(*in.Provider), row.Provider) {
		httpx.WriteError(w, errs.New(errs.Invalid, "PROVIDER_IMMUTABLE", "a connection's provider cannot change; create a new connection").WithParam("provider"))
		return
	}
	p, _ := a.Catalog.Lookup(row.Provider)
	if err := a.applyConnectionInput(&row, in, p, false); err != nil {
		httpx.WriteError(w, err)
		return
	}
	row.UpdatedAt = a.Clock.Now().UnixMilli()
	if err := a.Store.SaveConnection(&row); err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"connection": a.connectionJSON(row)})
}

func (a *API) deleteConnection(w http.ResponseWriter, r *http.Request) {
	if err := a.Store.DeleteConnection(mux.Vars(r)["id"]); err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// applyConnectionInput validates in and writes it into row. New credentials
// clear a terminal state: that is the documented way out of banned/expired.
func (a *API) applyConnectionInput(row *store.Connection, in connectionInput, p providers.Provider, creating bool) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || len(name) > 100 {
			return errs.New(errs.Invalid, "INVALID_NAME", "name must be 1 to 100 characters").WithParam("name")
		}
		row.Name = name
	}
	if in.AuthType != nil {
		switch *in.AuthType {
		case "apikey", "oauth", "none":
			row.AuthType = *in.AuthType
		default:
			return errs.New(errs.Invalid, "INVALID_AUTH_TYPE", "authType must be apikey, oauth or none").WithParam("authType")
		}
	}
	newCreds := false
	if in.APIKey != nil {
		v := strings.TrimSpace(*in.APIKey)
		if len(v) > 4096 {
			return errs.New(errs.Invalid, "INVALID_API_KEY", "apiKey is too long").WithParam("apiKey")
		}
		sealed, err := a.Box.Seal(v)
		if err != nil {
			return err
		}
		row.APIKeyEnc, newCreds = sealed, true
	}
	if in.AccessToken != nil {
		sealed, err := a.Box.Seal(strings.TrimSpace(*in.AccessToken))
		if err != nil {
			return err
		}
		row.AccessTokenEnc, newCreds = sealed, true
	}
	if in.RefreshToken != nil {
		sealed, err := a.Box.Seal(strings.TrimSpace(*in.RefreshToken))
		if err != nil {
			return err
		}
		row.RefreshTokenEnc = sealed
	}
	if in.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339, *in.ExpiresAt)
		if err != nil {
			return errs.New(errs.Invalid, "INVALID_EXPIRES_AT", "expiresAt must be an RFC 3339 time").WithParam("expiresAt")
		}
		row.ExpiresAt = t.UnixMilli()
	}
	if in.BaseURL != nil {
		v := strings.TrimSpace(*in.BaseURL)
		if v != "" {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errs.New(errs.Invalid, "INVALID_BASE_URL", "baseUrl must be an http(s) URL such as https://api.example.com/v1").WithParam("baseUrl")
			}
			v = strings.TrimRight(v, "/")
		}
		row.BaseURL = v
	}
	if p.UserDefined && row.BaseURL == "" {
		return errs.New(errs.Invalid, "BASE_URL_REQUIRED", "baseUrl is required for %s connections", p.ID).WithParam("baseUrl")
	}
	if in.Prefix != nil {
		v := strings.ToLower(strings.TrimSpace(*in.Prefix))
		if v != "" {
			if !prefixPattern.MatchString(v) {
				return errs.New(errs.Invalid, "INVALID_PREFIX", "prefix must be 1-32 lowercase letters, digits, '-' or '_'").WithParam("prefix")
			}
			if _, clash := a.Catalog.Lookup(v); clash {
				return errs.New(errs.Invalid, "PREFIX_TAKEN", "prefix %q is a provider name", v).WithParam("prefix")
			}
			rows, _ := a.Store.Connections()
			for _, other := range rows {
				if other.ID != row.ID && other.Prefix == v {
					return errs.New(errs.Conflict, "PREFIX_TAKEN", "prefix %q is used by connection %q", v, other.Name).WithParam("prefix")
				}
			}
		}
		row.Prefix = v
	}
	if in.Priority != nil {
		if *in.Priority < 0 || *in.Priority > 1_000_000 {
			return errs.New(errs.Invalid, "INVALID_PRIORITY", "priority must be between 0 and 1000000").WithParam("priority")
		}
		row.Priority = *in.Priority
	}
	if in.IsActive != nil {
		row.IsActive = *in.IsActive
	}
	if in.MaxConcurrent != nil {
		v := *in.MaxConcurrent
		if v < 0 || v > 10000 {
			return errs.New(errs.Invalid, "INVALID_MAX_CONCURRENT", "maxConcurrent must be between 0 (no limit) and 10000").WithParam("maxConcurrent")
		}
		if v == 0 {
			row.MaxConcurrent = nil
		} else {
			row.MaxConcurrent = &v
		}
	}
	if in.RateLimitOverrides != nil {
		s, err := jsonObject(*in.RateLimitOverrides, "rateLimitOverrides")
		if err != nil {
			return err
		}
		row.RateLimitOverrides = s
	}
	if in.ProviderSpecificData != nil {
		s, err := jsonObject(*in.ProviderSpecificData, "providerSpecificData")
		if err != nil {
			return err
		}
		var psd struct {
			LocalAddress *string `json:"localAddress"`
		}
		_ = json.Unmarshal([]byte(s), &psd)
		if psd.LocalAddress != nil && *psd.LocalAddress != "" && net.ParseIP(strings.TrimSpace(*psd.LocalAddress)) == nil {
			return errs.New(errs.Invalid, "INVALID_LOCAL_ADDRESS", "providerSpecificData.localAddress must be an IP address of this machine").WithParam("providerSpecificData.localAddress")
		}
		row.ProviderSpecificData = s
	}
	if in.Models != nil {
		models := make([]string, 0, len(*in.Models))
		for _, m := range *in.Models {
			m = strings.TrimSpace(m)
			if m == "" || len(m) > 200 {
				return errs.New(errs.Invalid, "INVALID_MODELS", "models must be non-empty names of at most 200 characters").WithParam("models")
			}
			models = append(models, m)
		}
		b, _ := json.Marshal(models)
		row.Models = string(b)
	}
	if row.AuthType == "apikey" && row.APIKeyEnc == "" && p.Category != providers.CategoryLocal {
		return errs.New(errs.Invalid, "API_KEY_REQUIRED", "apiKey is required for an apikey connection").WithParam("apiKey")
	}
	if row.AuthType == "oauth" && row.AccessTokenEnc == "" && row.APIKeyEnc == "" {
		return errs.New(errs.Invalid, "ACCESS_TOKEN_REQUIRED", "accessToken is required for an oauth connection").WithParam("accessToken")
	}
	if newCreds && !creating {
		st := cooldown.ClearTerminal(routing.CooldownFromRow(*row))
		f := routing.CooldownFields(st)
		row.RateLimitedUntil, row.TestStatus, row.LastError, row.LastErrorType = f.RateLimitedUntil, f.TestStatus, f.LastError, f.LastErrorType
		row.LastErrorAt, row.ErrorCode, row.BackoffLevel, row.RejectStreak, row.ExpiredRetries = f.LastErrorAt, f.ErrorCode, f.BackoffLevel, f.RejectStreak, f.ExpiredRetries
	}
	return nil
}

func jsonObject(raw json.RawMessage, field string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return "", errs.New(errs.Invalid, "INVALID_FIELD", "%s must be a JSON object", field).WithParam(field)
	}
	b, _ := json.Marshal(m)
	return string(b), nil
}

// connectionJSON renders a connection without any secret; live cooldown state
// comes from memory.
func (a *API) connectionJSON(row store.Connection) map[string]any {
	st := routing.CooldownFromRow(row)
	if c, ok := a.Engine.Registry().Get(row.ID); ok {
		st = c.Cooldown()
	}
	f := routing.CooldownFields(st)
	apiKey, _ := a.Box.Open(row.APIKeyEnc)
	var models []string
	_ = json.Unmarshal([]byte(row.Models), &models)
	if models == nil {
		models = []string{}
	}
	out := map[string]any{
		"id": row.ID, "provider": row.Provider, "name": row.Name, "authType": row.AuthType,
		"baseUrl": row.BaseURL, "prefix": row.Prefix, "priority": row.Priority, "isActive": row.IsActive,
		"maxConcurrent": row.MaxConcurrent, "rateLimitProtection": row.RateLimitProtection, "models": models,
		"rateLimitOverrides": json.RawMessage(row.RateLimitOverrides), "providerSpecificData": json.RawMessage(row.ProviderSpecificData),
		"testStatus": f.TestStatus, "rateLimitedUntil": rfc3339(f.RateLimitedUntil), "backoffLevel": f.BackoffLevel,
		"lastError": f.LastError, "lastErrorType": f.LastErrorType, "lastErrorAt": rfc3339(f.LastErrorAt), "errorCode": f.ErrorCode,
		"apiKeyMasked": secrets.Mask(apiKey), "hasAccessToken": row.AccessTokenEnc != "", "hasRefreshToken": row.RefreshTokenEnc != "",
		"createdAt": rfc3339(row.CreatedAt), "updatedAt": rfc3339(row.UpdatedAt),
	}
	return out
}

func rfc3339(ms int64) any {
	if ms <= 0 {
		return nil
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// testConnection checks a connection's credentials with a cheap upstream call.
func (a *API) testConnection(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	c, ok := a.Engine.Registry().Get(id)
	if !ok {
		httpx.WriteError(w, errs.New(errs.NotFound, "CONNECTION_NOT_FOUND", "connection not found"))
		return
	}
	t := c.Target("")
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.BaseURL, "/")+"/models", nil)
	if err != nil {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid base URL"})
		return
	}
	if t.Secret != "" {
		if t.Provider.Format == providers.FormatAnthropic {
			req.Header.Set("x-api-key", t.Secret)
			req.Header.Set("anthropic-version", "2023-06-01")
		} else {
			req.Header.Set("Authorization", "Bearer "+t.Secret)
		}
	}
	start := time.Now()
	resp, err := a.HTTPClient.Do(req)
	latency := time.Since(start).Milliseconds()
	if err != nil {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "latencyMs": latency, "error": "upstream unreachable"})
		return
	}
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a.Engine.Breakers().Get(c.BreakerKey).ConnectionTestPassed()
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "latencyMs": latency, "status": resp.StatusCode})
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "latencyMs": latency, "status": resp.StatusCode,
		"error": "upstream answered " + http.StatusText(resp.StatusCode)})
}
