package api

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/oauth"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// listImports is GET /api/providers/import: the CLI logins an import can
// read (the provider modules' Import hooks), each with its label and the
// credential file it reads when no path is given.
func (a *API) listImports(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, ci := range a.Catalog.Imports() {
		p, ok := a.Catalog.BySource(ci.Source)
		if !ok {
			continue
		}
		out = append(out, map[string]any{"source": ci.Source, "label": ci.Label, "provider": p.ID, "defaultPath": ci.PathHint()})
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"sources": out})
}

// importLogin is POST /api/providers/import {source, path?}: it reads the
// CLI's own credential file (read only; path defaults to the CLI's file under
// the user's home) and creates or updates the OAuth connection of that
// account. 201 when created, 200 when an existing connection was updated.
func (a *API) importLogin(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Source *string `json:"source"`
		Path   *string `json:"path"`
	}
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Source == nil || strings.TrimSpace(*in.Source) == "" {
		httpx.WriteError(w, errs.New(errs.Invalid, "SOURCE_REQUIRED", "field \"source\" is required: %s", oauth.SourceList(a.Catalog)).WithParam("source"))
		return
	}
	source := strings.ToLower(strings.TrimSpace(*in.Source))
	path := ""
	if in.Path != nil {
		path = strings.TrimSpace(*in.Path)
	}
	if strings.HasPrefix(path, "~/") {
		home, err := a.home()
		if err != nil {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_PATH", "the user's home directory is unknown; give an absolute path").WithParam("path"))
			return
		}
		path = filepath.Join(home, path[2:])
	}
	if path == "" {
		home, err := a.home()
		if err != nil {
			httpx.WriteError(w, errs.New(errs.Invalid, "PATH_REQUIRED", "the user's home directory is unknown; give the credential file's path").WithParam("path"))
			return
		}
		if path, err = oauth.DefaultPath(a.Catalog, source, home); err != nil {
			httpx.WriteError(w, err)
			return
		}
	}
	login, err := oauth.ReadLogin(a.Catalog, source, path)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	res, err := oauth.Upsert(a.Store, a.Box, a.Catalog, login, a.Clock.Now())
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Reload(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	row := res.Connection
	if p, ok := a.Catalog.Lookup(row.Provider); ok && p.Module != nil && p.Module.RediscoverOnImport {
		row = a.discoverImported(r.Context(), row)
	}
	if a.Events != nil {
		a.Events.Publish("subscription", map[string]any{"id": row.ID, "imported": source, "created": res.Created})
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	httpx.WriteJSON(w, status, map[string]any{"connection": a.connectionJSON(row), "created": res.Created})
}

// discoverImported refreshes an imported subscription's model names from
// the upstream's own list (its module's RediscoverOnImport), on every import and re-import. When the upstream
// answered, the catalogue's import list that seeded the connection is
// dropped, so the names it serves are the upstream's; a list the user edited
// is kept. An upstream that does not answer leaves the import as it is (the
// connection's models error says why). The token just read is used as it
// is: an import never refreshes it (the CLI owns that login).
func (a *API) discoverImported(ctx context.Context, row store.Connection) store.Connection {
	updated, res, err := a.discoverModels(ctx, row.ID, false, true)
	if err != nil {
		return row
	}
	p, ok := a.Catalog.Lookup(row.Provider)
	if !ok || p.OAuth == nil || res.Err != nil || res.Source != discovery.SourceUpstream || len(res.Models) == 0 {
		return updated
	}
	seed, _ := json.Marshal(p.OAuth.Models)
	if updated.Models != string(seed) {
		return updated
	}
	updated.Models = "[]"
	if err := a.Store.SaveConnection(&updated); err != nil {
		updated.Models = string(seed)
		return updated
	}
	_ = a.Reload() // the stored row is right; the next reload serves it
	return updated
}

func (a *API) home() (string, error) {
	if a.HomeDir == nil {
		return "", errs.New(errs.Invalid, "PATH_REQUIRED", "no home directory")
	}
	return a.HomeDir()
}

// subscriptionJSON is what the dashboard shows of a subscription connection:
// token expiry, the usage windows last reported, and the usage wall state.
func (a *API) subscriptionJSON(c *routing.Conn, now time.Time) map[string]any {
	out := map[string]any{}
	if _, exp := c.Credential(); !exp.IsZero() {
		out["expiresAt"] = exp.UTC().Format(time.RFC3339)
	}
	if q := c.QuotaWindows(); !q.ObservedAt.IsZero() {
		win := func(w routing.Window) any {
			if !w.Known() {
				return nil
			}
			m := map[string]any{"utilization": w.Utilization}
			if !w.ResetsAt.IsZero() {
				m["resetsAt"] = w.ResetsAt.UTC().Format(time.RFC3339)
			}
			return m
		}
		out["quota"] = map[string]any{"fiveHour": win(q.FiveHour), "weekly": win(q.Weekly), "daily": win(q.Daily), "dailyModel": q.DailyModel,
			"status": q.Status, "observedAt": q.ObservedAt.UTC().Format(time.RFC3339)}
	}
	if w := a.Walls[c.Provider.Dialect]; w != nil && c.Provider.Dialect != "" {
		if state, ok := w.UsageWall(c.Target(""), now); ok {
			out["wall"] = state
		}
	}
	return out
}

// subscriptionHealth lists the subscription connections' usage windows for
// the management health answer: one entry per OAuth connection that reported
// them, with its most used window, so a nearly spent account is visible
// before it walls.
func (a *API) subscriptionHealth() []map[string]any {
	out := []map[string]any{}
	for _, c := range a.Engine.Registry().All() {
		if c.AuthType != "oauth" {
			continue
		}
		q := c.QuotaWindows()
		if q.ObservedAt.IsZero() {
			continue
		}
		w, name := q.FiveHour, "fiveHour"
		if q.Weekly.Known() && (!w.Known() || q.Weekly.Utilization >= w.Utilization) {
			w, name = q.Weekly, "weekly"
		}
		if q.Daily.Known() && (!w.Known() || q.Daily.Utilization >= w.Utilization) {
			w, name = q.Daily, "daily"
		}
		e := map[string]any{"connectionId": c.ID, "provider": c.Provider.ID, "status": q.Status, "window": name, "utilization": w.Utilization}
		if !w.ResetsAt.IsZero() {
			e["resetsAt"] = w.ResetsAt.UTC().Format(time.RFC3339)
		}
		out = append(out, e)
	}
	return out
}
