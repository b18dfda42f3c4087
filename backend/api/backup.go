package api

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

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
		noteAuditRefusal(r, err)
		httpx.WriteError(w, err)
		return
	}
	f, err := a.sealBackup(in.Passphrase, in.WithLog)
	if err != nil {
		noteAuditRefusal(r, err)
		httpx.WriteError(w, err)
		return
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		httpx.WriteError(w, err)
		return
	}
	noteAudit(r, "backup made")
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
	return backup.SealWith(st, backup.Meta{SchemaVersion: v, AppVersion: a.Version, Now: a.Clock.Now()}, passphrase, a.BackupCost)
}

// RestoreBodyLimit bounds POST /api/restore's body (a backup file with its
// request log): 64 MiB, far above any management body (1 MiB) and a
// configuration's size, and about a hundred thousand log rows. A larger
// file restores with `omniroute restore FILE` (up to backup.MaxFileSize).
const RestoreBodyLimit = 64 << 20

// restoreMinReadTime is the least time a restore's body may take to arrive
// (the bodyReadTimeoutMs setting when longer): 64 MiB at about 0.5 MB/s.
const restoreMinReadTime = 2 * time.Minute

// restoreRoute serves POST /api/restore[?apply=true][&allowUnauthenticated=true]:
// the body is a backup file and the passphrase is in
// X-OmniRoute-Backup-Passphrase. One restore runs at a time (another gets
// 409 RESTORE_IN_PROGRESS before its body is read). Without apply (a dry
// run) it checks the file's MAC, every row's type and the settings, and
// answers what a restore would change; with apply it replaces the
// configuration in one transaction (rolled back on any error) and reloads
// every in-memory view, so the running gateway serves the restored
// connections, keys and settings at once.
func (a *API) restoreRoute(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) {
		noteAuditRefusal(r, err)
		httpx.WriteError(w, err)
	}
	// Refused before its body is read: the connection closes instead of
	// draining (or waiting for) the rest of the file.
	refuse := func(err error) {
		httpx.Abandon(w)
		fail(err)
	}
	q := r.URL.Query()
	flag := func(name string) (bool, error) {
		v := q.Get(name)
		if v == "" {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, errs.New(errs.Invalid, "INVALID_QUERY", "%s must be true or false", name).WithParam(name)
		}
		return b, nil
	}
	apply, err := flag("apply")
	if err != nil {
		refuse(err)
		return
	}
	dry, err := flag("dryRun")
	if err != nil {
		refuse(err)
		return
	}
	apply = apply && !dry
	legacy, err := flag("allowUnauthenticated")
	if err != nil {
		refuse(err)
		return
	}
	select {
	case a.restoring <- struct{}{}:
		defer func() { <-a.restoring }()
	default:
		refuse(errs.New(errs.Conflict, "RESTORE_IN_PROGRESS", "another restore is running; try again when it has finished"))
		return
	}
	if r.ContentLength > RestoreBodyLimit {
		refuse(errs.New(errs.TooLarge, "REQUEST_TOO_LARGE", "the backup file is %d bytes; the dashboard restores at most %d (restore larger files with `omniroute restore FILE`)",
			r.ContentLength, int64(RestoreBodyLimit)))
		return
	}
	timeout := max(time.Duration(a.Settings.General().BodyReadTimeoutMs)*time.Millisecond, restoreMinReadTime)
	body, release, err := httpx.ReadBodyLimited(w, r, httpx.BodyLimits{Max: RestoreBodyLimit, Timeout: timeout})
	defer release()
	if err != nil {
		fail(err)
		return
	}
	f, err := backup.Parse(bytes.NewReader(body))
	if err != nil {
		fail(err)
		return
	}
	v, err := a.Store.SchemaVersion()
	if err != nil {
		fail(err)
		return
	}
	next, err := f.Open(r.Header.Get(PassphraseHeader), v, backup.OpenOptions{AllowUnauthenticated: legacy})
	if err != nil {
		fail(err)
		return
	}
	check := a.CheckRestore
	if check == nil {
		check = func(s backup.State) error { return backup.Check(a.Store, s) }
	}
	if err := check(next); err != nil {
		fail(err)
		return
	}
	cur, err := backup.Read(a.Store, a.Box, next.HasLog())
	if err != nil {
		fail(err)
		return
	}
	out := map[string]any{"applied": false, "changes": backup.Diff(cur, next),
		"backup": map[string]any{"createdAt": f.CreatedAt, "schemaVersion": f.SchemaVersion, "appVersion": f.AppVersion, "withLog": f.WithLog,
			"formatVersion": f.FormatVersion, "authenticated": f.Authenticated()}}
	if !apply {
		noteAudit(r, "restore previewed")
		httpx.WriteJSON(w, http.StatusOK, out)
		return
	}
	if err := backup.Apply(a.Store, a.Box, next); err != nil {
		fail(err)
		return
	}
	noteAudit(r, "restore applied")
	if a.Restored != nil {
		if err := a.Restored(); err != nil {
			fail(err)
			return
		}
	}
	out["applied"] = true
	if a.Events != nil {
		a.Events.Publish("settings", map[string]any{"section": "restore"})
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}
