package api

import (
	"context"

	"github.com/tidwall/gjson"

	"omniroute/backend/connprobe"
	"omniroute/backend/prefillcap"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/store"
)

// Executors picks the upstream executor of a wire format (the gateway's own
// set, so a credential check sends exactly what a request would).
type Executors = connprobe.Executors

// prober is the connection check (backend/connprobe) on the API's parts.
func (a *API) prober() *connprobe.Prober {
	return &connprobe.Prober{Engine: a.Engine, Store: a.Store, Discovery: a.Discovery, Executors: a.Executors,
		FreshToken: a.FreshToken, Quotas: a.Quotas, Prefills: a.Prefills, Reload: a.Reload, Clock: a.Clock}
}

// checkConnection runs the credential check, storing discovery's list
// (connprobe.Prober.Run).
func (a *API) checkConnection(ctx context.Context, id string) (connprobe.Check, discovery.Result, error) {
	return a.prober().Run(ctx, id, true)
}

// refreshModels runs model discovery for a connection and stores the result
// (connprobe.Discovered). It returns the updated row.
func (a *API) refreshModels(ctx context.Context, id string) (store.Connection, discovery.Result, error) {
	return a.prober().Discover(ctx, id, true, true)
}

// discoverModels is refreshModels; refresh false asks with the stored token
// as it is (an import's just-read token); save false only asks.
func (a *API) discoverModels(ctx context.Context, id string, refresh, save bool) (store.Connection, discovery.Result, error) {
	return a.prober().Discover(ctx, id, refresh, save)
}

// modelPrefill is the connection JSON's per-model prefill: for each served
// model, {prefill, prefillSource} (the declaration, else what was learned
// or probed, else unknown).
func (a *API) modelPrefill(row store.Connection, served []string) map[string]prefillcap.Entry {
	out := make(map[string]prefillcap.Entry, len(served))
	declared := gjson.Get(row.ProviderSpecificData, "assistantPrefill").String()
	if live, ok := a.Engine.Registry().Get(row.ID); ok {
		declared = string(live.Prefill)
	}
	for _, m := range served {
		out[m] = a.Prefills.View(row.ID, m, declared)
	}
	return out
}
