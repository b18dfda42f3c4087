package connfields

import (
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/providers"
	credredact "omniroute/backend/redact"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// Env is what a save reads beyond the row and the body: the catalogue (a
// prefix may not be a provider's name), the other connections (nor another
// connection's prefix), the secret box and the user's home (a provider
// module reading a CLI profile).
type Env struct {
	Catalog     *providers.Catalog
	Connections func() ([]store.Connection, error)
	Seal        func(plain string) (string, error)
	Open        func(sealed string) (string, error)
	Home        func() (string, error)
}

// save is one Apply: the row it writes and what it was asked.
type save struct {
	Env
	row      *store.Connection
	in       Input
	p        providers.Provider
	creating bool
	// newCreds: this save brings new credentials (or a new base URL for a
	// connection whose old one answered 404): its terminal state is lifted.
	newCreds bool
}

// Apply checks in and writes it into row, the connection of provider p
// (creating: a new row, its defaults set). The first refusal is returned as
// an errs.Error; row may then hold part of the input and must not be
// stored. New credentials clear a terminal state: that is the documented
// way out of banned / expired / key_rejected.
func (e Env) Apply(row *store.Connection, in Input, p providers.Provider, creating bool) error {
	s := &save{Env: e, row: row, in: in, p: p, creating: creating}
	for _, step := range []func() error{s.identity, s.credentials, s.endpoint, s.limits, s.data, s.models, s.required} {
		if err := step(); err != nil {
			return err
		}
	}
	s.clearTerminal()
	return nil
}

// identity applies the name and the auth type.
func (s *save) identity() error {
	if s.in.Name != nil {
		name := strings.TrimSpace(*s.in.Name)
		if name == "" || len(name) > 100 {
			return errs.New(errs.Invalid, "INVALID_NAME", "name must be 1 to 100 characters").WithParam("name")
		}
		s.row.Name = name
	}
	if s.in.AuthType != nil {
		switch *s.in.AuthType {
		case "apikey", "oauth", "none":
			s.row.AuthType = *s.in.AuthType
		default:
			return errs.New(errs.Invalid, "INVALID_AUTH_TYPE", "authType must be apikey, oauth or none").WithParam("authType")
		}
	}
	return nil
}

// credentials seals the key and tokens and reads the token's expiry.
func (s *save) credentials() error {
	in, row := s.in, s.row
	if in.APIKey != nil {
		v := strings.TrimSpace(*in.APIKey)
		if placeholderKey(v) {
			return errs.New(errs.Invalid, "INVALID_API_KEY",
				"apiKey is a placeholder from an example, not a key: paste the provider's key itself").WithParam("apiKey")
		}
		if limit := s.p.KeyLimit(4096); len(v) > limit {
			return errs.New(errs.Invalid, "INVALID_API_KEY", "apiKey is too long").WithParam("apiKey")
		}
		sealed, err := s.Seal(v)
		if err != nil {
			return err
		}
		row.APIKeyEnc, s.newCreds = sealed, true
	}
	if in.AccessToken != nil {
		sealed, err := s.Seal(strings.TrimSpace(*in.AccessToken))
		if err != nil {
			return err
		}
		row.AccessTokenEnc, s.newCreds = sealed, true
	}
	if in.RefreshToken != nil {
		sealed, err := s.Seal(strings.TrimSpace(*in.RefreshToken))
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
	return nil
}

// prefixPattern is a connection prefix's shape.
var prefixPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`) })

// endpoint applies the base URL (required by a user-defined provider) and
// the prefix (unique, never a provider's name).
func (s *save) endpoint() error {
	in, row := s.in, s.row
	if in.BaseURL != nil {
		v := strings.TrimSpace(*in.BaseURL)
		if v != "" {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errs.New(errs.Invalid, "INVALID_BASE_URL", "baseUrl must be an http(s) URL such as https://api.example.com/v1").WithParam("baseUrl")
			}
			if credredact.URLCredentials(v) {
				// Stored, it would be shown to viewers and written to the
				// audit log; the message names the field, never the value.
				return errs.New(errs.Invalid, "BASE_URL_HAS_CREDENTIALS",
					"baseUrl must not carry a credential (user:password@, or a key, token or signature in its query): put the key in apiKey").WithParam("baseUrl")
			}
			v = strings.TrimRight(v, "/")
		}
		row.BaseURL = v
	}
	if s.p.UserDefined && row.BaseURL == "" {
		return errs.New(errs.Invalid, "BASE_URL_REQUIRED", "baseUrl is required for %s connections", s.p.ID).WithParam("baseUrl")
	}
	if in.Prefix != nil {
		v := strings.ToLower(strings.TrimSpace(*in.Prefix))
		if v != "" {
			if !prefixPattern().MatchString(v) {
				return errs.New(errs.Invalid, "INVALID_PREFIX", "prefix must be 1-32 lowercase letters, digits, '-' or '_'").WithParam("prefix")
			}
			if _, clash := s.Catalog.Lookup(v); clash {
				return errs.New(errs.Invalid, "PREFIX_TAKEN", "prefix %q is a provider name", v).WithParam("prefix")
			}
			rows, _ := s.Connections()
			for _, other := range rows {
				if other.ID != row.ID && other.Prefix == v {
					return errs.New(errs.Conflict, "PREFIX_TAKEN", "prefix %q is used by connection %q", v, other.Name).WithParam("prefix")
				}
			}
		}
		row.Prefix = v
	}
	return nil
}

// limits applies the priority, the switch, the concurrency cap and the
// rate-limit overrides (modelConcurrency merged into them), then checks the
// overrides as they will be stored.
func (s *save) limits() error {
	in, row := s.in, s.row
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
		v, err := jsonObject(*in.RateLimitOverrides, "rateLimitOverrides")
		if err != nil {
			return err
		}
		row.RateLimitOverrides = v
	}
	if len(in.ModelConcurrency) > 0 {
		var o map[string]any
		_ = json.Unmarshal([]byte(orObject(row.RateLimitOverrides)), &o)
		if o == nil {
			o = map[string]any{}
		}
		var mc any
		if err := json.Unmarshal(in.ModelConcurrency, &mc); err != nil {
			return errs.New(errs.Invalid, "INVALID_MODEL_CONCURRENCY", "modelConcurrency must be an object of model = cap").WithParam("modelConcurrency")
		}
		if mc == nil {
			delete(o, "modelConcurrency")
		} else {
			o["modelConcurrency"] = mc
		}
		b, _ := json.Marshal(o)
		row.RateLimitOverrides = string(b)
	}
	return validateOverrides(row.RateLimitOverrides)
}

// data applies providerSpecificData (its local address checked, then the
// provider module's schema) and runs the module's credential check when the
// key or the object changed, or on create.
func (s *save) data() error {
	in, row, p := s.in, s.row, s.p
	if in.ProviderSpecificData != nil {
		raw, err := jsonObject(*in.ProviderSpecificData, "providerSpecificData")
		if err != nil {
			return err
		}
		var psd struct {
			LocalAddress *string `json:"localAddress"`
		}
		_ = json.Unmarshal([]byte(raw), &psd)
		if psd.LocalAddress != nil && *psd.LocalAddress != "" && net.ParseIP(strings.TrimSpace(*psd.LocalAddress)) == nil {
			return errs.New(errs.Invalid, "INVALID_LOCAL_ADDRESS", "providerSpecificData.localAddress must be an IP address of this machine").WithParam("providerSpecificData.localAddress")
		}
		if sch := p.DataSchema(); sch != nil && sch.Apply != nil {
			if raw, err = s.applySchema(sch, raw); err != nil {
				return err
			}
		}
		row.ProviderSpecificData = raw
	} else if sch := p.DataSchema(); s.creating && sch != nil && sch.Required {
		return errs.New(errs.Invalid, "PROVIDER_DATA_REQUIRED", "%s", sch.RequiredMessage).WithParam("providerSpecificData")
	}
	if m := p.Module; m != nil && m.Check != nil && (s.creating || in.APIKey != nil || in.ProviderSpecificData != nil) {
		return s.checkCredential(m.Check, p.DataSchema())
	}
	return nil
}

// applySchema runs the provider module's providerSpecificData schema on a
// saved object: its field-precise refusals become 400s, its sealed API key
// replaces the connection's. It returns the object to store.
func (s *save) applySchema(schema *providers.DataSchema, raw string) (string, error) {
	out, err := schema.Apply(providers.DataInput{Raw: raw, Stored: s.row.ProviderSpecificData, Seal: s.Seal, Home: s.Home})
	if err != nil {
		return "", fieldError(err, schema)
	}
	if out.APIKeySealed != "" {
		s.row.APIKeyEnc = out.APIKeySealed
	}
	return out.Data, nil
}

// checkCredential runs a provider module's credential check: the apiKey
// (plain when given in this save, else the stored one) against the
// providerSpecificData, which it may complete. schema words its refusals
// (nil: none).
func (s *save) checkCredential(check func(providers.KeyCheck) (string, error), schema *providers.DataSchema) error {
	key := ""
	if s.in.APIKey != nil {
		key = strings.TrimSpace(*s.in.APIKey)
	} else if s.row.APIKeyEnc != "" {
		k, err := s.Open(s.row.APIKeyEnc)
		if err != nil {
			return err
		}
		key = k
	}
	data, err := check(providers.KeyCheck{Key: key, Data: s.row.ProviderSpecificData})
	if err != nil {
		return fieldError(err, schema)
	}
	s.row.ProviderSpecificData = data
	return nil
}

// fieldError is a provider module's refusal as a 400 (other errors pass):
// its stable code, the field's path as param, and a message in the user's
// words, naming the field by its form label (DataSchema.UserWords): the
// dashboard shows it under that field.
func fieldError(err error, schema *providers.DataSchema) error {
	var fe *providers.FieldError
	if errors.As(err, &fe) {
		return errs.New(errs.Invalid, fe.Code, "%s", schema.UserWords(fe.Message)).WithParam(fe.Field)
	}
	return err
}

// models applies the listed, discovered and hidden model lists and the
// aliases, then refuses aliases the lists make ambiguous or dead.
func (s *save) models() error {
	in, row := s.in, s.row
	for _, l := range []struct {
		in    *[]string
		field string
		col   *string
	}{{in.Models, "models", &row.Models}, {in.DiscoveredModels, "discoveredModels", &row.DiscoveredModels}, {in.HiddenModels, "hiddenModels", &row.HiddenModels}} {
		if l.in == nil {
			continue
		}
		v, err := modelList(*l.in, l.field)
		if err != nil {
			return err
		}
		*l.col = v
	}
	if in.ModelAliases != nil {
		v, err := aliasMap(*in.ModelAliases)
		if err != nil {
			return err
		}
		row.ModelAliases = v
	}
	if in.HiddenModels != nil || in.ModelAliases != nil || in.Models != nil || in.DiscoveredModels != nil {
		return checkAliases(*row)
	}
	return nil
}

// required refuses a connection left without the credential its auth type
// needs.
func (s *save) required() error {
	row := s.row
	if row.AuthType == "apikey" && row.APIKeyEnc == "" && s.p.Category != providers.CategoryLocal {
		return errs.New(errs.Invalid, "API_KEY_REQUIRED", "apiKey is required for an apikey connection").WithParam("apiKey")
	}
	if row.AuthType == "oauth" && row.AccessTokenEnc == "" && row.APIKeyEnc == "" {
		return errs.New(errs.Invalid, "ACCESS_TOKEN_REQUIRED", "accessToken is required for an oauth connection").WithParam("accessToken")
	}
	return nil
}

// clearTerminal lifts an edited connection's terminal state when the save
// brought new credentials, or a new base URL where the old one answered 404
// (the old URL's 404 says nothing of the new one, which is checked afresh).
func (s *save) clearTerminal() {
	row := s.row
	if s.creating || !(s.newCreds || (row.TestStatus == string(health.EndpointNotFound) && s.in.BaseURL != nil)) {
		return
	}
	st := cooldown.ClearTerminal(routing.CooldownFromRow(*row))
	f := routing.CooldownFields(st)
	row.RateLimitedUntil, row.TestStatus, row.LastError, row.LastErrorType = f.RateLimitedUntil, f.TestStatus, f.LastError, f.LastErrorType
	row.LastErrorAt, row.ErrorCode, row.BackoffLevel, row.RejectStreak, row.ExpiredRetries = f.LastErrorAt, f.ErrorCode, f.BackoffLevel, f.RejectStreak, f.ExpiredRetries
}

// jsonObject is raw as a compact JSON object, or INVALID_FIELD naming field.
func jsonObject(raw json.RawMessage, field string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return "", errs.New(errs.Invalid, "INVALID_FIELD", "%s must be a JSON object", field).WithParam(field)
	}
	b, _ := json.Marshal(m)
	return string(b), nil
}

// truncate is s cut to n bytes (a refusal quoting user input).
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
