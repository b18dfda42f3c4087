//go:build linux

package hostile

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"omniroute/backend/store"
)

// copyFiles copies the named files of src into a new data directory.
func copyFiles(t *testing.T, src string, names ...string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// connections is how many provider connections the gateway lists.
func (p *proc) connections() int {
	p.t.Helper()
	list, _ := p.mgmt(http.StatusOK, http.MethodGet, "/api/providers", nil)["connections"].([]any)
	return len(list)
}

// crashedWith starts a gateway on a fresh directory, adds n connections and
// kills it (-9): every write since start is still in omniroute.db-wal.
func crashedWith(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, dir)
	for i := range n {
		p.addConn("c"+string(rune('a'+i)), "http://127.0.0.1:9", "sk-durable-0123456789", "m", i+1)
	}
	p.kill()
	return dir
}

// Issue 36 item 2: a copy of omniroute.db without its WAL (a single-file
// backup, a sync tool) taken before the first checkpoint has no tables; it is
// refused, not started as a fresh install with a new default key.
func TestWALLessCopyIsRefusedNotAFreshInstall(t *testing.T) {
	dir := crashedWith(t, 3)
	cp := copyFiles(t, dir, "omniroute.db", "secret.key", "management.token")
	before := snapshot(t, cp)
	out, code := runOnce(t, cp)
	if code == 0 || !strings.Contains(out, "has no tables") || !strings.Contains(out, "omniroute.db-wal") ||
		!strings.Contains(out, "--reset") {
		t.Fatalf("exit %d; want a refusal naming the missing WAL and --reset:\n%s", code, out)
	}
	if strings.Contains(out, "Default key") || strings.Contains(out, "omr_") {
		t.Fatalf("the refusal printed a client key (a fresh install began):\n%s", out)
	}
	sameFiles(t, "after the refusal", before, snapshot(t, cp))

	// With the WAL beside it the same copy is the whole database.
	full := copyFiles(t, dir, "omniroute.db", "omniroute.db-wal", "secret.key", "management.token")
	p := start(t, full)
	if n := p.connections(); n != 3 {
		t.Fatalf("the copy with its WAL lists %d connections, want 3", n)
	}
	p.stop()
}

// A clean shutdown checkpoints: afterwards omniroute.db alone is complete.
func TestCleanShutdownLeavesASelfContainedDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, dir)
	p.addConn("kept", "http://127.0.0.1:9", "sk-durable-0123456789", "m", 1)
	p.stop()
	q := start(t, copyFiles(t, dir, "omniroute.db", "secret.key", "management.token"))
	if n := q.connections(); n != 1 {
		t.Fatalf("a copy of omniroute.db alone after a clean stop lists %d connections, want 1", n)
	}
	q.stop()
}

// A WAL damaged mid-file (1 KB flipped) would lose every transaction after
// the damage without a word; it is refused, and --accept-damaged-wal starts
// on what precedes the damage with the damaged log copied aside.
func TestDamagedWALIsReportedNotTruncated(t *testing.T) {
	dir := crashedWith(t, 12)
	wal := filepath.Join(dir, "omniroute.db-wal")
	b, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+1024; i++ {
		b[i] ^= 0xa5
	}
	if err := os.WriteFile(wal, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	out, code := runOnce(t, dir)
	if code == 0 || !strings.Contains(out, "fails its checksum") || !strings.Contains(out, "--accept-damaged-wal") {
		t.Fatalf("exit %d; want a refusal reporting the damaged WAL:\n%s", code, out)
	}
	sameFiles(t, "after the refusal", before, snapshot(t, dir))

	p := start(t, dir, "--accept-damaged-wal")
	if !strings.Contains(p.logs(), "write-ahead log was damaged") {
		t.Errorf("the accepted start did not log the damage loudly:\n%s", tail(p.logs(), 3000))
	}
	if n := p.connections(); n >= 12 {
		t.Errorf("%d connections after the damage: the damage lost nothing, so this test proves nothing", n)
	}
	p.stop()
	kept, _ := filepath.Glob(filepath.Join(dir, "omniroute.db-wal.damaged-*"))
	if len(kept) != 1 {
		t.Fatalf("damaged WAL copies: %v, want one", kept)
	}
	if c, _ := os.ReadFile(kept[0]); string(c) != string(b) {
		t.Fatal("the copy aside is not the damaged WAL")
	}
}

// Issue 36 item 3: a data directory (or a file in it) owned by another user
// is refused: that user could replace management.token or omniroute.db.
func TestForeignOwnedDataDirIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root; backend/datadir tests the check with an injected uid")
	}
	for _, target := range []string{"", "management.token"} {
		t.Run("chown "+target, func(t *testing.T) {
			dir := configured(t)
			if err := os.Chown(filepath.Join(dir, target), 65534, 65534); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			out, code := runOnce(t, dir)
			if code == 0 || !strings.Contains(out, "owned by uid 65534") || !strings.Contains(out, "chown -R 0 "+dir) {
				t.Fatalf("exit %d; want a refusal naming the foreign owner and the fix:\n%s", code, out)
			}
			sameFiles(t, "after the refusal", before, snapshot(t, dir))
			// The fix in the message works.
			if err := os.Chown(filepath.Join(dir, target), 0, 0); err != nil {
				t.Fatal(err)
			}
			start(t, dir).stop()
		})
	}
}

// Issue 36 item 6: a cooldown and an OPEN breaker persisted a year ahead (the
// clock was wrong when they were written) block for the longest of their
// kind from the start — 24 h for a cooldown, one 30 s reset timeout for an
// API-key breaker — not for a year.
func TestDeadlinesAYearAheadAreClamped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, dir)
	id := p.addConn("ahead", "http://127.0.0.1:9", "sk-durable-0123456789", "m", 1)
	p.stop()

	ahead := time.Now().Add(365 * 24 * time.Hour).UnixMilli()
	st, err := store.Open(filepath.Join(dir, "omniroute.db"))
	if err != nil {
		t.Fatal(err)
	}
	breakerKey := "openai-compatible:" + id
	if err := st.SaveCooldown(id, store.CooldownFields{RateLimitedUntil: ahead, TestStatus: "unavailable",
		LastError: "rate limited", LastErrorType: "rate_limit", LastErrorAt: ahead, BackoffLevel: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveBreaker(store.BreakerRow{Provider: breakerKey, State: "OPEN", Failures: 12, OpenCycles: 1,
		LastFailureAt: ahead, OpenedAt: ahead, StateChangedAt: ahead}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	before := time.Now()
	q := start(t, dir)
	after := time.Now()
	c, _ := q.mgmt(http.StatusOK, http.MethodGet, "/api/providers/"+id, nil)["connection"].(map[string]any)
	raw, _ := c["rateLimitedUntil"].(string)
	until, err := time.Parse(time.RFC3339, raw)
	if err != nil || until.Before(before.Add(24*time.Hour).Truncate(time.Second)) || until.After(after.Add(24*time.Hour)) {
		t.Fatalf("rateLimitedUntil = %q, want start + 24 h (between %v and %v)", raw, before.Add(24*time.Hour), after.Add(24*time.Hour))
	}
	ph, _ := q.mgmt(http.StatusOK, http.MethodGet, "/api/monitoring/health", nil)["providerHealth"].(map[string]any)
	b, _ := ph[breakerKey].(map[string]any)
	left, _ := b["retryAfterMs"].(float64)
	if b["state"] != "OPEN" || left <= 0 || left > 30000 {
		t.Fatalf("breaker %s after the load: %v; want OPEN with at most 30 s left", breakerKey, b)
	}
	q.stop()
}

// Issue 36 item 7: on a really full disk (a small tmpfs, which needs root),
// key creation answers 507 INSUFFICIENT_STORAGE in the envelope, not a bare
// 500, health says degraded with the storage message, and both clear once
// space is freed.
func TestFullDiskAnswers507(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; backend/server tests the mapping with max_page_count")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	dir := filepath.Join(mnt, "data")
	p := start(t, dir)
	t.Cleanup(p.kill) // before the unmount
	p.addConn("c", "http://127.0.0.1:9", "sk-durable-0123456789", "m", 1)
	health := func() (string, map[string]any) {
		h := p.mgmt(http.StatusOK, http.MethodGet, "/api/monitoring/health", nil)
		s, _ := h["summary"].(map[string]any)
		st, _ := s["storage"].(map[string]any)
		return fmt.Sprint(h["status"]), st
	}
	if s, st := health(); s != "healthy" || st != nil {
		t.Fatalf("before: %s %v", s, st)
	}

	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	_ = f.Close()

	var resp *http.Response
	var body []byte
	for i := range 500 {
		resp, body = p.do(http.MethodPost, "/api/keys", map[string]any{"name": fmt.Sprintf("key %d", i)},
			map[string]string{"Authorization": "Bearer " + p.token})
		if resp.StatusCode != http.StatusCreated {
			break
		}
	}
	checkEnvelope(t, "key creation on a full disk", resp.StatusCode, resp.Header.Get("Content-Type"), body,
		http.StatusInsufficientStorage, "INSUFFICIENT_STORAGE")
	if s, st := health(); s != "degraded" || st["state"] != "disk_full" {
		t.Fatalf("health on a full disk: %s %v", s, st)
	}
	p.mustBeUp("on a full disk")

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	p.mgmt(http.StatusCreated, http.MethodPost, "/api/keys", map[string]any{"name": "after"})
	if s, st := health(); s != "healthy" || st != nil {
		t.Fatalf("after space came back: %s %v", s, st)
	}
	p.stop()
}
