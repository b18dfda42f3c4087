// Command omniroute is OmniRoute Desktop: a local LLM gateway that routes every
// AI coding agent's requests across the user's provider accounts and keeps them
// working through quotas, rate limits, outages and stalled streams.
package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"omniroute/app"
	"omniroute/backend/config"
	"omniroute/backend/httpx"
	"omniroute/backend/server"
)

// The version is the VERSION file's, the one string every build, package and
// document shows; a package build may override it, and sets the commit and
// build date, with -ldflags "-X main.version=… -X main.commit=… -X main.buildDate=…".
var (
	version   string
	commit    string
	buildDate string
)

//go:embed VERSION
var versionFile string

// appVersion is the version: the linker's, else the VERSION file's.
func appVersion() string {
	if version != "" {
		return version
	}
	return strings.TrimSpace(versionFile)
}

// buildInfo says which commit the binary was built from and when: the
// linker's values, else the Go toolchain's VCS stamp.
func buildInfo() string {
	c, d := commit, buildDate
	if bi, ok := debug.ReadBuildInfo(); ok && c == "" {
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				c = s.Value[:min(12, len(s.Value))]
			case "vcs.time":
				if d == "" {
					d = s.Value[:min(10, len(s.Value))]
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && c != "" {
			c += "-dirty"
		}
	}
	if c == "" {
		c = "unknown"
	}
	if d == "" {
		return "commit " + c
	}
	return "commit " + c + ", built " + d
}

//go:embed all:frontend/dist
var dist embed.FS

// buildAssets holds the app and tray icons (one per health state).
//
//go:embed build/appicon.png build/icons/*.png
var buildAssets embed.FS

// runFlags are the start-up switches shared by both builds.
type runFlags struct {
	headless bool // gateway and browser dashboard only
	hidden   bool // start with the window hidden (tray only), as at login
	reset    bool // move the old database, key and token aside and start fresh
	// acceptDamagedWAL starts over a damaged WAL with what precedes the damage
	acceptDamagedWAL bool
	// logRequests prints one line per finished request on stdout (the
	// journal, under systemd): time, key, model, connection, status,
	// attempts, latency, error code.
	logRequests bool
	// waitForDB is how long start-up waits for an unreachable team-server
	// database (--wait-for-db; default defaultWaitForDB).
	waitForDB time.Duration
}

// defaultWaitForDB is how long a team-server instance waits at start for a
// PostgreSQL that does not answer yet (a host booting, a database
// restarting) before it gives up.
const defaultWaitForDB = time.Minute

const usage = `OmniRoute Desktop — a local LLM gateway for AI coding agents.

Usage:
  omniroute                 start the app (desktop window and tray in the desktop build)
  omniroute --headless      start only the gateway; the dashboard is served in the browser
  omniroute --hidden        start with the window hidden (tray only), as at login
  omniroute --log-requests  also print one line per request on stdout: time, key name,
                            model, connection, status, attempts, latency, error code
  omniroute --reset         start fresh: move the data directory's database, secret.key
                            and token aside (into reset-<time>/), never deleting them
  omniroute --wait-for-db DURATION
                            with OMNIROUTE_DATABASE_URL: how long start-up waits for a
                            database that does not answer, retrying with a logged
                            backoff (default 1m; 0 fails at once)
  omniroute --accept-damaged-wal
                            start although omniroute.db-wal is damaged, with the
                            transactions before the damage (the log is copied aside first)
  omniroute token           print the management API token
  omniroute setup <agent> [--model M] [--force]
                            point an agent's own config at the gateway with a model a
                            connection serves (default: the agent model map's choice);
                            backup kept; undo with: omniroute setup <agent> --undo
  omniroute run <agent> [args…]
                            start an agent against the gateway, writing nothing; every
                            argument after the agent name goes to the agent
                            agents: claude-code, codex, gemini-cli, opencode, kilo, qwen-code,
                            continue, aider, cline-cli, crush (setup only), cline, cursor
  omniroute import <source> [--path FILE]
                            import a CLI login as a subscription connection
                            (claude-code, codex, gemini-cli); the CLI's file is only read
  omniroute login <provider>
                            sign in with a provider's own device login (open the page
                            it prints and enter the code) as a connection; the usage
                            error lists the providers that have one
  omniroute import-db [--from DIR]
                            copy a SQLite data directory's database (default
                            OMNIROUTE_DATA_DIR) into the empty PostgreSQL database
                            of OMNIROUTE_DATABASE_URL (team server)
  omniroute export --to FILE
                            copy the database (PostgreSQL or SQLite) into a new SQLite file
  omniroute migrate         apply pending schema migrations and print the version
  omniroute rotate-secret-key [--new-key-file FILE]
                            re-seal every stored credential with a new sealing key
                            (every gateway on the database stopped); the new key
                            replaces secret.key, or comes from FILE
  omniroute backup FILE [--with-log]
                            write one file with the settings, connections (secrets
                            sealed with a passphrase), keys (hashed), combos, rules,
                            pricing and budgets; the request log only with --with-log
  omniroute restore FILE [--yes] [--dry-run] [--allow-unauthenticated]
                            show what restoring FILE changes (added/changed/removed),
                            then replace the configuration (asks, unless --yes);
                            the gateway must be stopped (else use Settings → Backup);
                            a file edited after it was made is refused; an older,
                            unauthenticated file only with --allow-unauthenticated
  omniroute --version       print the version
  omniroute --help          show this help

Clients use http://127.0.0.1:20128/v1 with the default API key printed at start.

Environment:
  OMNIROUTE_DATA_DIR        data directory (default: the OS config dir + /omniroute)
  OMNIROUTE_HOST            listen address (default 127.0.0.1)
  OMNIROUTE_PORT            listen port (default 20128)
  OMNIROUTE_ALLOWED_HOSTS   extra Host names accepted besides loopback (comma separated)
  OMNIROUTE_DATABASE_URL    PostgreSQL URL (postgres://…) instead of the embedded SQLite:
                            a team server of several instances (README)
  OMNIROUTE_INSTANCE_NAME   a team server instance's name (default host name:port)
  OMNIROUTE_SECRET_KEY      the credential-sealing key (64 hex characters) instead of
                            the data directory's secret.key (containers, secret managers)
  OMNIROUTE_SECRET_KEY_FILE a file holding that key (e.g. a mounted secret)
  OMNIROUTE_BACKUP_PASSPHRASE
                            the backup/restore passphrase, for scripts (else prompted)
  OMNIROUTE_CIRCUIT_BREAKER_{OAUTH,API_KEY,LOCAL}_{FAILURE_THRESHOLD,DEGRADATION_THRESHOLD,RESET_TIMEOUT_MS}
                            provider circuit breaker defaults
`

// parseWait reads --wait-for-db's duration: a Go duration (30s, 2m) or 0,
// between 0 and 24 h.
func parseWait(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("--wait-for-db %q: want a duration between 0 and 24h (e.g. 30s, 2m)", v)
	}
	return d, nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "__complete" {
		// The shell completions' words (hidden: not in the usage), read
		// before the environment so a completion never fails on it.
		return app.CompleteCommand(args[1:], server.ProviderCatalog(os.Getenv), stdout)
	}
	flags := runFlags{waitForDB: defaultWaitForDB}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "setup" || a == "run" {
			// Everything after a subcommand is its own: `omniroute run codex
			// exec --help` hands --help to codex.
			rest = append(rest, args[i:]...)
			break
		}
		switch a {
		case "-h", "--help", "help":
			fmt.Fprint(stdout, usage)
			return 0
		case "--version", "-version", "version":
			fmt.Fprintf(stdout, "omniroute %s (%s)\n", appVersion(), buildInfo())
			return 0
		case "--headless", "-headless":
			flags.headless = true
		case "--hidden", "-hidden":
			flags.hidden = true
		case "--reset", "-reset":
			flags.reset = true
		case "--accept-damaged-wal", "-accept-damaged-wal":
			flags.acceptDamagedWAL = true
		case "--log-requests", "-log-requests":
			flags.logRequests = true
		case "--wait-for-db", "-wait-for-db":
			if i+1 >= len(args) {
				fmt.Fprintln(stderr, "omniroute: --wait-for-db needs a duration (e.g. 2m, 30s, 0)")
				return 2
			}
			i++
			d, err := parseWait(args[i])
			if err != nil {
				fmt.Fprintln(stderr, "omniroute:", err)
				return 2
			}
			flags.waitForDB = d
		default:
			if v, ok := strings.CutPrefix(a, "--wait-for-db="); ok {
				d, err := parseWait(v)
				if err != nil {
					fmt.Fprintln(stderr, "omniroute:", err)
					return 2
				}
				flags.waitForDB = d
				continue
			}
			rest = append(rest, a)
		}
	}
	proc, err := config.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 2
	}
	if len(rest) > 0 {
		switch rest[0] {
		case "token":
			tok, err := server.LoadOrCreateToken(proc.DataDir)
			if err != nil {
				fmt.Fprintln(stderr, "omniroute:", err)
				return 1
			}
			fmt.Fprintln(stdout, tok)
			return 0
		case "setup", "run":
			return app.AgentCommand(rest[0], rest[1:], proc, stdout, stderr)
		case "import":
			return app.ImportCommand(rest[1:], proc, stdout, stderr)
		case "login":
			return app.LoginCommand(rest[1:], proc, stdout, stderr)
		case "import-db":
			return app.ImportDBCommand(rest[1:], proc, stdout, stderr)
		case "export":
			return app.ExportCommand(rest[1:], proc, stdout, stderr)
		case "migrate":
			return app.MigrateCommand(rest[1:], proc, stdout, stderr)
		case "rotate-secret-key":
			return app.RotateKeyCommand(rest[1:], proc, stdout, stderr)
		case "backup":
			return app.BackupCommand(rest[1:], proc, app.Terminal{In: os.Stdin, Getenv: os.Getenv}, appVersion(), stdout, stderr)
		case "restore":
			return app.RestoreCommand(rest[1:], proc, app.Terminal{In: os.Stdin, Getenv: os.Getenv}, stdout, stderr)
		default:
			fmt.Fprintf(stderr, "omniroute: unknown command %q\n\n%s", strings.Join(rest, " "), usage)
			return 2
		}
	}
	ui, err := fs.Sub(dist, "frontend/dist")
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	// net/http's transport logs through the standard logger, quoting an
	// upstream's raw bytes in some lines ("Unsolicited response … starting
	// with %q"): those lines go to the gateway's log with the bytes redacted.
	log.SetFlags(0)
	log.SetPrefix("")
	log.SetOutput(httpx.PeerBytesLogger(logger.Handler(), slog.LevelWarn).Writer())
	opts := server.Options{WaitForDB: flags.waitForDB, Context: ctx, Process: proc, Dashboard: ui, Version: appVersion(), Reset: flags.reset, AcceptDamagedWAL: flags.acceptDamagedWAL, Log: logger}
	if os.Getenv("GOMEMLIMIT") == "" { // the user's own limit wins
		opts.SetMemoryLimit = debug.SetMemoryLimit
	}
	if flags.logRequests {
		opts.RequestLines = stdout
	}
	if err := runApp(ctx, opts, flags, stdout); err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	return 0
}
