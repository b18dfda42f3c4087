// Package migrations holds the numbered SQL schema files, embedded in the binary
// and applied in order at start by the store: the SQLite ones at the top level,
// the PostgreSQL ones under postgres/ with the same numbers and names, so both
// dialects reach the same schema version through the same steps.
package migrations

import (
	"embed"
	"io/fs"
)

// Files holds every NNNN_name.sql migration for SQLite.
//
//go:embed *.sql
var Files embed.FS

//go:embed postgres/*.sql
var postgresFiles embed.FS

// Postgres returns every NNNN_name.sql migration for PostgreSQL.
func Postgres() fs.FS {
	sub, err := fs.Sub(postgresFiles, "postgres")
	if err != nil {
		panic(err) // the directory is embedded: this cannot fail
	}
	return sub
}
