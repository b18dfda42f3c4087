package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/oauth"
	"omniroute/backend/server"
)

// ImportCommand is `omniroute import <source> [--path FILE]`, the sources
// being the provider modules' imports (providers.CredentialImport).
// With the gateway running it posts to the gateway's management API
// (POST /api/providers/import), so the new connection is routable at once;
// when nothing listens on the gateway's address it writes the database
// directly and the connection is loaded at the next start. The CLI's own
// credential file is only read, never changed.
func ImportCommand(args []string, proc config.Process, stdout, stderr io.Writer) int {
	cat := server.ProviderCatalog(os.Getenv)
	usage := "usage: omniroute import <" + strings.Join(oauth.Sources(cat), "|") + "> [--path FILE]"
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	source, path := args[0], ""
	for i := 1; i < len(args); i++ {
		switch {
		case args[i] == "--path" && i+1 < len(args):
			path = args[i+1]
			i++
		case strings.HasPrefix(args[i], "--path="):
			path = strings.TrimPrefix(args[i], "--path=")
		default:
			fmt.Fprintln(stderr, usage)
			return 2
		}
	}
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			fmt.Fprintln(stderr, "omniroute: no home directory; give --path")
			return 2
		}
		if path, err = oauth.DefaultPath(cat, source, home); err != nil {
			fmt.Fprintln(stderr, "omniroute:", errs.As(err).Message)
			return 2
		}
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	name, id, created, err := importViaGateway(proc, source, path)
	if errors.Is(err, errNotRunning) {
		var res oauth.Imported
		res, err = server.ImportOffline(proc, os.Getenv, source, path, time.Now())
		name, id, created = res.Connection.Name, res.Connection.ID, res.Created
	}
	if err != nil {
		fmt.Fprintln(stderr, "omniroute: import failed:", message(err))
		return 1
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	fmt.Fprintf(stdout, "Imported %s login: connection %q (%s) %s\n", source, name, id, verb)
	return 0
}

var errNotRunning = errors.New("the gateway is not running")

// importViaGateway asks the running gateway to import; errNotRunning when no
// gateway answers on its address.
func importViaGateway(proc config.Process, source, path string) (name, id string, created bool, err error) {
	token, err := server.LoadOrCreateToken(proc.DataDir)
	if err != nil {
		return "", "", false, err
	}
	body, _ := json.Marshal(map[string]string{"source": source, "path": path})
	req, err := http.NewRequest(http.MethodPost, proc.BaseURL()+"/api/providers/import", bytes.NewReader(body))
	if err != nil {
		return "", "", false, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		var op *net.OpError
		if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial" {
			return "", "", false, errNotRunning
		}
		return "", "", false, err
	}
	defer resp.Body.Close()
	var out struct {
		Connection struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"connection"`
		Created bool `json:"created"`
		Error   struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return "", "", false, fmt.Errorf("unexpected answer from the gateway (HTTP %d)", resp.StatusCode)
	}
	if resp.StatusCode >= 300 {
		return "", "", false, errs.New(errs.Invalid, out.Error.Code, "%s", out.Error.Message)
	}
	return out.Connection.Name, out.Connection.ID, out.Created, nil
}

// message is an error's human text (the stable message of an errs.Error).
func message(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
