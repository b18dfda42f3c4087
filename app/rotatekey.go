package app

import (
	"fmt"
	"io"
	"os"
	"time"

	"omniroute/backend/config"
	"omniroute/backend/secrets"
	"omniroute/backend/server"
)

// RotateKeyCommand is `omniroute rotate-secret-key [--new-key-file FILE]`:
// every stored credential and client key re-sealed with a new sealing key,
// with every gateway on the database stopped.
func RotateKeyCommand(args []string, proc config.Process, stdout, stderr io.Writer) int {
	const usage = "usage: omniroute rotate-secret-key [--new-key-file FILE]"
	newKeyFile := ""
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--new-key-file" && i+1 < len(args):
			newKeyFile = args[i+1]
			i++
		default:
			fmt.Fprintln(stderr, usage)
			return 2
		}
	}
	r, err := server.RotateSecretKey(proc, os.Getenv, newKeyFile, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	fmt.Fprintf(stdout, "Re-sealed %d stored secret(s) with the new key.\n", r.Resealed)
	switch {
	case r.KeyFile != "" && proc.DatabaseURL != "":
		fmt.Fprintf(stdout, "The new key is in %s (the old one kept in %s): copy it into every instance's data directory before starting them.\n",
			r.KeyFile, r.OldKeyFile)
	case r.KeyFile != "":
		fmt.Fprintf(stdout, "The new key is in %s (the old one kept in %s).\n", r.KeyFile, r.OldKeyFile)
	default:
		fmt.Fprintf(stdout, "Now give every instance the new key (%s or %s) before starting them.\n", secrets.EnvKey, secrets.EnvKeyFile)
	}
	return 0
}
