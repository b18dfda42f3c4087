// Package app is the application shell around the gateway: the headless runner
// with its start banner, and (in the desktop build) the Wails window and tray.
package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"omniroute/backend/server"
)

// RunHeadless serves the gateway until ctx is done, printing where to reach it.
func RunHeadless(ctx context.Context, opts server.Options, stdout io.Writer) error {
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	l, err := net.Listen("tcp", opts.Process.Addr())
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is OmniRoute already running? set OMNIROUTE_PORT to use another port)", opts.Process.Addr(), err)
	}
	PrintBanner(stdout, srv, opts, l.Addr())
	return srv.Serve(ctx, l)
}

// PrintBanner tells the user the endpoint, the default client key and the dashboard URL.
func PrintBanner(w io.Writer, srv *server.Server, opts server.Options, addr net.Addr) {
	base := "http://" + addr.String()
	key, err := srv.DefaultKey()
	if err != nil {
		key = "(none: create one in the dashboard)"
	}
	fmt.Fprintf(w, "OmniRoute %s is running\n", opts.Version)
	fmt.Fprintf(w, "  Endpoint:    %s/v1\n", base)
	fmt.Fprintf(w, "  API key:     %s\n", key)
	fmt.Fprintf(w, "  Dashboard:   %s/dashboard/#token=%s\n", base, srv.Token())
	fmt.Fprintf(w, "  Data dir:    %s\n", opts.Process.DataDir)
	if exe, err := os.Executable(); err == nil {
		if hint := pathHint(exe, os.Getenv("PATH"), runtime.GOOS); hint != "" {
			fmt.Fprintln(w, hint)
		}
	}
}

// pathHint is the banner's last line when the directory of the running
// binary is not on PATH (so `omniroute token` and `omniroute setup` would not
// be found in a new shell): how to add it, in goos's own terms. "" when it is
// on PATH.
func pathHint(exe, path, goos string) string {
	dir := filepath.Dir(exe)
	for _, p := range filepath.SplitList(path) {
		if filepath.Clean(p) == dir || goos == "windows" && strings.EqualFold(filepath.Clean(p), dir) {
			return ""
		}
	}
	if goos == "windows" {
		return "  PATH:        " + dir + " is not on your PATH; for the omniroute command in a new terminal run in PowerShell\n" +
			"               [Environment]::SetEnvironmentVariable('Path', [Environment]::GetEnvironmentVariable('Path', 'User') + ';" + dir + "', 'User')"
	}
	return "  PATH:        " + dir + " is not on your PATH; for the omniroute command in a new shell add\n" +
		"               export PATH=\"" + dir + ":$PATH\"   to your shell profile (~/.bashrc, ~/.zshrc)"
}
