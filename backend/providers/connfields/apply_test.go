package connfields_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/providers/connfields"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// The test providers: no catalogue row of the gateway's, so the cases
// name no real provider.
const (
	keyed    = "acme"       // an API-key provider
	endpoint = "acme-own"   // user-defined: the base URL is the user's
	local    = "acme-local" // a local server: no key
	schemed  = "acme-cloud" // a providerSpecificData schema and a credential check
	shortKey = "acme-short" // keys of at most 8 bytes
)

// regionSchema is schemed's providerSpecificData: region required, one of
// two; keyFile a secret sealed as the connection's key.
var regionSchema = &providers.DataSchema{
	Fields:   []providers.Field{{Name: "region", Type: "string", Label: "Region"}, {Name: "keyFile", Type: "string", Secret: true, SealedAs: "apiKey", Label: "Key file"}},
	Required: true, RequiredMessage: "providerSpecificData is required: give the region",
	Apply: func(in providers.DataInput) (providers.DataOutput, error) {
		var d map[string]string
		_ = json.Unmarshal([]byte(in.Raw), &d)
		if r := d["region"]; r != "north" && r != "south" {
			return providers.DataOutput{}, &providers.FieldError{Field: "providerSpecificData.region", Code: "INVALID_REGION",
				Message: "providerSpecificData.region must be north or south"}
		}
		var out providers.DataOutput
		if k := d["keyFile"]; k != "" {
			sealed, err := in.Seal(k)
			if err != nil {
				return out, err
			}
			out.APIKeySealed = sealed
			delete(d, "keyFile")
		}
		b, _ := json.Marshal(d)
		out.Data = string(b)
		return out, nil
	},
}

// checkKey is schemed's credential check: a key starting "bad" is refused
// on the region field, any other completes the object with its project.
func checkKey(k providers.KeyCheck) (string, error) {
	if strings.HasPrefix(k.Key, "bad") {
		return "", &providers.FieldError{Field: "providerSpecificData.region", Code: "KEY_WRONG_REGION",
			Message: "the key does not open providerSpecificData.region"}
	}
	var d map[string]string
	_ = json.Unmarshal([]byte(k.Data), &d)
	d["project"] = "p-" + k.Key
	b, _ := json.Marshal(d)
	return string(b), nil
}

func testCatalog() *providers.Catalog {
	return providers.NewCatalog().WithModules(
		providers.Module{ID: keyed, Rows: []providers.Provider{{ID: keyed, Name: "Acme", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI}}},
		providers.Module{ID: endpoint, Rows: []providers.Provider{{ID: endpoint, Name: "Acme own", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI, UserDefined: true}}},
		providers.Module{ID: local, Rows: []providers.Provider{{ID: local, Name: "Acme local", Category: providers.CategoryLocal, Format: providers.FormatOpenAI}}},
		providers.Module{ID: schemed, Data: regionSchema, Check: checkKey,
			Rows: []providers.Provider{{ID: schemed, Name: "Acme cloud", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI}}},
		providers.Module{ID: shortKey, MaxKey: 8, Rows: []providers.Provider{{ID: shortKey, Name: "Acme short", Category: providers.CategoryAPIKey, Format: providers.FormatOpenAI}}},
	)
}

// fixture is an Env on a real secret box, the test catalogue and one other
// connection whose prefix is "taken".
type fixture struct {
	env connfields.Env
	box *secrets.Box
	cat *providers.Catalog
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	box, err := secrets.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog()
	others := []store.Connection{{ID: "other", Name: "Other", Provider: keyed, Prefix: "taken"}}
	env := connfields.Env{Catalog: cat, Connections: func() ([]store.Connection, error) { return others, nil },
		Seal: box.Seal, Open: box.Open, Home: func() (string, error) { return t.TempDir(), nil }}
	return fixture{env: env, box: box, cat: cat}
}

// newRow is a create's row for provider id, as the API starts it.
func (f fixture) newRow(t *testing.T, id string) store.Connection {
	t.Helper()
	p, ok := f.cat.Lookup(id)
	if !ok {
		t.Fatalf("no test provider %s", id)
	}
	row := store.Connection{ID: "c1", Provider: p.ID, Name: p.Name, AuthType: "apikey", IsActive: true, Models: "[]", DiscoveredModels: "[]",
		HiddenModels: "[]", ModelAliases: "{}", ProviderSpecificData: "{}", RateLimitOverrides: "{}", TestStatus: "active"}
	if p.Category == providers.CategoryLocal {
		row.AuthType = "none"
	}
	return row
}

// apply decodes body as the API does and applies it to row.
func (f fixture) apply(t *testing.T, row *store.Connection, provider, body string, creating bool) error {
	t.Helper()
	var in connfields.Input
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	p, _ := f.cat.Lookup(provider)
	return f.env.Apply(row, in, p, creating)
}

// TestApplyRefusals: each refusal's code, class (400 or 409), param and
// sentence, with the field named in the user's words where a provider's
// schema words it.
func TestApplyRefusals(t *testing.T) {
	long := strings.Repeat("m", 201)
	many := make([]string, 5001)
	for i := range many {
		many[i] = "m" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
	}
	manyJSON, _ := json.Marshal(many)
	aliases := map[string]string{}
	for i := 0; i < 1001; i++ {
		aliases["a"+strings.Repeat("b", i)] = "m"
	}
	aliasesJSON, _ := json.Marshal(aliases)
	tests := []struct {
		name, provider, body string
		// edit applies body to a stored row (creating false).
		edit               bool
		code, param, inMsg string
		class              errs.Class
	}{
		{"empty name", keyed, `{"name":"  ","apiKey":"k-1"}`, false, "INVALID_NAME", "name", "1 to 100 characters", errs.Invalid},
		{"long name", keyed, `{"name":"` + strings.Repeat("n", 101) + `","apiKey":"k-1"}`, false, "INVALID_NAME", "name", "1 to 100", errs.Invalid},
		{"auth type", keyed, `{"authType":"basic","apiKey":"k-1"}`, false, "INVALID_AUTH_TYPE", "authType", "apikey, oauth or none", errs.Invalid},
		{"placeholder key", keyed, `{"apiKey":"sk-..."}`, false, "INVALID_API_KEY", "apiKey", "placeholder", errs.Invalid},
		{"key too long", keyed, `{"apiKey":"` + strings.Repeat("k", 4097) + `"}`, false, "INVALID_API_KEY", "apiKey", "too long", errs.Invalid},
		{"key past the module's bound", shortKey, `{"apiKey":"k-123456789"}`, false, "INVALID_API_KEY", "apiKey", "too long", errs.Invalid},
		{"expiry", keyed, `{"apiKey":"k-1","expiresAt":"tomorrow"}`, false, "INVALID_EXPIRES_AT", "expiresAt", "RFC 3339", errs.Invalid},
		{"base URL scheme", keyed, `{"apiKey":"k-1","baseUrl":"ftp://x.example/v1"}`, false, "INVALID_BASE_URL", "baseUrl", "http(s) URL", errs.Invalid},
		{"base URL host", keyed, `{"apiKey":"k-1","baseUrl":"https:///v1"}`, false, "INVALID_BASE_URL", "baseUrl", "http(s) URL", errs.Invalid},
		{"base URL with a password", keyed, `{"apiKey":"k-1","baseUrl":"https://u:p@x.example/v1"}`, false, "BASE_URL_HAS_CREDENTIALS", "baseUrl", "must not carry a credential", errs.Invalid},
		{"base URL with a key", keyed, `{"apiKey":"k-1","baseUrl":"https://x.example/v1?key=abc"}`, false, "BASE_URL_HAS_CREDENTIALS", "baseUrl", "put the key in apiKey", errs.Invalid},
		{"user-defined without base URL", endpoint, `{"apiKey":"k-1"}`, false, "BASE_URL_REQUIRED", "baseUrl", "baseUrl is required for " + endpoint + " connections", errs.Invalid},
		{"prefix shape", keyed, `{"apiKey":"k-1","prefix":"-bad"}`, false, "INVALID_PREFIX", "prefix", "1-32 lowercase", errs.Invalid},
		{"prefix a provider's name", keyed, `{"apiKey":"k-1","prefix":"ACME-Local"}`, false, "PREFIX_TAKEN", "prefix", `prefix "acme-local" is a provider name`, errs.Invalid},
		{"prefix another's", keyed, `{"apiKey":"k-1","prefix":"taken"}`, false, "PREFIX_TAKEN", "prefix", `used by connection "Other"`, errs.Conflict},
		{"priority", keyed, `{"apiKey":"k-1","priority":1000001}`, false, "INVALID_PRIORITY", "priority", "between 0 and 1000000", errs.Invalid},
		{"negative priority", keyed, `{"apiKey":"k-1","priority":-1}`, false, "INVALID_PRIORITY", "priority", "between 0", errs.Invalid},
		{"max concurrent", keyed, `{"apiKey":"k-1","maxConcurrent":10001}`, false, "INVALID_MAX_CONCURRENT", "maxConcurrent", "0 (no limit) and 10000", errs.Invalid},
		{"overrides not an object", keyed, `{"apiKey":"k-1","rateLimitOverrides":[1]}`, false, "INVALID_FIELD", "rateLimitOverrides", "must be a JSON object", errs.Invalid},
		{"overrides cap", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"maxConcurrent":1.5}}`, false, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.maxConcurrent", "whole number from 0", errs.Invalid},
		{"overrides model caps shape", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"modelConcurrency":3}}`, false, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.modelConcurrency", "exact upstream model id", errs.Invalid},
		{"overrides model cap", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"modelConcurrency":{"m1":0}}}`, false, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.modelConcurrency", "m1 is not", errs.Invalid},
		{"overrides model id", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"modelConcurrency":{" m1":1}}}`, false, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.modelConcurrency", "without surrounding spaces", errs.Invalid},
		{"overrides wait", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"maxWaitMs":-1}}`, false, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.maxWaitMs", "milliseconds", errs.Invalid},
		{"overrides pacing", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"requestsPerMinute":"fast"}}`, false, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.requestsPerMinute", "0 (no pacing)", errs.Invalid},
		{"model concurrency shorthand", keyed, `{"apiKey":"k-1","modelConcurrency":{"m1":-2}}`, false, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.modelConcurrency", "whole numbers from 1", errs.Invalid},
		{"provider data not an object", keyed, `{"apiKey":"k-1","providerSpecificData":"x"}`, false, "INVALID_FIELD", "providerSpecificData", "must be a JSON object", errs.Invalid},
		{"local address", keyed, `{"apiKey":"k-1","providerSpecificData":{"localAddress":"eth0"}}`, false, "INVALID_LOCAL_ADDRESS", "providerSpecificData.localAddress", "IP address of this machine", errs.Invalid},
		{"schema refusal in the user's words", schemed, `{"apiKey":"k-1","providerSpecificData":{"region":"east"}}`, false, "INVALID_REGION", "providerSpecificData.region", "Region must be north or south", errs.Invalid},
		{"schema required", schemed, `{"apiKey":"k-1"}`, false, "PROVIDER_DATA_REQUIRED", "providerSpecificData", "give the region", errs.Invalid},
		{"credential check in the user's words", schemed, `{"apiKey":"bad-1","providerSpecificData":{"region":"north"}}`, false, "KEY_WRONG_REGION", "providerSpecificData.region", "the key does not open Region", errs.Invalid},
		{"model name", keyed, `{"apiKey":"k-1","models":["a b"]}`, false, "INVALID_MODELS", "models", "models must be names of 1 to 200", errs.Invalid},
		{"long model name", keyed, `{"apiKey":"k-1","discoveredModels":["` + long + `"]}`, false, "INVALID_MODELS", "discoveredModels", "discoveredModels must be names", errs.Invalid},
		{"too many models", keyed, `{"apiKey":"k-1","hiddenModels":` + string(manyJSON) + `}`, false, "INVALID_MODELS", "hiddenModels", "at most 5000 names", errs.Invalid},
		{"too many aliases", keyed, `{"apiKey":"k-1","modelAliases":` + string(aliasesJSON) + `}`, false, "INVALID_MODEL_ALIASES", "modelAliases", "at most 1000 aliases", errs.Invalid},
		{"alias with a slash", keyed, `{"apiKey":"k-1","modelAliases":{"a/b":"m"}}`, false, "INVALID_MODEL_ALIASES", "modelAliases", `alias "a/b" must be 1 to 200 characters without spaces or '/'`, errs.Invalid},
		{"alias's model", keyed, `{"apiKey":"k-1","modelAliases":{"fast":" "}}`, false, "INVALID_MODEL_ALIASES", "modelAliases", `the model of alias "fast"`, errs.Invalid},
		{"alias of itself", keyed, `{"apiKey":"k-1","modelAliases":{"m":"m"}}`, false, "INVALID_MODEL_ALIASES", "modelAliases", `alias "m" names itself`, errs.Invalid},
		{"alias given twice", keyed, `{"apiKey":"k-1","modelAliases":{"fast":"m"," fast":"n"}}`, false, "INVALID_MODEL_ALIASES", "modelAliases", "is given twice", errs.Invalid},
		{"alias a model", keyed, `{"apiKey":"k-1","models":["m","fast"],"modelAliases":{"fast":"m"}}`, false, "MODEL_ALIAS_CONFLICT", "modelAliases", `alias "fast" is already a model`, errs.Invalid},
		{"alias of a hidden model", keyed, `{"apiKey":"k-1","models":["m"],"hiddenModels":["m"],"modelAliases":{"fast":"m"}}`, false, "MODEL_ALIAS_HIDDEN", "modelAliases", `alias "fast" names "m", which is hidden`, errs.Invalid},
		{"no key", keyed, `{}`, false, "API_KEY_REQUIRED", "apiKey", "apiKey is required for an apikey connection", errs.Invalid},
		{"key removed on edit", keyed, `{"apiKey":""}`, true, "API_KEY_REQUIRED", "apiKey", "apiKey is required", errs.Invalid},
		{"oauth without token", keyed, `{"authType":"oauth"}`, false, "ACCESS_TOKEN_REQUIRED", "accessToken", "accessToken is required for an oauth connection", errs.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			row := f.newRow(t, tt.provider)
			if tt.edit {
				if err := f.apply(t, &row, tt.provider, `{"apiKey":"k-stored"}`, true); err != nil {
					t.Fatalf("the stored row: %v", err)
				}
			}
			err := f.apply(t, &row, tt.provider, tt.body, !tt.edit)
			var e *errs.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			if e.Code != tt.code || e.Param != tt.param || e.Class != tt.class || !strings.Contains(e.Message, tt.inMsg) {
				t.Errorf("got %s (class %d) param %q: %q; want %s (class %d) param %q with %q", e.Code, e.Class, e.Param, e.Message, tt.code, tt.class, tt.param, tt.inMsg)
			}
			if strings.Contains(e.Message, "providerSpecificData.region") {
				t.Errorf("the message names the field by its path, not its label: %q", e.Message)
			}
		})
	}
}

// TestCreateRefusals: a create names a catalogue provider; an edit never
// changes it.
func TestCreateRefusals(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		body, code, inMsg string
	}{
		{`{}`, "PROVIDER_REQUIRED", `field "provider" is required`},
		{`{"provider":"  "}`, "PROVIDER_REQUIRED", `field "provider" is required`},
		{`{"provider":"nobody"}`, "UNKNOWN_PROVIDER", `unknown provider "nobody"; see GET /api/providers/catalog`},
		{`{"provider":"` + strings.Repeat("x", 80) + `"}`, "UNKNOWN_PROVIDER", `"` + strings.Repeat("x", 60) + `"`},
	} {
		var in connfields.Input
		_ = json.Unmarshal([]byte(tt.body), &in)
		_, err := f.env.Provider(in)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != tt.code || e.Param != "provider" || !strings.Contains(e.Message, tt.inMsg) {
			t.Errorf("%s: %v, want %s", tt.body, err, tt.code)
		}
	}
	var in connfields.Input
	_ = json.Unmarshal([]byte(`{"provider":" ACME "}`), &in)
	if p, err := f.env.Provider(in); err != nil || p.ID != keyed {
		t.Errorf("a trimmed id: %v, %v", p.ID, err)
	}
	row := f.newRow(t, keyed)
	for body, code := range map[string]string{`{"provider":"acme-local"}`: "PROVIDER_IMMUTABLE", `{"provider":" Acme "}`: "", `{}`: ""} {
		var in connfields.Input
		_ = json.Unmarshal([]byte(body), &in)
		err := connfields.SameProvider(in, row)
		var e *errs.Error
		if (code == "") != (err == nil) || (err != nil && (!errors.As(err, &e) || e.Code != code || e.Param != "provider")) {
			t.Errorf("%s: %v, want %q", body, err, code)
		}
	}
}

// TestNewRow: a new connection's auth type is its category's.
func TestNewRow(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for cat, want := range map[providers.Category]string{providers.CategoryAPIKey: "apikey", providers.CategoryLocal: "none", providers.CategoryOAuth: "oauth"} {
		row := connfields.NewRow(providers.Provider{ID: "p", Name: "P", Category: cat}, "id1", 3, now)
		if row.AuthType != want || row.ID != "id1" || row.Provider != "p" || row.Name != "P" || row.Priority != 3 || !row.IsActive ||
			row.TestStatus != "active" || row.CreatedAt != now.UnixMilli() || row.Models != "[]" || row.RateLimitOverrides != "{}" {
			t.Errorf("%s: %+v", cat, row)
		}
	}
}
