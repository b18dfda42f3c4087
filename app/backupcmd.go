package app

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"omniroute/backend/backup"
	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/server"
)

// PassphraseEnv supplies the backup passphrase to scripts (no prompt).
const PassphraseEnv = "OMNIROUTE_BACKUP_PASSPHRASE"

// Terminal is where the backup commands prompt: the passphrase (echo off when
// it is a terminal) and the restore's confirmation.
type Terminal struct {
	In     *os.File
	Getenv func(string) string
}

// BackupCommand is `omniroute backup FILE [--with-log]`: write the backup
// file of the configuration, sealed with a passphrase; through the running
// gateway's API when it holds the data directory.
func BackupCommand(args []string, proc config.Process, term Terminal, version string, stdout, stderr io.Writer) int {
	const usage = "usage: omniroute backup FILE [--with-log]   (passphrase: prompt, or " + PassphraseEnv + ")"
	path, withLog := "", false
	for _, a := range args {
		switch {
		case a == "--with-log":
			withLog = true
		case strings.HasPrefix(a, "-") || path != "":
			fmt.Fprintln(stderr, usage)
			return 2
		default:
			path = a
		}
	}
	if path == "" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	pass, err := term.passphrase(stderr, true)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	f, err := server.Backup(proc, path, pass, withLog, version)
	if lockedByGateway(err) {
		// The gateway runs on this directory (the desktop app at login): its API makes the backup.
		if err = backupRemote(proc, path, pass, withLog, err, stdout); err == nil {
			return 0
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", errText(err))
		return 1
	}
	fmt.Fprintf(stdout, "Backed up into %s (schema version %d):\n", path, f.SchemaVersion)
	tables := make([]string, 0, len(f.Tables))
	for t := range f.Tables {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(stdout, "  %-28s %d\n", t, len(f.Tables[t]))
	}
	if !withLog {
		fmt.Fprintln(stdout, "The request log was left out (add --with-log to keep it).")
	}
	return 0
}

// RestoreCommand is `omniroute restore FILE [--yes] [--dry-run]
// [--allow-unauthenticated]`: show what restoring the backup changes, then
// (asked, or with --yes) apply it to the stopped gateway's database, or
// through the running gateway's API when it holds the data directory;
// recorded in the audit log. --allow-unauthenticated reads a file written by
// an older OmniRoute (layout version 1, whose content is not authenticated).
func RestoreCommand(args []string, proc config.Process, term Terminal, stdout, stderr io.Writer) int {
	const usage = "usage: omniroute restore FILE [--yes] [--dry-run] [--allow-unauthenticated]   (passphrase: prompt, or " + PassphraseEnv + ")"
	path, yes, dry, legacy := "", false, false, false
	for _, a := range args {
		switch {
		case a == "--yes" || a == "-y":
			yes = true
		case a == "--dry-run":
			dry = true
		case a == "--allow-unauthenticated":
			legacy = true
		case strings.HasPrefix(a, "-") || path != "":
			fmt.Fprintln(stderr, usage)
			return 2
		default:
			path = a
		}
	}
	if path == "" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	pass, err := term.passphrase(stderr, false)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	actor := ""
	if term.Getenv != nil {
		if u := term.Getenv("USER"); u != "" {
			actor = "command line (" + u + ")"
		}
	}
	decide := func(head string, p backup.Preview) bool {
		fmt.Fprintln(stdout, head)
		printPreview(stdout, p)
		if dry {
			return false
		}
		if yes {
			return true
		}
		fmt.Fprint(stderr, "Replace the current configuration with this backup? [y/N] ")
		line, _ := bufio.NewReader(term.In).ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
	}
	res, err := server.Restore(proc, path, pass, server.RestoreOptions{AllowUnauthenticated: legacy, Actor: actor}, func(f *backup.File, p backup.Preview) bool {
		return decide(fmt.Sprintf("Backup of %s (schema version %d%s):", f.CreatedAt, f.SchemaVersion, map[bool]string{true: ", with the request log"}[f.WithLog]), p)
	})
	applied := res.Applied
	if lockedByGateway(err) {
		// The gateway runs on this directory: its API previews and applies,
		// and it serves the restored configuration at once.
		applied, err = restoreRemote(proc, path, pass, legacy, err, decide)
	}
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", errText(err))
		return 1
	}
	switch {
	case applied:
		fmt.Fprintln(stdout, "Restored.")
	case dry:
		fmt.Fprintln(stdout, "Dry run: nothing was changed.")
	default:
		fmt.Fprintln(stdout, "Not restored: nothing was changed.")
		return 1
	}
	return 0
}

// printPreview lists, per kind, what a restore adds, changes and removes.
func printPreview(w io.Writer, p backup.Preview) {
	kinds := make([]string, 0, len(p))
	for k := range p {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		c := p[k]
		if c.Empty() {
			fmt.Fprintf(w, "  %-12s unchanged\n", k)
			continue
		}
		fmt.Fprintf(w, "  %-12s %d added, %d changed, %d removed\n", k, len(c.Added), len(c.Changed), len(c.Removed))
		for _, l := range []struct {
			sign  string
			items []backup.Item
		}{{"+", c.Added}, {"~", c.Changed}, {"-", c.Removed}} {
			for i, it := range l.items {
				if i == 20 {
					fmt.Fprintf(w, "      %s … %d more\n", l.sign, len(l.items)-20)
					break
				}
				if it.Name != "" {
					fmt.Fprintf(w, "      %s %s (%s)\n", l.sign, it.Name, it.ID)
				} else {
					fmt.Fprintf(w, "      %s %s\n", l.sign, it.ID)
				}
			}
		}
	}
}

// passphrase reads the passphrase: the environment's, else a prompt (twice
// for a new backup, so a typo does not seal a file nobody can open).
func (t Terminal) passphrase(stderr io.Writer, confirm bool) (string, error) {
	if t.Getenv != nil {
		if v := t.Getenv(PassphraseEnv); v != "" {
			return v, nil
		}
	}
	if t.In == nil {
		return "", fmt.Errorf("no passphrase: set %s or run in a terminal", PassphraseEnv)
	}
	in := bufio.NewReader(t.In)
	ask := func(prompt string) (string, error) {
		fmt.Fprint(stderr, prompt)
		restore := noEcho(t.In)
		line, err := in.ReadString('\n')
		restore()
		if restore != nil {
			fmt.Fprintln(stderr)
		}
		if err != nil && line == "" {
			return "", fmt.Errorf("no passphrase: set %s or type it at the prompt", PassphraseEnv)
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	p, err := ask("Backup passphrase: ")
	if err != nil || !confirm {
		return p, err
	}
	again, err := ask("Repeat the passphrase: ")
	if err != nil {
		return "", err
	}
	if again != p {
		return "", fmt.Errorf("the passphrases differ")
	}
	return p, nil
}

// errText is an error's text for the terminal (an errs.Error's message, with
// its code).
func errText(err error) string {
	if e, ok := err.(*errs.Error); ok {
		return e.Message + " (" + e.Code + ")"
	}
	return err.Error()
}
