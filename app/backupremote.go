package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/api"
	"omniroute/backend/backup"
	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/errs"
	"omniroute/backend/server"
)

// The backup commands beside a running gateway: its data directory is
// locked (the desktop app runs at login), so `omniroute backup` and
// `omniroute restore` go through its management API, as the dashboard's
// Backup & Restore does: the management token is read from the data
// directory, the address is the process's (OMNIROUTE_HOST / OMNIROUTE_PORT,
// the defaults the app starts with). Only the HTTP contract is used
// (POST /api/backup, POST /api/restore with and without apply), so the file
// format stays the gateway's business.

// remoteTimeout bounds one call to the running gateway (a backup with the
// request log can be large).
const remoteTimeout = 10 * time.Minute

// runningGateway is the management API of the gateway holding the data
// directory.
type runningGateway struct {
	base, token string
	client      *http.Client
}

// lockedByGateway reports whether err is the data directory's lock, held by
// a running gateway.
func lockedByGateway(err error) bool {
	var locked *datadir.ErrLocked
	return errors.As(err, &locked)
}

func newRunningGateway(proc config.Process) (*runningGateway, error) {
	token, err := server.LoadOrCreateToken(proc.DataDir)
	if err != nil {
		return nil, err
	}
	return &runningGateway{base: proc.BaseURL(), token: token, client: &http.Client{Timeout: remoteTimeout}}, nil
}

// call sends one management request and returns the 2xx body; an error
// answer becomes an errs.Error with the gateway's code and message, and no
// answer at all says so with the lock's error (locked).
func (g *runningGateway) call(path, contentType string, body []byte, hdr map[string]string, locked error) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, g.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Content-Type", contentType)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w\n(no gateway answered at %s: %v; set OMNIROUTE_HOST / OMNIROUTE_PORT to the running gateway's address)",
			locked, g.base, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var env struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(out, &env) != nil || env.Error.Message == "" {
			return nil, fmt.Errorf("the running gateway at %s answered HTTP %d", g.base, resp.StatusCode)
		}
		return nil, errs.New(errs.Invalid, env.Error.Code, "%s", env.Error.Message)
	}
	return out, nil
}

// backupRemote writes the running gateway's backup file to path (which must
// not exist): beside it first, then renamed, mode 0600, as the offline
// backup does.
func backupRemote(proc config.Process, path, pass string, withLog bool, locked error, stdout io.Writer) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists; backup writes a new file", path)
	}
	g, err := newRunningGateway(proc)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"passphrase": pass, "withLog": withLog})
	file, err := g.call("/api/backup", "application/json", body, nil, locked)
	if err != nil {
		return err
	}
	tmp := path + ".partial"
	if err := os.WriteFile(tmp, file, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(stdout, "Backed up the running gateway at %s into %s (schema version %d):\n", g.base, path, gjson.GetBytes(file, "schemaVersion").Int())
	// Row counts when the file lists its tables in the clear.
	var names []string
	counts := map[string]int{}
	gjson.GetBytes(file, "tables").ForEach(func(k, v gjson.Result) bool {
		names, counts[k.Str] = append(names, k.Str), len(v.Array())
		return true
	})
	sort.Strings(names)
	for _, t := range names {
		fmt.Fprintf(stdout, "  %-28s %d\n", t, counts[t])
	}
	if !withLog {
		fmt.Fprintln(stdout, "The request log was left out (add --with-log to keep it).")
	}
	return nil
}

// restorePreview is POST /api/restore's answer.
type restorePreview struct {
	Applied bool `json:"applied"`
	Backup  struct {
		CreatedAt     string `json:"createdAt"`
		SchemaVersion int    `json:"schemaVersion"`
		WithLog       bool   `json:"withLog"`
	} `json:"backup"`
	Changes backup.Preview `json:"changes"`
}

// restoreRemote shows the running gateway's preview of restoring the file
// at path, then (confirm says yes) applies it there; the gateway serves the
// restored configuration at once. It reports whether it was applied.
func restoreRemote(proc config.Process, path, pass string, legacy bool, locked error, confirm func(head string, p backup.Preview) bool) (bool, error) {
	file, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	g, err := newRunningGateway(proc)
	if err != nil {
		return false, err
	}
	hdr := map[string]string{api.PassphraseHeader: pass}
	query := ""
	if legacy {
		query = "&allowUnauthenticated=true"
	}
	out, err := g.call("/api/restore?dryRun=true"+query, "application/json", file, hdr, locked)
	if err != nil {
		return false, err
	}
	var p restorePreview
	if err := json.Unmarshal(out, &p); err != nil {
		return false, fmt.Errorf("unexpected preview from the running gateway at %s: %v", g.base, err)
	}
	head := fmt.Sprintf("Backup of %s (schema version %d%s), to restore into the running gateway at %s:",
		p.Backup.CreatedAt, p.Backup.SchemaVersion, map[bool]string{true: ", with the request log"}[p.Backup.WithLog], g.base)
	if !confirm(head, p.Changes) {
		return false, nil
	}
	if out, err = g.call("/api/restore?apply=true"+query, "application/json", file, hdr, locked); err != nil {
		return false, err
	}
	if err := json.Unmarshal(out, &p); err != nil || !p.Applied {
		return false, fmt.Errorf("the running gateway at %s did not apply the restore", g.base)
	}
	return true, nil
}
