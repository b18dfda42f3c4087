//go:build clients

package clients

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/tests/fakeupstream"
)

// geminiBin is the Gemini CLI, relative to clientsDir.
const geminiBin = "node_modules/.bin/gemini"

// geminiSettings is the fresh HOME's ~/.gemini/settings.json: API-key auth
// (the key from GEMINI_API_KEY) and folder trust off, as setup writes them,
// no usage statistics, update checks or telemetry, so the only traffic is
// the gateway's; tools is the "tools" member (the CLI's tool settings).
func geminiSettings(tools string) string {
	return `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "tools": ` + tools + `
}`
}

// geminiNoTools excludes every tool the CLI offers by default, so its
// request carries none and the fake answers with text (with a tool on offer
// the fake always calls one).
const geminiNoTools = `{"core": [], "exclude": ["update_topic", "list_directory", "read_file", "grep_search", "glob",
    "google_web_search", "enter_plan_mode", "invoke_agent", "run_shell_command", "write_file", "replace",
    "web_fetch", "read_many_files", "save_memory", "write_todos", "activate_skill"]}`

// geminiResult is `gemini -p … --output-format json`'s answer.
type geminiResult struct {
	Response string          `json:"response"`
	Stats    json.RawMessage `json:"stats"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// String shows the answer and the error, not the stats' bytes.
func (r geminiResult) String() string {
	if r.Error != nil {
		return fmt.Sprintf("{response %q, error %q}", r.Response, r.Error.Message)
	}
	return fmt.Sprintf("{response %q}", r.Response)
}

// runGemini runs `gemini -p prompt -m model --output-format json` in a fresh
// HOME with GOOGLE_GEMINI_BASE_URL at the gateway and the client key as
// GEMINI_API_KEY, and decodes its result.
func runGemini(t *testing.T, s *stack, tools, model, prompt string, args ...string) (geminiResult, int, string) {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(geminiSettings(tools)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cleanEnv(), "HOME="+home, "GOOGLE_GEMINI_BASE_URL="+s.base, "GEMINI_API_KEY="+s.key,
		"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_SANDBOX=false", "NO_COLOR=1")
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, work, env, geminiBin,
		append([]string{"-p", prompt, "-m", model, "--output-format", "json"}, args...)...)
	var res geminiResult
	if i := strings.Index(stdout, "{"); i >= 0 {
		_ = json.Unmarshal([]byte(strings.TrimSpace(stdout[i:])), &res)
	}
	return res, code, "stdout:\n" + stdout + "\nstderr:\n" + stderr + "\nrequests:\n" + s.rec.summary()
}

// summary lists the recorded requests (method, path), for a failure's log.
func (rc *recorder) summary() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var b strings.Builder
	for _, r := range rc.reqs {
		b.WriteString(r.Method + " " + r.Path + " " + truncateBody(r.Body) + "\n")
	}
	return b.String()
}

func truncateBody(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// TestGeminiCLI: the real Gemini CLI, pointed at the gateway with
// GOOGLE_GEMINI_BASE_URL, answers through an OpenAI-format and an
// Anthropic-format upstream on the Gemini-native API
// (/v1beta/models/{model}:streamGenerateContent, the key in x-goog-api-key),
// a 429 on the first connection unseen.
func TestGeminiCLI(t *testing.T) {
	for _, c := range []struct{ provider, key, model string }{
		{"openai-compatible", "key-gem-oa", "glm-4.6"},
		{"anthropic-compatible", "key-gem-an", "kimi-k2"},
	} {
		t.Run(c.provider, func(t *testing.T) {
			s := newStack(t)
			// The first connection answers 429: the CLI must never see it.
			s.addConn(c.provider, c.key+"-limited", 1, c.model)
			s.addConn(c.provider, c.key, 2, c.model)
			s.up.SetFault(c.key+"-limited", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 429, Headers: map[string]string{"Retry-After": "60"}})

			res, code, out := runGemini(t, s, geminiNoTools, c.model, "Say hello.")
			s.rec.capturePrefix(t, "/v1beta/models/", "gemini-cli-"+c.provider)
			if code != 0 || res.Error != nil || strings.TrimSpace(res.Response) != fakeupstream.Content(c.key) {
				t.Fatalf("gemini exit %d, result %v, want %q\n%s", code, res, fakeupstream.Content(c.key), out)
			}
			if s.up.Hits(c.key+"-limited") == 0 {
				t.Fatal("the 429 connection was never tried")
			}
			// The CLI's own count: every request it made succeeded (no retry of its own).
			if api := gjson.GetBytes(res.Stats, "models."+gjson.Escape(c.model)+".api"); api.Get("totalErrors").Int() != 0 || api.Get("totalRequests").Int() == 0 {
				t.Fatalf("the CLI counted %s\n%s", api.Raw, out)
			}
			posts := s.rec.postsPrefix("/v1beta/models/" + c.model + ":")
			if len(posts) == 0 {
				t.Fatalf("the Gemini CLI sent no Gemini-native request\n%s", out)
			}
			for _, p := range posts {
				if p.Header.Get("x-goog-api-key") != s.key {
					t.Errorf("%s: the client key was not in x-goog-api-key", p.Path)
				}
			}
		})
	}
}

// TestGeminiCLIToolRoundTrip: the fake asks for the CLI's shell tool; the
// CLI runs it and sends the functionResponse back with the call's id, and
// the fake's answer to the tool's output is the CLI's answer.
func TestGeminiCLIToolRoundTrip(t *testing.T) {
	for _, c := range []struct{ provider, key, model string }{
		{"openai-compatible", "key-gemt-oa", "glm-4.6"},
		{"anthropic-compatible", "key-gemt-an", "kimi-k2"},
	} {
		t.Run(c.provider, func(t *testing.T) {
			s := newStack(t)
			s.addConn(c.provider, c.key, 1, c.model)
			s.up.SetToolCalls(map[string]string{"run_shell_command": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

			res, code, out := runGemini(t, s, `{}`, c.model, "Run the marker command.", "--approval-mode", "yolo")
			s.rec.capturePrefix(t, "/v1beta/models/", "gemini-cli-tool-"+c.provider)
			// The CLI wraps the shell's output ("<untrusted_context>\nOutput: …"):
			// the fake's answer to the tool result holds the marker the shell printed.
			if code != 0 || res.Error != nil || !strings.HasPrefix(res.Response, fakeupstream.ToolResultText("")) ||
				!strings.Contains(res.Response, "Output: "+toolMarker) {
				t.Fatalf("gemini exit %d, result %v, want %q with the shell's output\n%s", code, res, fakeupstream.ToolResultText(toolMarker), out)
			}
			posts := s.rec.postsPrefix("/v1beta/models/" + c.model + ":")
			last := posts[len(posts)-1].Body
			var call, resp gjson.Result
			for _, content := range gjson.GetBytes(last, "contents").Array() {
				for _, p := range content.Get("parts").Array() {
					if fc := p.Get("functionCall"); fc.Exists() {
						call = fc
					}
					if fr := p.Get("functionResponse"); fr.Exists() {
						resp = fr
					}
				}
			}
			if call.Get("name").String() != "run_shell_command" || call.Get("id").String() == "" ||
				resp.Get("id").String() != call.Get("id").String() || !strings.Contains(resp.Get("response").Raw, toolMarker) {
				t.Fatalf("the CLI's last request holds call %s and response %s:\n%s", call.Raw, resp.Raw, last)
			}
		})
	}
}

// postsPrefix returns the recorded POSTs whose path starts with prefix.
func (rc *recorder) postsPrefix(prefix string) []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []recorded
	for _, r := range rc.reqs {
		if r.Method == "POST" && strings.HasPrefix(r.Path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// capturePrefix is capture for every POST under prefix (the Gemini paths
// name their model and method).
func (rc *recorder) capturePrefix(t *testing.T, prefix, name string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rc.postsPrefix(prefix) {
		if !seen[r.Path] {
			seen[r.Path] = true
			rc.capture(t, r.Path, name+"-"+r.Path[strings.LastIndexByte(r.Path, ':')+1:])
		}
	}
}

// TestGeminiCLIRightAfterSetup is a new user's flow: `omniroute setup
// gemini-cli --model M` writes ~/.gemini/.env and settings.json, then
// `gemini -p` runs in that HOME, in a new folder it was never told to trust
// (no trust flag), with no other environment and answers through the
// gateway: a tool round trip, whole through a 429 and a cut answer
// (addFaultyNeighbours). The CLI reads ~/.gemini/.env only in a trusted
// folder and refuses -p in an untrusted one: setup turns folder trust off.
func TestGeminiCLIRightAfterSetup(t *testing.T) {
	s := newStack(t)
	s.addConn("openai-compatible", "key-gs-oa", 2, "glm-4.6")
	s.addFaultyNeighbours("openai-compatible", "key-gs-oa", "glm-4.6")
	s.up.SetToolCalls(map[string]string{"run_shell_command": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})

	if out, errOut, code := run(t, s.home, s.userEnv(), binPath, "setup", "gemini-cli", "--model", "glm-4.6"); code != 0 {
		t.Fatalf("omniroute setup gemini-cli: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	envFile, err := os.ReadFile(filepath.Join(s.home, ".gemini", ".env"))
	if err != nil {
		t.Fatal(err)
	}
	settings, err := os.ReadFile(filepath.Join(s.home, ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Folder trust off, and the CLI (which assumes 1M tokens for glm-4.6)
	// compresses at half of the window the gateway knows (200000).
	if gjson.GetBytes(settings, "security.folderTrust.enabled").Raw != "false" || gjson.GetBytes(settings, "model.compressionThreshold").Float() != 0.0954 {
		t.Errorf("settings.json:\n%s", settings)
	}
	work := t.TempDir()
	stdout, stderr, code := run(t, work, geminiUserEnv(s.home), geminiBin,
		"-p", "Run the marker command.", "--output-format", "json", "--approval-mode", "yolo")
	var res geminiResult
	if i := strings.Index(stdout, "{"); i >= 0 {
		_ = json.Unmarshal([]byte(strings.TrimSpace(stdout[i:])), &res)
	}
	if code != 0 || !strings.HasPrefix(res.Response, fakeupstream.ToolResultText("")) || !strings.Contains(res.Response, toolMarker) {
		t.Fatalf("gemini in a fresh HOME: exit %d, result %v\n.env:\n%s\nstdout:\n%s\nstderr:\n%s\nrequests:\n%s",
			code, res, envFile, stdout, stderr, s.rec.summary())
	}
	if m := s.up.LastModel("key-gs-oa"); m != "glm-4.6" {
		t.Errorf("upstream model %q, want glm-4.6", m)
	}
	checkFaultsInvisible(t, s)
}

// TestGeminiCLIThroughRun: `omniroute run gemini-cli -p …` starts the real
// CLI (found on PATH) with the gateway's environment, in a new folder
// (no trust flag). The CLI 0.61 refuses GOOGLE_GEMINI_BASE_URL unless
// settings.json names the API-key auth type (it guesses a "gateway" type its
// own check rejects: exit 41) and refuses -p in an untrusted folder (exit
// 55); setup writes both settings. Here .env points elsewhere after setup:
// run's environment wins.
func TestGeminiCLIThroughRun(t *testing.T) {
	s := newStack(t)
	s.addConn("anthropic-compatible", "key-gr-an", 1, "kimi-k2")
	s.up.SetToolCalls(map[string]string{"run_shell_command": `{"command":"echo ` + toolMarker + `","description":"Print a marker"}`})
	if out, errOut, code := run(t, s.home, s.userEnv(), binPath, "setup", "gemini-cli"); code != 0 {
		t.Fatalf("omniroute setup gemini-cli: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(s.home, ".gemini", ".env"), []byte("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9\nGEMINI_API_KEY=stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := s.userEnv()
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + filepath.Join(clientsDir, "node_modules", ".bin") + string(os.PathListSeparator) + kv[len("PATH="):]
		}
	}
	stdout, stderr, code := run(t, t.TempDir(), env, binPath, "run", "gemini-cli",
		"-p", "Run the marker command.", "--output-format", "json", "--approval-mode", "yolo")
	var res geminiResult
	if i := strings.Index(stdout, "{"); i >= 0 {
		_ = json.Unmarshal([]byte(strings.TrimSpace(stdout[i:])), &res)
	}
	if code != 0 || !strings.HasPrefix(res.Response, fakeupstream.ToolResultText("")) || !strings.Contains(res.Response, toolMarker) {
		t.Fatalf("omniroute run gemini-cli: exit %d, result %v\nstdout:\n%s\nstderr:\n%s\nrequests:\n%s", code, res, stdout, stderr, s.rec.summary())
	}
	if b, _ := os.ReadFile(filepath.Join(s.home, ".gemini", ".env")); !strings.Contains(string(b), "stale") {
		t.Errorf("run changed .env: %s", b)
	}
}

// TestGeminiCLIStreamCutIsContinued: the first Anthropic connection's stream
// is cut after some text; the gateway finishes the answer on the second
// (which takes a prefill) and the CLI prints one whole answer.
func TestGeminiCLIStreamCutIsContinued(t *testing.T) {
	s := newStack(t)
	s.addConn("anthropic-compatible", "key-gc-a", 1, "kimi-k2")
	s.addConn("anthropic-compatible", "key-gc-b", 2, "kimi-k2")
	s.up.SetFault("key-gc-a", fakeupstream.Fault{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 3, Times: 1})

	res, code, out := runGemini(t, s, geminiNoTools, "kimi-k2", "Say hello.")
	if code != 0 || res.Error != nil || strings.TrimSpace(res.Response) != fakeupstream.Content("key-gc-b") {
		t.Fatalf("gemini exit %d, result %v, want %q\n%s", code, res, fakeupstream.Content("key-gc-b"), out)
	}
	if s.up.Hits("key-gc-a") == 0 || s.up.Hits("key-gc-b") == 0 {
		t.Fatalf("hits %v", s.up.AllHits())
	}
	if n := len(s.rec.postsPrefix("/v1beta/models/kimi-k2:")); n != 1 {
		t.Errorf("the CLI sent %d requests, want 1 (no retry of its own)", n)
	}
}

// geminiUserEnv is a user's shell for the Gemini CLI: HOME and nothing of
// the CLI's own (no GEMINI_*/GOOGLE_* variable, no trust override), so only
// what setup wrote configures it.
func geminiUserEnv(home string) []string {
	var env []string
	for _, kv := range cleanEnv() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "GOOGLE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}
