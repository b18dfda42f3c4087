// Package pgtest runs a throw-away PostgreSQL server for tests: a fresh
// cluster (initdb) in a temporary directory, started with pg_ctl on a free
// loopback port and its own socket directory, trusted local access, stopped
// and removed by Stop. With OMNIROUTE_TEST_PG_URL set it uses that server
// instead (each test still gets its own database).
//
// PostgreSQL is required, never optional: when neither is available Start
// returns an error that says how to install it, and the caller fails.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"omniroute/tests/testproc"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable that points the tests at an existing server (an
// admin URL, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable).
const EnvURL = "OMNIROUTE_TEST_PG_URL"

// Server is a running PostgreSQL server.
type Server struct {
	// AdminURL reaches the server's postgres database as a superuser.
	AdminURL string
	dir      string // the cluster's directory ("" when EnvURL was used)
	pgCtl    string
	opts     string   // the server options pg_ctl start passes
	asUser   []string // runuser prefix when running as root
	seq      atomic.Int64
}

// ErrUnavailable wraps every reason Start could not provide a server.
var ErrUnavailable = errors.New("PostgreSQL is required by these tests but is not available")

// Start returns a server: the one named by OMNIROUTE_TEST_PG_URL, or a new
// throw-away cluster.
func Start() (*Server, error) {
	if u := os.Getenv(EnvURL); u != "" {
		return startURL(u)
	}
	return StartOwned()
}

func startURL(u string) (*Server, error) {
	s := &Server{AdminURL: u}
	if err := s.ping(10 * time.Second); err != nil {
		return nil, fmt.Errorf("%w: %s=%s does not answer: %v", ErrUnavailable, EnvURL, redact(u), err)
	}
	return s, nil
}

// StartOwned always creates a throw-away cluster, even with
// OMNIROUTE_TEST_PG_URL set: for tests that stop and restart the server.
func StartOwned() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "omniroute-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, pgCtl: filepath.Join(bin, "pg_ctl")}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the cluster belongs to the
		// postgres system user (Debian's package creates it).
		pg, err := user.Lookup("postgres")
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("%w: running as root needs the postgres system user to own the cluster: %v", ErrUnavailable, err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		s.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: initdb: %v\n%s", ErrUnavailable, err, out)
	}
	port, err := testproc.PickPort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s -c fsync=off "+
		"-c synchronous_commit=off -c full_page_writes=off -c max_connections=200", port, dir)
	s.opts = opts
	if out, err := s.run(s.pgCtl, "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: pg_ctl start: %v\n%s\n%s", ErrUnavailable, err, out, log)
	}
	s.AdminURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := s.ping(30 * time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w: the new cluster does not answer: %v", ErrUnavailable, err)
	}
	return s, nil
}

// binDir finds PostgreSQL's server programs: Debian keeps them in
// /usr/lib/postgresql/<version>/bin (the newest wins), others on the PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("%w: initdb not found (install Debian's postgresql package: apt-get install postgresql, "+
		"or set %s to a server's admin URL)", ErrUnavailable, EnvURL)
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func (s *Server) run(prog string, args ...string) ([]byte, error) {
	argv := append(append([]string{}, s.asUser...), prog)
	argv = append(argv, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

func (s *Server) ping(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, s.AdminURL)
		if err == nil {
			err = conn.Ping(ctx)
			_ = conn.Close(ctx)
		}
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops a cluster Start created and removes its directory (a server
// named by OMNIROUTE_TEST_PG_URL is left running).
func (s *Server) Stop() {
	if s == nil || s.dir == "" {
		return
	}
	_, _ = s.run(s.pgCtl, "stop", "-w", "-m", "immediate", "-D", filepath.Join(s.dir, "data"))
	_ = os.RemoveAll(s.dir)
}

// Pause stops a cluster Start created (fast shutdown: clients are
// disconnected) until Resume; for outage tests.
func (s *Server) Pause() error {
	if s.dir == "" {
		return errors.New("pgtest: cannot stop a server named by " + EnvURL + "; use StartOwned")
	}
	if out, err := s.run(s.pgCtl, "stop", "-w", "-m", "fast", "-D", filepath.Join(s.dir, "data")); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// Port is the server's TCP port.
func (s *Server) Port() int {
	u, err := url.Parse(s.AdminURL)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// Resume starts a paused cluster again, with its data and on its port.
func (s *Server) Resume() error {
	if s.dir == "" {
		return errors.New("pgtest: cannot start a server named by " + EnvURL)
	}
	data := filepath.Join(s.dir, "data")
	if out, err := s.run(s.pgCtl, "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(s.dir, "server.log"), "-o", s.opts); err != nil {
		return fmt.Errorf("pg_ctl start: %v\n%s", err, out)
	}
	return s.ping(30 * time.Second)
}

// TB is the part of testing.TB that NewDatabase needs.
type TB interface {
	Helper()
	Name() string
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// NewDatabase creates an empty database for one test, dropped at its end, and
// returns its URL.
func (s *Server) NewDatabase(t TB) string {
	t.Helper()
	name := fmt.Sprintf("t_%d_%d_%s", os.Getpid(), s.seq.Add(1), sanitize(t.Name()))
	if len(name) > 60 {
		name = name[:60]
	}
	if err := s.exec(`CREATE DATABASE "` + name + `"`); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() { _ = s.exec(`DROP DATABASE IF EXISTS "` + name + `" WITH (FORCE)`) })
	u, err := url.Parse(s.AdminURL)
	if err != nil {
		t.Fatalf("pgtest: admin URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func (s *Server) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.AdminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "***")
	}
	return p.String()
}
