//go:build clients

package clients

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// Client executables, relative to clientsDir.
const (
	kiloBin  = "node_modules/.bin/kilo"  // the Kilo Code CLI (@kilocode/cli)
	clineBin = "node_modules/.bin/cline" // the Cline CLI (cline)
)

// checkToolRoundTrip asserts that the connection keyed key saw a tool round
// trip on /v1/chat/completions for model: two requests or more for it. (The
// agent printing the fake's "Tool said: <marker>" already proves the tool's
// output reached the fake: it answers so only to a tool result; the last
// request may be a title or summary request instead.)
func checkToolRoundTrip(t *testing.T, s *stack, key, model string) {
	t.Helper()
	if n := s.up.ModelHits(key, model); n < 2 {
		t.Fatalf("the fake saw %d requests for %s, want a tool round trip (2+): %v", n, model, s.up.AllHits())
	}
	if p := s.up.LastPath(key); p != "/v1/chat/completions" {
		t.Errorf("upstream path %q", p)
	}
}

// TestKiloRightAfterSetup: `omniroute setup kilo --model M` writes the
// provider into ~/.config/kilo/kilo.json, then `kilo run` in that HOME with
// no other environment runs the bash tool the fake asks for and prints the
// fake's answer quoting its output, whole through a 429 and a cut answer
// (addFaultyNeighbours).
func TestKiloRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	s.up.SetToolCalls(map[string]string{"bash": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

	cfg := setupAgent(t, s, "kilo", "glm-4.6", ".config", "kilo", "kilo.json")
	checkOpencodeLimit(t, cfg)
	// Quiet: no update check, models.dev fetch, share or codebase indexing.
	env := append(cleanEnv(), "HOME="+s.home, "KILO_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_MODELS_FETCH=1",
		"KILO_DISABLE_SHARE=1", "KILO_DISABLE_CODEBASE_INDEXING=1", "KILO_DISABLE_SESSION_INGEST=1")
	stdout, stderr, code := runWithin(t, 2*clientTimeout, t.TempDir(), env, kiloBin, "run", "Run the marker command.")
	want := fakeupstream.ToolResultText(toolMarker)
	if code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("kilo run: exit %d, want %q in its output\nkilo.json:\n%s\nstdout:\n%s\nstderr:\n%s", code, want, cfg, stdout, stderr)
	}
	checkToolRoundTrip(t, s, "key-oa", "glm-4.6")
	checkFaultsInvisible(t, s)
}

// TestClineCLIRightAfterSetup: `omniroute setup cline-cli --model M` writes
// the openai-compatible provider into ~/.cline/data/settings/providers.json,
// then `cline --json "…"` in that HOME with no other environment runs the
// run_commands tool the fake asks for and ends with the fake's answer
// quoting the tool's output, whole through a 429 and a cut answer
// (addFaultyNeighbours).
func TestClineCLIRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-oa", "glm-4.6")
	s.up.SetToolCalls(map[string]string{"run_commands": `{"commands":["echo ` + toolMarker + `"]}`})

	cfg := setupAgent(t, s, "cline-cli", "glm-4.6", ".cline", "data", "settings", "providers.json")
	stdout, stderr, code := run(t, t.TempDir(), append(cleanEnv(), "HOME="+s.home), clineBin, "--json", "Run the marker command.")
	var result gjson.Result
	for _, line := range strings.Split(stdout, "\n") {
		if r := gjson.Parse(line); r.Get("type").String() == "run_result" {
			result = r
		}
	}
	text := result.Get("text").String()
	if code != 0 || result.Get("finishReason").String() != "completed" || !strings.HasPrefix(text, fakeupstream.ToolResultText("")) ||
		!strings.Contains(text, toolMarker) || result.Get("model.provider").String() != "openai-compatible" {
		t.Fatalf("cline: exit %d, run_result %s\nproviders.json:\n%s\nstdout:\n%s\nstderr:\n%s", code, result.Raw, cfg, stdout, stderr)
	}
	checkToolRoundTrip(t, s, "key-oa", "glm-4.6")
	checkFaultsInvisible(t, s)
}
