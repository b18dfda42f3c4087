//go:build !desktop && !bindings

package main

import (
	"context"
	"io"

	"omniroute/app"
	"omniroute/backend/server"
)

// runApp runs the gateway without a window: this build has no GUI libraries.
func runApp(ctx context.Context, opts server.Options, headless bool, stdout io.Writer) error {
	_ = headless // both flavours accept --headless; this one is always headless
	return app.RunHeadless(ctx, opts, stdout)
}
