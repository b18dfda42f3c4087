package api

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/health"
	"omniroute/backend/httpx"
	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	credredact "omniroute/backend/redact"
	"omniroute/backend/resilience/cooldown"
	"omniroute/backend/routing"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// connectionInput is the body of POST/PUT /api/providers; pointer fields are
// optional so a PUT changes only what it names.
type connectionInput struct {
	Provider            *string          `json:"provider"`
	Name                *string          `json:"name"`
	AuthType            *string          `json:"authType"`
	APIKey              *string          `json:"apiKey"`
	AccessToken         *string          `json:"accessToken"`
	RefreshToken        *string          `json:"refreshToken"`
	ExpiresAt           *string          `json:"expiresAt"`
	BaseURL             *string          `json:"baseUrl"`
	Prefix              *string          `json:"prefix"`
	Priority            *int             `json:"priority"`
	IsActive            *bool            `json:"isActive"`
	MaxConcurrent       *int             `json:"maxConcurrent"`
	RateLimitProtection *bool            `json:"rateLimitProtection"` // accepted, never changed here (POST /api/rate-limits does)
	RateLimitOverrides  *json.RawMessage `json:"rateLimitOverrides"`
	// ModelConcurrency is a shorthand for rateLimitOverrides.modelConcurrency
	// (not a pointer, so an explicit null arrives as "null" and lifts the caps).
	ModelConcurrency     json.RawMessage  `json:"modelConcurrency"`
	ProviderSpecificData *json.RawMessage `json:"providerSpecificData"`
	Models               *[]string        `json:"models"`
	// DiscoveredModels edits the discovered list (until the next refresh).
	DiscoveredModels *[]string `json:"discoveredModels"`
	// HiddenModels replaces the models hidden on this connection (never in
	// /v1/models, never routed to here); [] shows them all again.
	HiddenModels *[]string `json:"hiddenModels"`
	// ModelAliases replaces the connection's aliases, alias → model; {}
	// removes them all.
	ModelAliases *map[string]string `json:"modelAliases"`
	// DiscoverModels: false stops create from asking the upstream (default:
	// ask when the request lists no models).
	DiscoverModels *bool `json:"discoverModels"`
	// Verify checks the credentials with the upstream (GET /models and a
	// one-token completion); a 401/403 makes the connection key_rejected.
	// Default: on every create, and on an edit that changes the base URL,
	// the key or the listed models; false skips it.
	Verify *bool `json:"verify"`
	// Pricing and FlatRate are the connection's pricing override (PATCH and
	// PUT; see applyPricingInput).
	Pricing  json.RawMessage `json:"pricing"`
	FlatRate json.RawMessage `json:"flatRate"`
}

var prefixPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`) })

func (a *API) listCatalog(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Aliases     []string `json:"aliases"`
		Category    string   `json:"category"`
		Format      string   `json:"format"`
		Dialect     string   `json:"dialect"`
		BaseURL     string   `json:"baseUrl"`
		UserDefined bool     `json:"userDefined"`
		// Auth says how the credential is sent (docs/PROVIDERS.md).
		Auth string `json:"auth"`
		// DefaultModels stand in when a connection's upstream cannot list its models.
		DefaultModels []string `json:"defaultModels"`
		NoModelList   bool     `json:"noModelList"`
		// Features of the wire (docs/PROVIDERS.md).
		Tools            bool `json:"tools"`
		Vision           bool `json:"vision"`
		Reasoning        bool `json:"reasoning"`
		AssistantPrefill bool `json:"assistantPrefill"`
		// Provider error rule and egress-bucket flags (docs/RULES.md).
		RuleFullText    bool `json:"ruleFullText"`
		HonorsRuleScope bool `json:"honorsRuleScope"`
		EgressBucketed  bool `json:"egressBucketed"`
		// DataFields are the provider module's providerSpecificData schema ([] : free form).
		DataFields []dataField `json:"dataFields"`
		// KeyField is how a connection form asks for the apiKey.
		KeyField keyField `json:"keyField"`
	}
	var out []entry
	for _, p := range a.Catalog.All() {
		out = append(out, entry{ID: p.ID, Name: p.Name, Aliases: append([]string{}, p.Aliases...), Category: string(p.Category),
			Format: string(p.Format), Dialect: string(p.Dialect), BaseURL: p.BaseURL, UserDefined: p.UserDefined, Auth: p.Auth(),
			DefaultModels: append([]string{}, p.DefaultModels...), NoModelList: p.NoModelList,
			Tools: p.Tools, Vision: p.Vision, Reasoning: p.Reasoning, AssistantPrefill: p.AssistantPrefill,
			RuleFullText: p.RuleFullText, HonorsRuleScope: p.HonorsRuleScope, EgressBucketed: p.EgressBucketed, DataFields: dataFields(p), KeyField: keyFieldOf(p)})
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
		Priority: a.nextPriority(p.ID), IsActive: true, Models: "[]", DiscoveredModels: "[]", HiddenModels: "[]", ModelAliases: "{}", ProviderSpecificData: "{}",
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
	// A connection created without a model list asks its upstream what it
	// serves, so its models route and show in /v1/models right away.
	listed := in.Models != nil && len(*in.Models) > 0
	discover := (in.DiscoverModels == nil && !listed) || (in.DiscoverModels != nil && *in.DiscoverModels)
	out := map[string]any{}
	switch {
	case in.Verify == nil || *in.Verify:
		// The credentials, the address and the base URL are checked when they
		// are entered (listed models or not): a rejected key, a URL answering
		// 404 or a closed port is never added as a green connection.
		a.checkOnSave(r.Context(), row.ID, discover || in.Verify != nil, out)
		if updated, err := a.Store.Connection(row.ID); err == nil {
			row = updated
		}
	case discover:
		if updated, _, err := a.refreshModels(r.Context(), row.ID); err == nil {
			row = updated
		}
	}
	out["connection"] = a.connectionJSON(row)
	httpx.WriteJSON(w, http.StatusCreated, out)
}

// saveCheckTimeout bounds the check a create or an edit runs (discovery and
// the one-token completion together), so saving never hangs on an upstream.
const saveCheckTimeout = 10 * time.Second

// checkOnSave runs the credential check of a create or an edit within
// saveCheckTimeout and puts its outcome ("check", and "warning" when it
// failed) into the answer out.
// keep stores the model list the check reads (false: the user listed the
// models by hand and did not ask for discovery).
func (a *API) checkOnSave(ctx context.Context, id string, keep bool, out map[string]any) {
	ctx, cancel := context.WithTimeout(ctx, saveCheckTimeout)
	defer cancel()
	if ch, _, err := a.runCheck(ctx, id, keep); err == nil {
		out["check"] = ch
		if ch.Warning != "" {
			out["warning"] = ch.Warning
		}
	}
}

// checkedFieldsChanged reports whether an edit changed what the check
// judges: the base URL, the key or token, or the hand-listed models.
func checkedFieldsChanged(before, after store.Connection) bool {
	return before.BaseURL != after.BaseURL || before.APIKeyEnc != after.APIKeyEnc ||
		before.AccessTokenEnc != after.AccessTokenEnc || before.Models != after.Models
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
	if r.Method == http.MethodPatch && in.RateLimitOverrides != nil {
		// PATCH merges the overrides object key by key (null removes a key); PUT replaces it.
		merged, err := mergeOverrides(row.RateLimitOverrides, *in.RateLimitOverrides)
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		in.RateLimitOverrides = &merged
	}
	before := row
	if err := a.applyConnectionInput(&row, in, p, false); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.applyPricingInput(row.ID, in); err != nil {
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
	out := map[string]any{}
	if (in.Verify == nil && checkedFieldsChanged(before, row)) || (in.Verify != nil && *in.Verify) {
		a.checkOnSave(r.Context(), row.ID, in.Verify != nil || len(jsonList(row.Models)) == 0, out)
		if updated, err := a.Store.Connection(row.ID); err == nil {
			row = updated
		}
	}
	out["connection"] = a.connectionJSON(row)
	httpx.WriteJSON(w, http.StatusOK, out)
}

func (a *API) deleteConnection(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if err := a.Store.DeleteConnection(id); err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	if a.Prefills != nil {
		a.Prefills.Forget(id)
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
		if placeholderKey(v) {
			return errs.New(errs.Invalid, "INVALID_API_KEY",
				"apiKey is a placeholder from an example, not a key: paste the provider's key itself").WithParam("apiKey")
		}
		if limit := p.KeyLimit(4096); len(v) > limit {
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
	if p.UserDefined && row.BaseURL == "" {
		return errs.New(errs.Invalid, "BASE_URL_REQUIRED", "baseUrl is required for %s connections", p.ID).WithParam("baseUrl")
	}
	if in.Prefix != nil {
		v := strings.ToLower(strings.TrimSpace(*in.Prefix))
		if v != "" {
			if !prefixPattern().MatchString(v) {
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
	if err := validateOverrides(row.RateLimitOverrides); err != nil {
		return err
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
		if sch := p.DataSchema(); sch != nil && sch.Apply != nil {
			if s, err = a.applyProviderData(sch, row, s); err != nil {
				return err
			}
		}
		row.ProviderSpecificData = s
	} else if sch := p.DataSchema(); creating && sch != nil && sch.Required {
		return errs.New(errs.Invalid, "PROVIDER_DATA_REQUIRED", "%s", sch.RequiredMessage).WithParam("providerSpecificData")
	}
	if m := p.Module; m != nil && m.Check != nil && (creating || in.APIKey != nil || in.ProviderSpecificData != nil) {
		if err := a.checkCredential(m.Check, p.DataSchema(), row, in.APIKey); err != nil {
			return err
		}
	}
	if in.Models != nil {
		s, err := modelList(*in.Models, "models")
		if err != nil {
			return err
		}
		row.Models = s
	}
	if in.DiscoveredModels != nil {
		s, err := modelList(*in.DiscoveredModels, "discoveredModels")
		if err != nil {
			return err
		}
		row.DiscoveredModels = s
	}
	if in.HiddenModels != nil {
		s, err := modelList(*in.HiddenModels, "hiddenModels")
		if err != nil {
			return err
		}
		row.HiddenModels = s
	}
	if in.ModelAliases != nil {
		s, err := aliasMap(*in.ModelAliases)
		if err != nil {
			return err
		}
		row.ModelAliases = s
	}
	if in.HiddenModels != nil || in.ModelAliases != nil || in.Models != nil || in.DiscoveredModels != nil {
		if err := checkAliases(*row); err != nil {
			return err
		}
	}
	if row.AuthType == "apikey" && row.APIKeyEnc == "" && p.Category != providers.CategoryLocal {
		return errs.New(errs.Invalid, "API_KEY_REQUIRED", "apiKey is required for an apikey connection").WithParam("apiKey")
	}
	if row.AuthType == "oauth" && row.AccessTokenEnc == "" && row.APIKeyEnc == "" {
		return errs.New(errs.Invalid, "ACCESS_TOKEN_REQUIRED", "accessToken is required for an oauth connection").WithParam("accessToken")
	}
	if !creating && row.TestStatus == EndpointNotFound && in.BaseURL != nil {
		// A new base URL is checked afresh: the old one's 404 says nothing of it.
		newCreds = true
	}
	if newCreds && !creating {
		st := cooldown.ClearTerminal(routing.CooldownFromRow(*row))
		f := routing.CooldownFields(st)
		row.RateLimitedUntil, row.TestStatus, row.LastError, row.LastErrorType = f.RateLimitedUntil, f.TestStatus, f.LastError, f.LastErrorType
		row.LastErrorAt, row.ErrorCode, row.BackoffLevel, row.RejectStreak, row.ExpiredRetries = f.LastErrorAt, f.ErrorCode, f.BackoffLevel, f.RejectStreak, f.ExpiredRetries
	}
	return nil
}

// modelList validates a list of model names and returns it as JSON, without
// duplicates.
func modelList(in []string, field string) (string, error) {
	if len(in) > discovery.MaxModels {
		return "", errs.New(errs.Invalid, "INVALID_MODELS", "%s may hold at most %d names", field, discovery.MaxModels).WithParam(field)
	}
	models := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, m := range in {
		name, ok := discovery.Clean(m)
		if !ok {
			return "", errs.New(errs.Invalid, "INVALID_MODELS", "%s must be names of 1 to 200 characters without spaces", field).WithParam(field)
		}
		if !seen[name] {
			seen[name] = true
			models = append(models, name)
		}
	}
	b, _ := json.Marshal(models)
	return string(b), nil
}

// maxAliases bounds a connection's model aliases.
const maxAliases = 1000

// aliasMap validates a connection's model aliases (alias → model) and
// returns them as JSON: both names as clean as model names, an alias without
// '/' (that would read as provider/model) and never its own model.
func aliasMap(in map[string]string) (string, error) {
	if len(in) > maxAliases {
		return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "modelAliases may hold at most %d aliases", maxAliases).WithParam("modelAliases")
	}
	out := make(map[string]string, len(in))
	for alias, model := range in {
		a, ok := discovery.Clean(alias)
		if !ok || strings.Contains(a, "/") {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "alias %q must be 1 to 200 characters without spaces or '/'", truncate(alias, 60)).WithParam("modelAliases")
		}
		m, ok := discovery.Clean(model)
		if !ok {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "the model of alias %q must be a name of 1 to 200 characters without spaces", a).WithParam("modelAliases")
		}
		if a == m {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "alias %q names itself", a).WithParam("modelAliases")
		}
		if _, dup := out[a]; dup {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "alias %q is given twice", a).WithParam("modelAliases")
		}
		out[a] = m
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}

// checkAliases refuses aliases that would be ambiguous or dead on row: an
// alias that is also a model the connection knows, or one whose model is
// hidden there.
func checkAliases(row store.Connection) error {
	aliases := routing.ModelAliases(row)
	if len(aliases) == 0 {
		return nil
	}
	known := routing.KnownModels(row)
	hidden := routing.HiddenModels(row)
	for _, a := range sortedAliasKeys(aliases) {
		if slices.Contains(known, a) {
			return errs.New(errs.Invalid, "MODEL_ALIAS_CONFLICT", "alias %q is already a model of this connection", a).WithParam("modelAliases")
		}
		if slices.Contains(hidden, aliases[a]) {
			return errs.New(errs.Invalid, "MODEL_ALIAS_HIDDEN", "alias %q names %q, which is hidden on this connection", a, aliases[a]).WithParam("modelAliases")
		}
	}
	return nil
}

func sortedAliasKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
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
	live, ok := a.Engine.Registry().Get(row.ID)
	if ok {
		st = live.Cooldown()
	}
	f := routing.CooldownFields(st)
	if ok {
		f.TestStatus = reachedStatus(f.TestStatus, live.Reach())
	}
	apiKey, _ := a.Box.Open(row.APIKeyEnc)
	models, discovered := jsonList(row.Models), jsonList(row.DiscoveredModels)
	served := routing.ServedModels(row)
	if served == nil {
		served = []string{}
	}
	out := map[string]any{
		"id": row.ID, "provider": row.Provider, "name": row.Name, "authType": row.AuthType,
		"baseUrl": credredact.URL(row.BaseURL), "prefix": row.Prefix, "priority": row.Priority, "isActive": row.IsActive,
		"maxConcurrent": row.MaxConcurrent, "rateLimitProtection": row.RateLimitProtection, "models": models,
		"rateLimitOverrides": json.RawMessage(row.RateLimitOverrides), "providerSpecificData": providers.PublicData(row.ProviderSpecificData),
		"testStatus": f.TestStatus, "rateLimitedUntil": rfc3339(f.RateLimitedUntil), "backoffLevel": f.BackoffLevel,
		"lastError": f.LastError, "lastErrorType": f.LastErrorType, "lastErrorAt": rfc3339(f.LastErrorAt), "errorCode": f.ErrorCode,
		"apiKeyMasked": secrets.Mask(apiKey), "hasAccessToken": row.AccessTokenEnc != "", "hasRefreshToken": row.RefreshTokenEnc != "",
		"createdAt": rfc3339(row.CreatedAt), "updatedAt": rfc3339(row.UpdatedAt),
		"discoveredModels": discovered, "servedModels": served, "modelsSource": row.ModelsSource,
		"knownModels": routing.KnownModels(row), "hiddenModels": jsonList(row.HiddenModels), "modelAliases": aliasesJSON(row),
		"modelsRefreshedAt": rfc3339(row.ModelsRefreshedAt), "modelsError": row.ModelsError, "modelPrefill": a.modelPrefill(row, served),
		"live": a.liveLimits(row.ID, a.Settings.Resilience().RequestQueue.AutoEnableAPIKeyProviders),
	}
	if ok && live.LoadError != "" { // switched off at load: its credential does not open
		out["loadError"] = live.LoadError
	}
	if a.Pricing != nil { // the connection's prices (COST.md)
		o, _ := a.Pricing.Override(row.ID)
		p := o.Pricing
		if p == nil {
			p = map[string]pricing.Price{}
		}
		out["pricing"], out["flatRate"] = p, a.Pricing.FlatRate(row.ID, row.Provider)
	}
	if row.AuthType == "oauth" {
		access, _ := a.Box.Open(row.AccessTokenEnc)
		out["accessTokenMasked"] = secrets.Mask(access)
		out["expiresAt"] = rfc3339(row.ExpiresAt)
		if ok {
			for k, v := range a.subscriptionJSON(live, a.Clock.Now()) {
				out[k] = v
			}
		}
	}
	return out
}

// aliasesJSON is the connection's aliases, {} when it has none.
func aliasesJSON(row store.Connection) map[string]string {
	if m := routing.ModelAliases(row); m != nil {
		return m
	}
	return map[string]string{}
}

func jsonList(s string) []string {
	var out []string
	_ = json.Unmarshal([]byte(s), &out)
	if out == nil {
		out = []string{}
	}
	return out
}

func rfc3339(ms int64) any {
	if ms <= 0 {
		return nil
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// testConnection checks a connection's credentials step by step: reach, auth,
// the model list (GET /models, stored as model discovery) and one minimal
// completion on its first served model, each with the upstream's status and
// message. A 401/403 makes the connection key_rejected.
func (a *API) testConnection(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if _, ok := a.Engine.Registry().Get(id); !ok {
		httpx.WriteError(w, errs.New(errs.NotFound, "CONNECTION_NOT_FOUND", "connection not found"))
		return
	}
	start := time.Now()
	ch, res, err := a.checkConnection(r.Context(), id)
	latency := time.Since(start).Milliseconds()
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	row, err := a.Store.Connection(id)
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	out := map[string]any{"ok": ch.OK, "latencyMs": latency, "models": routing.ServedModels(row), "modelsSource": row.ModelsSource,
		"steps": ch.Steps, "rejected": ch.Rejected}
	// The prefill probe runs on this explicit Test only (not on create or
	// edit): one request per model the check completed on.
	if p, ran := a.prefillProbe(r.Context(), id, ch); ran {
		out["prefill"] = p
	}
	if ch.Warning != "" {
		out["warning"] = ch.Warning
	}
	// status / error / errorCode: the first failed step's (the model list's
	// own, when only discovery failed).
	for _, s := range ch.Steps {
		if !ch.OK && !s.OK && !s.Skipped {
			out["error"] = s.Step + ": " + s.Message
			if s.Status != 0 {
				out["status"] = s.Status
			}
			break
		}
	}
	if res.Err != nil {
		out["errorCode"] = res.Err.Code
	}
	if _, failed := out["error"]; !failed {
		out["status"] = http.StatusOK
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// refreshModelsRoute serves POST /api/providers/{id}/models/refresh: ask the
// upstream again and store what it answers (or the catalogue default).
func (a *API) refreshModelsRoute(w http.ResponseWriter, r *http.Request) {
	row, res, err := a.refreshModels(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "connection"))
		return
	}
	out := map[string]any{"ok": res.Err == nil, "connection": a.connectionJSON(row)}
	if res.Err != nil {
		out["error"] = map[string]any{"code": res.Err.Code, "message": res.Err.Message, "status": res.Err.Status}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// discoveryTimeout bounds one discovery (every page of it).
const discoveryTimeout = 10 * time.Second

// refreshModels runs model discovery for a connection and stores the result:
// the upstream's list, or the catalogue default when the upstream cannot
// answer (an earlier upstream list is kept then rather than replaced by the
// defaults). It returns the updated row.
func (a *API) refreshModels(ctx context.Context, id string) (store.Connection, discovery.Result, error) {
	return a.discoverModels(ctx, id, true, true)
}

// discoverModels is refreshModels; refresh false asks with the stored token
// as it is (an import's just-read token), never refreshing it first; save
// false only asks (the reach is noted, the answer not stored).
func (a *API) discoverModels(ctx context.Context, id string, refresh, save bool) (store.Connection, discovery.Result, error) {
	c, ok := a.Engine.Registry().Get(id)
	if !ok {
		return store.Connection{}, discovery.Result{}, store.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	target := c.Target("")
	if refresh {
		target = a.freshTarget(ctx, c)
	}
	res := a.Discovery.Discover(ctx, target)
	// Discovery is an attempt like any other for the connection's reach: an
	// upstream nothing answers reads unreachable on every page from now on.
	c.NoteReach(res.Err == nil || res.Err.Code != discovery.CodeUnreachable, discoveryMessage(res), a.Clock.Now())
	row, err := a.Store.Connection(id)
	if err != nil || !save {
		return row, res, err
	}
	d := store.DiscoveredModels{Models: row.DiscoveredModels, Source: row.ModelsSource, RefreshedAt: a.Clock.Now().UnixMilli()}
	if res.Err != nil {
		d.Error = res.Err.Message
	}
	if res.Source == discovery.SourceUpstream || (res.Source == discovery.SourceCatalog && row.ModelsSource != discovery.SourceUpstream) {
		b, _ := json.Marshal(res.Models)
		d.Models, d.Source = string(b), res.Source
	}
	if err := a.Store.SaveDiscoveredModels(id, d); err != nil {
		return row, res, err
	}
	if err := a.Reload(); err != nil {
		return row, res, err
	}
	row.DiscoveredModels, row.ModelsSource, row.ModelsError, row.ModelsRefreshedAt = d.Models, d.Source, d.Error, d.RefreshedAt
	return row, res, nil
}

// freshTarget is c's target with its OAuth token refreshed when due (a
// failed refresh leaves the stored token: the upstream's answer says why).
func (a *API) freshTarget(ctx context.Context, c *routing.Conn) providers.Target {
	t := c.Target("")
	if a.FreshToken != nil && c.AuthType == "oauth" {
		if tok, err := a.FreshToken(ctx, c); err == nil {
			t.Secret, t.BaseURL = tok, c.Endpoint()
		}
	}
	return t
}

// discoveryMessage is discovery's error text ("" when it answered).
func discoveryMessage(res discovery.Result) string {
	if res.Err == nil {
		return ""
	}
	return res.Err.Message
}

// reachedStatus is a connection's testStatus as the health model sees it: a
// connection whose upstream nothing has answered (discovery or attempts:
// health's unreachable) reads "unreachable", not "active"; a cooldown or
// terminal state keeps its own name.
func reachedStatus(status string, r routing.Reach) string {
	if status == cooldown.StatusActive && (health.Reach{Reached: r.Reached, Misses: r.Misses}).Unreachable() {
		return string(health.Unreachable)
	}
	return status
}
