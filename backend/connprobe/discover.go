package connprobe

import (
	"context"
	"encoding/json"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// Discover runs model discovery for connection id. refresh false asks with
// the stored token as it is (an import's just-read token), never refreshing
// it first; save stores the answer (Discovered) and reloads the live
// connections, save false only asks (the reach is noted, the answer not
// stored). It returns the row as now stored.
func (p *Prober) Discover(ctx context.Context, id string, refresh, save bool) (store.Connection, discovery.Result, error) {
	c, ok := p.Engine.Registry().Get(id)
	if !ok {
		return store.Connection{}, discovery.Result{}, store.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	target := c.Target("")
	if refresh {
		target = p.freshTarget(ctx, c)
	}
	res := p.Discovery.Discover(ctx, target)
	// Discovery is an attempt like any other for the connection's reach: an
	// upstream nothing answers reads unreachable on every page from now on.
	c.NoteReach(res.Err == nil || res.Err.Code != discovery.CodeUnreachable, discoveryMessage(res), p.Clock.Now())
	row, err := p.Store.Connection(id)
	if err != nil || !save {
		return row, res, err
	}
	d := Discovered(row, res, p.Clock.Now())
	if err := p.Store.SaveDiscoveredModels(id, d); err != nil {
		return row, res, err
	}
	if err := p.Reload(); err != nil {
		return row, res, err
	}
	row.DiscoveredModels, row.ModelsSource, row.ModelsError, row.ModelsRefreshedAt = d.Models, d.Source, d.Error, d.RefreshedAt
	return row, res, nil
}

// Discovered is what a discovery stores on row: the upstream's list, or the
// catalogue default when the upstream cannot answer (an earlier upstream
// list is kept then rather than replaced by the defaults), and why the
// upstream did not answer (the row's modelsError; "" when it did).
func Discovered(row store.Connection, res discovery.Result, now time.Time) store.DiscoveredModels {
	d := store.DiscoveredModels{Models: row.DiscoveredModels, Source: row.ModelsSource, RefreshedAt: now.UnixMilli()}
	if res.Err != nil {
		d.Error = res.Err.Message
	}
	if res.Source == discovery.SourceUpstream || (res.Source == discovery.SourceCatalog && row.ModelsSource != discovery.SourceUpstream) {
		b, _ := json.Marshal(res.Models)
		d.Models, d.Source = string(b), res.Source
	}
	return d
}

// freshTarget is c's target with its OAuth token refreshed when due (a
// failed refresh leaves the stored token: the upstream's answer says why).
func (p *Prober) freshTarget(ctx context.Context, c *routing.Conn) providers.Target {
	t := c.Target("")
	if p.FreshToken != nil && c.AuthType == "oauth" {
		if tok, err := p.FreshToken(ctx, c); err == nil {
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
