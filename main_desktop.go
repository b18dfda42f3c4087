//go:build desktop || bindings

package main

import (
	"context"
	"io"
	"io/fs"
	"runtime"

	"omniroute/app"
	"omniroute/backend/server"
)

// The desktop toolkits (GTK, Cocoa) and the tray must run on the main thread.
func init() { runtime.LockOSThread() }

// runApp shows the window and the tray, unless --headless was given.
func runApp(ctx context.Context, opts server.Options, flags runFlags, stdout io.Writer) error {
	if flags.headless {
		return app.RunHeadless(ctx, opts, stdout)
	}
	icons, err := fs.Sub(buildAssets, "build")
	if err != nil {
		return err
	}
	return app.RunDesktop(ctx, app.DesktopOptions{Server: opts, Icons: icons, StartHidden: flags.hidden, Stdout: stdout})
}
