package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/oauth"
	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	provregistry "omniroute/backend/providers/registry"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// LoginOffline is `omniroute login <provider>` when no gateway is running:
// the provider's device sign-in (providers.LoginFlow) happens in the CLI's
// process and its connection is written straight into the data directory's
// database (a running gateway is asked through its management API instead,
// so its memory follows).
type LoginOffline struct {
	Provider providers.Provider
	Flow     *providers.LoginFlow
	Client   *http.Client
	proc     config.Process
	catalog  *providers.Catalog
}

// NewLoginOffline reads the catalogue's row of provider (an id or alias,
// with the OMNIROUTE_<PROVIDER>_OAUTH_* overrides of getenv) for an
// offline sign-in; false when it has no sign-in flow.
func NewLoginOffline(proc config.Process, getenv func(string) string, provider string) (*LoginOffline, bool) {
	cat := provregistry.Catalog(getenv)
	p, ok := cat.Lookup(provider)
	if !ok || p.OAuth == nil || p.LoginFlow() == nil {
		return nil, false
	}
	return &LoginOffline{Provider: p, Flow: p.LoginFlow(), Client: &http.Client{Timeout: 30 * time.Second}, proc: proc, catalog: cat}, true
}

// LoginProviders are the catalogue's rows with a sign-in flow (the CLI's usage).
func LoginProviders(getenv func(string) string) []providers.Provider {
	return provregistry.Catalog(getenv).LoginProviders()
}

// ProviderCatalog is the catalogue the gateway builds (every provider
// module attached), its OAuth endpoints overridden by getenv: the CLI's
// commands list its imports and logins from it.
func ProviderCatalog(getenv func(string) string) *providers.Catalog {
	return provregistry.Catalog(getenv)
}

// Call is what the flow's hooks are called with at now.
func (c *LoginOffline) Call(now time.Time) providers.LoginCall {
	return providers.LoginCall{OAuth: *c.Provider.OAuth, Client: c.Client, Now: now}
}

// Save finishes the login for the approved grant: the module's Finish (e.g.
// a first token exchange), the connection created or updated, and its
// models listed (the catalogue defaults when the endpoint cannot say).
func (c *LoginOffline) Save(ctx context.Context, grant string, now time.Time) (oauth.Imported, error) {
	tokens, err := c.Flow.Finish(ctx, c.Call(now), grant)
	if err != nil {
		return oauth.Imported{}, err
	}
	login := oauth.SignedIn(c.Provider, tokens)
	if err := os.MkdirAll(c.proc.DataDir, 0o700); err != nil {
		return oauth.Imported{}, err
	}
	st, err := OpenStore(c.proc)
	if err != nil {
		return oauth.Imported{}, err
	}
	defer st.Close()
	key, err := secrets.LoadOrCreateKey(filepath.Join(c.proc.DataDir, "secret.key"))
	if err != nil {
		return oauth.Imported{}, err
	}
	box, err := secrets.New(key)
	if err != nil {
		return oauth.Imported{}, err
	}
	res, err := oauth.Upsert(st, box, c.catalog, login, now)
	if err != nil {
		return oauth.Imported{}, err
	}
	base := res.Connection.BaseURL
	if base == "" {
		base = c.Provider.BaseURL
	}
	// The row's own User-Agent (ExtraHeaders) names the client, as on every request.
	dc := &discovery.Client{HTTP: c.Client, UserAgent: c.Provider.ExtraHeaders["User-Agent"]}
	found := dc.Discover(ctx, providers.Target{Provider: c.Provider, BaseURL: base, Secret: login.AccessToken, AuthType: "oauth"})
	b, _ := json.Marshal(found.Models)
	d := store.DiscoveredModels{Models: string(b), Source: found.Source, RefreshedAt: now.UnixMilli()}
	if found.Err != nil {
		d.Error = found.Err.Message
	}
	if err := st.SaveDiscoveredModels(res.Connection.ID, d); err != nil {
		return oauth.Imported{}, err
	}
	return res, nil
}
