// Package migrations holds the numbered SQL schema files, embedded in the binary
// and applied in order at start by the store.
package migrations

import "embed"

// Files holds every NNNN_name.sql migration.
//
//go:embed *.sql
var Files embed.FS
