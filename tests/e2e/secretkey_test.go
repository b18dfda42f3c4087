package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/tests/fakeupstream"
	"omniroute/tests/testproc"
)

// TestRotateSecretKeyInTheDataDirectory: `omniroute rotate-secret-key` with
// the gateway stopped replaces secret.key (the old one kept beside it) and
// re-seals the stored provider key and client keys: the restarted gateway
// serves the same client key with the same upstream credential. While the
// gateway runs the command is refused (the directory's lock).
func TestRotateSecretKeyInTheDataDirectory(t *testing.T) {
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	dir := t.TempDir()
	g := startGateway(t, dir, 0)
	g.addConn("one", upURL, "key-rotate", 1)
	if resp, body := g.chat(g.key, teamModel, false); resp.StatusCode != http.StatusOK {
		t.Fatalf("before: %d %s", resp.StatusCode, body)
	}
	env := gatewayEnv(dir, 0)
	if _, stderr, code := runCLI(t, env, "rotate-secret-key"); code == 0 {
		t.Fatalf("rotate-secret-key while the gateway runs: exit 0, want a refusal (stderr %q)", stderr)
	}
	clientKey := g.key
	g.stop()
	oldKey, _ := os.ReadFile(filepath.Join(dir, "secret.key"))
	stdout, stderr, code := runCLI(t, env, "rotate-secret-key")
	if code != 0 || !strings.Contains(stdout, "Re-sealed 2 stored secret(s)") {
		t.Fatalf("rotate-secret-key: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	newKey, _ := os.ReadFile(filepath.Join(dir, "secret.key"))
	if len(newKey) != 65 || string(newKey) == string(oldKey) {
		t.Fatalf("secret.key after rotation: %q (before %q)", newKey, oldKey)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "secret.key.old-*"))
	if len(kept) != 1 {
		t.Fatalf("old key kept as %v, want one secret.key.old-*", kept)
	}
	if strings.Contains(stdout+stderr, strings.TrimSpace(string(newKey))) || strings.Contains(stdout+stderr, strings.TrimSpace(string(oldKey))) {
		t.Fatal("the command printed a key")
	}
	g = startGateway(t, dir, 0)
	if g.key != clientKey {
		t.Fatalf("the default client key changed across the rotation: %q → %q", clientKey, g.key)
	}
	before := up.Hits("key-rotate")
	if resp, body := g.chat(clientKey, teamModel, false); resp.StatusCode != http.StatusOK || up.Hits("key-rotate") != before+1 {
		t.Fatalf("after the rotation: %d %s (upstream hits with the stored key %d → %d)", resp.StatusCode, body, before, up.Hits("key-rotate"))
	}
	g.stop()
}

// TestSecretKeyFromTheEnvironment: with OMNIROUTE_SECRET_KEY the gateway
// seals with that key and writes no secret.key; OMNIROUTE_SECRET_KEY_FILE
// with the same key serves the same credentials; rotation then needs
// --new-key-file, after which the new key serves and the old one no longer
// starts the gateway.
func TestSecretKeyFromTheEnvironment(t *testing.T) {
	up := fakeupstream.New()
	upURL := up.Start()
	t.Cleanup(up.Close)
	dir := t.TempDir()
	oldHex, newHex := strings.Repeat("1f", 32), strings.Repeat("2e", 32)
	g := startGateway(t, dir, 0, "OMNIROUTE_SECRET_KEY="+oldHex)
	g.addConn("one", upURL, "key-env", 1)
	clientKey := g.key
	g.stop()
	if _, err := os.Stat(filepath.Join(dir, "secret.key")); err == nil {
		t.Fatal("secret.key was written although OMNIROUTE_SECRET_KEY provides the key")
	}
	keyFile := filepath.Join(t.TempDir(), "mounted-key")
	if err := os.WriteFile(keyFile, []byte(oldHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g = startGateway(t, dir, 0, "OMNIROUTE_SECRET_KEY_FILE="+keyFile)
	if resp, body := g.chat(clientKey, teamModel, false); resp.StatusCode != http.StatusOK || up.Hits("key-env") != 1 {
		t.Fatalf("with the key from OMNIROUTE_SECRET_KEY_FILE: %d %s", resp.StatusCode, body)
	}
	g.stop()

	env := gatewayEnv(dir, 0, "OMNIROUTE_SECRET_KEY="+oldHex)
	if _, stderr, code := runCLI(t, env, "rotate-secret-key"); code == 0 || !strings.Contains(stderr, "--new-key-file") {
		t.Fatalf("rotation of an environment key without --new-key-file: exit %d %q", code, stderr)
	}
	newFile := filepath.Join(t.TempDir(), "new-key")
	if err := os.WriteFile(newFile, []byte(newHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, code := runCLI(t, env, "rotate-secret-key", "--new-key-file", newFile); code != 0 ||
		!strings.Contains(stdout, "OMNIROUTE_SECRET_KEY") {
		t.Fatalf("rotation: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := tryStart(t, dir, testproc.FreePort(t), "OMNIROUTE_SECRET_KEY="+oldHex); err == nil {
		t.Fatal("the gateway started with the old key after the rotation")
	}
	g = startGateway(t, dir, 0, "OMNIROUTE_SECRET_KEY="+newHex)
	if resp, body := g.chat(clientKey, teamModel, false); resp.StatusCode != http.StatusOK || up.Hits("key-env") != 2 {
		t.Fatalf("with the new key: %d %s", resp.StatusCode, body)
	}
	g.stop()
}

// TestRotateSecretKeyTeamServer: on a team server the rotation is refused
// while an instance is live; with both stopped it re-seals the shared
// database, and both instances serve again once A's new secret.key is
// copied to B.
func TestRotateSecretKeyTeamServer(t *testing.T) {
	ts := newTeamServer(t, false)
	ts.a.addConn("one", ts.upURL, "key-team-rotate", 1)
	envA := gatewayEnv(ts.a.dir, 0, "OMNIROUTE_DATABASE_URL="+ts.url)
	if _, stderr, code := runCLI(t, envA, "rotate-secret-key"); code == 0 || !strings.Contains(stderr, "is running on this database") {
		t.Fatalf("rotation with live instances: exit %d %q", code, stderr)
	}
	ts.a.stop()
	ts.b.stop()
	stdout, stderr, code := runCLI(t, envA, "rotate-secret-key")
	if code != 0 || !strings.Contains(stdout, "copy it into every instance's data directory") {
		t.Fatalf("rotation: exit %d\n%s\n%s", code, stdout, stderr)
	}
	key, err := os.ReadFile(filepath.Join(ts.a.dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ts.b.dir, "secret.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	env := "OMNIROUTE_DATABASE_URL=" + ts.url
	a := startGateway(t, ts.a.dir, 0, env)
	b := startGateway(t, ts.b.dir, 0, env)
	for _, g := range []*gatewayProc{a, b} {
		if resp, body := g.chat(g.key, teamModel, false); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s after the rotation: %d %s", g.base, resp.StatusCode, body)
		}
	}
	a.stop()
	b.stop()
}
