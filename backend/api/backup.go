package api

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"omniroute/backend/backup"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// PassphraseHeader carries a restore's passphrase (the body is the backup
// file itself, so curl --data-binary @file works as is).
const PassphraseHeader = "X-OmniRoute-Backup-Passphrase"

func (a *API) backupRoutes(m *mux.Router) {
	m.HandleFunc("/backup", a.management(a.backupRoute)).Methods(http.MethodPost)
	m.HandleFunc("/restore", a.management(a.restoreRoute)).Methods(http.MethodPost)
}

// backupRoute serves POST /api/backup {passphrase, withLog?}: the backup file
// of this gateway's configuration, as a download.
func (a *API) backupRoute(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Passphrase string `json:"passphrase"`
		WithLog    bool   `json:"withLog"`
	}
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	f, err := a.sealBackup(in.Passphrase, in.WithLog)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		httpx.WriteError(w, err)
		return
	}
	name := "omniroute-backup-" + a.Clock.Now().UTC().Format("20060102-150405") + ".json"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

func (a *API) sealBackup(passphrase string, withLog bool) (*backup.File, error) {
	if len([]rune(passphrase)) < backup.MinPassphrase { // before reading anything
		_, err := backup.Seal(nil, backup.Meta{}, passphrase)
		return nil, err
	}
	v, err := a.Store.SchemaVersion()
	if err != nil {
		return nil, err
	}
	st, err := backup.Read(a.Store, a.Box, withLog)
	if err != nil {
		return nil, err
	}
	return backup.Seal(st, backup.Meta{SchemaVersion: v, AppVersion: a.Version, Now: a.Clock.Now()}, passphrase)
}

// restoreRoute serves POST /api/restore[?apply=true]: the body is a backup
// file and the passphrase is in X-OmniRoute-Backup-Passphrase. Without apply
// (a dry run) it answers what a restore would change; with apply it replaces
// the configuration in one transaction and reloads every in-memory view, so
// the running gateway serves the restored connections, keys and settings at
// once.
func (a *API) restoreRoute(w http.ResponseWriter, r *http.Request) {
	apply := false
	if v := r.URL.Query().Get("apply"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_QUERY", "apply must be true or false").WithParam("apply"))
			return
		}
		apply = b
	}
	if v := r.URL.Query().Get("dryRun"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_QUERY", "dryRun must be true or false").WithParam("dryRun"))
			return
		}
		apply = apply && !b
	}
	if r.ContentLength > backup.MaxFileSize {
		httpx.WriteError(w, errs.New(errs.TooLarge, "REQUEST_TOO_LARGE", "the backup file is %d bytes; the limit is %d", r.ContentLength, int64(backup.MaxFileSize)))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, backup.MaxFileSize)
	f, err := backup.Parse(r.Body)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	v, err := a.Store.SchemaVersion()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	next, err := f.Open(r.Header.Get(PassphraseHeader), v)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	cur, err := backup.Read(a.Store, a.Box, next.HasLog())
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := map[string]any{"applied": false, "changes": backup.Diff(cur, next),
		"backup": map[string]any{"createdAt": f.CreatedAt, "schemaVersion": f.SchemaVersion, "appVersion": f.AppVersion, "withLog": f.WithLog}}
	if apply {
		if err := backup.Apply(a.Store, a.Box, next); err != nil {
			httpx.WriteError(w, err)
			return
		}
		if a.Restored != nil {
			if err := a.Restored(); err != nil {
				httpx.WriteError(w, err)
				return
			}
		}
		out["applied"] = true
		if a.Events != nil {
			a.Events.Publish("settings", map[string]any{"section": "restore"})
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}
