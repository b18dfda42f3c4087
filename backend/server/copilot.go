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

// CopilotOffline is `omniroute login copilot` when no gateway is running:
// the device login happens in the CLI's process and its connection is
// written straight into the data directory's database (a running gateway is
// asked through its management API instead, so its memory follows).
type CopilotOffline struct {
	Provider providers.Provider
	Client   *http.Client
	proc     config.Process
	catalog  *providers.Catalog
}

// NewCopilotOffline reads the catalogue's GitHub Copilot entry (with the
// OMNIROUTE_GITHUB_COPILOT_OAUTH_* overrides of getenv) for an offline login.
func NewCopilotOffline(proc config.Process, getenv func(string) string) (*CopilotOffline, bool) {
	cat := provregistry.Catalog(getenv)
	p, ok := cat.Lookup("github-copilot")
	if !ok || p.OAuth == nil {
		return nil, false
	}
	return &CopilotOffline{Provider: p, Client: &http.Client{Timeout: 30 * time.Second}, proc: proc, catalog: cat}, true
}

// Save finishes the login for the approved GitHub token: the first Copilot
// token exchange, the connection created or updated, and its models listed
// (the catalogue defaults when the endpoint cannot say).
func (c *CopilotOffline) Save(ctx context.Context, githubToken string, now time.Time) (oauth.Imported, error) {
	login, err := oauth.CopilotLogin(ctx, c.Client, *c.Provider.OAuth, githubToken, now)
	if err != nil {
		return oauth.Imported{}, err
	}
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
	dc := &discovery.Client{HTTP: c.Client, UserAgent: providers.CopilotUserAgent}
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
