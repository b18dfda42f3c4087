package app

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"omniroute/backend/config"
	"omniroute/backend/datadir"
	"omniroute/backend/server"
)

// ImportDBCommand is `omniroute import-db [--from DIR]`: it copies a desktop
// install's SQLite database (DIR, default OMNIROUTE_DATA_DIR) into the empty
// PostgreSQL database of OMNIROUTE_DATABASE_URL, printing the rows per table.
func ImportDBCommand(args []string, proc config.Process, stdout, stderr io.Writer) int {
	const usage = "usage: OMNIROUTE_DATABASE_URL=postgres://… omniroute import-db [--from DATA_DIR]"
	from := proc.DataDir
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--from" && i+1 < len(args):
			from = args[i+1]
			i++
		case strings.HasPrefix(args[i], "--from="):
			from = strings.TrimPrefix(args[i], "--from=")
		default:
			fmt.Fprintln(stderr, usage)
			return 2
		}
	}
	if proc.DatabaseURL == "" {
		fmt.Fprintln(stderr, "omniroute: import-db needs OMNIROUTE_DATABASE_URL (the empty PostgreSQL database to fill)")
		fmt.Fprintln(stderr, usage)
		return 2
	}
	counts, err := server.ImportDB(proc, from)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	fmt.Fprintf(stdout, "Imported %s into PostgreSQL:\n", filepath.Join(from, datadir.DBFile))
	for _, c := range counts {
		fmt.Fprintf(stdout, "  %-28s %d\n", c.Table, c.Rows)
	}
	fmt.Fprintf(stdout, "Credentials are sealed with %s: copy it into the data directory of every instance.\n",
		filepath.Join(from, datadir.KeyFile))
	return 0
}

// ExportCommand is `omniroute export --to FILE`: the database (PostgreSQL with
// OMNIROUTE_DATABASE_URL, else the data directory's SQLite) copied into a new
// SQLite file.
func ExportCommand(args []string, proc config.Process, stdout, stderr io.Writer) int {
	const usage = "usage: omniroute export --to FILE.db"
	to := ""
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--to" && i+1 < len(args):
			to = args[i+1]
			i++
		case strings.HasPrefix(args[i], "--to="):
			to = strings.TrimPrefix(args[i], "--to=")
		default:
			fmt.Fprintln(stderr, usage)
			return 2
		}
	}
	if to == "" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	counts, err := server.Export(proc, to)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	fmt.Fprintf(stdout, "Exported into %s:\n", to)
	for _, c := range counts {
		fmt.Fprintf(stdout, "  %-28s %d\n", c.Table, c.Rows)
	}
	return 0
}

// MigrateCommand is `omniroute migrate`: apply pending migrations and print
// the schema version.
func MigrateCommand(args []string, proc config.Process, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: omniroute migrate")
		return 2
	}
	v, err := server.Migrate(proc)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	fmt.Fprintf(stdout, "schema version %d\n", v)
	return 0
}
