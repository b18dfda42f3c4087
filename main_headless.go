//go:build !desktop && !bindings

package main

import (
	"context"
	"io"

	"omniroute/app"
	"omniroute/backend/server"
)

// runApp runs the gateway without a window: this build has no GUI libraries,
// so --headless and --hidden change nothing.
func runApp(ctx context.Context, opts server.Options, _ runFlags, stdout io.Writer) error {
	return app.RunHeadless(ctx, opts, stdout)
}
