// Package agents points IDE coding agents (Claude Code, Codex CLI, Gemini CLI, opencode,
// Kilo Code CLI, Qwen Code, Continue, aider, the Cline CLI and extension, Crush, Cursor) at the local
// OmniRoute gateway.
//
// For agents with a config file it merges the minimal OmniRoute settings into
// that file, keeping a backup of the previous version so the change can be
// undone; for agents configured only through their UI it returns the exact
// values to paste. It also computes the environment `omniroute run <agent>`
// needs to start an agent against the gateway without writing anything.
package agents

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Agent kinds.
const (
	// KindFile marks an agent whose configuration file Setup writes.
	KindFile = "file"
	// KindManual marks an agent configured through its own UI; Setup only
	// returns instructions for it.
	KindManual = "manual"
)

// PlaceholderModel is the model id written for agents that need one when
// Options.Model is empty; users can change it afterwards in the agent.
const PlaceholderModel = "gpt-4o-mini"

// Sentinel errors, for callers to map with errors.Is.
var (
	// ErrUnknownAgent is returned for an agent id that is not supported.
	ErrUnknownAgent = errors.New("agents: unknown agent")
	// ErrNothingToUndo is returned by Undo when there is no backup and no
	// OmniRoute-created file to remove.
	ErrNothingToUndo = errors.New("agents: nothing to undo")
	// ErrNoAPIKey is returned when an operation needs Options.APIKey and it
	// is empty.
	ErrNoAPIKey = errors.New("agents: no API key configured")
	// ErrNotRunnable is returned by RunEnv for agents that are editor
	// extensions or apps that environment variables cannot configure.
	ErrNotRunnable = errors.New("agents: agent cannot be started with omniroute run")
	// ErrUnsupportedConfig is returned when an existing config file cannot be
	// edited safely (invalid JSON, YAML/TOML shapes this package does not
	// handle); the file is left unchanged.
	ErrUnsupportedConfig = errors.New("agents: refusing to edit config file")
)

// Options configures a Manager.
type Options struct {
	// Home is the user's home directory; every config path derives from it
	// unless an agent-specific variable in Env overrides it.
	Home string
	// Env is an environment snapshot used for path resolution only
	// (XDG_CONFIG_HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, CONTINUE_GLOBAL_DIR,
	// CLINE_DATA_DIR, CLINE_PROVIDER_SETTINGS_PATH).
	Env map[string]string
	// BaseURL is the gateway root, e.g. http://127.0.0.1:20128 (no /v1).
	BaseURL string
	// APIKey is the OmniRoute client key written into agent configs.
	APIKey string
	// Model is the agent's main model, a name the gateway routes; see
	// PlaceholderModel for agents that need one when it is empty.
	Model string
	// Opus, Sonnet and Haiku are the names Claude Code's model families
	// resolve to (ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL); Haiku is also
	// its small-fast (background) model. Empty ones fall back to Model.
	Opus, Sonnet, Haiku string
	// Autocomplete and Embed are the models of Continue's autocomplete role
	// (fill-in-the-middle through /v1/completions) and embed role
	// (/v1/embeddings, for indexing). An empty Autocomplete falls back to
	// Model; an empty Embed writes no embed entry (Continue then embeds
	// locally).
	Autocomplete, Embed string
	// ContextWindow is Model's context window in tokens (0: unknown), written
	// where an agent takes one: Claude Code's CLAUDE_CODE_MAX_CONTEXT_TOKENS
	// for a non-Claude model (it would assume 1M and never compact), Codex's
	// model_context_window, opencode's and Kilo's limit.context (with
	// limit.output, outputTokens), Qwen Code's contextWindowSize and
	// Continue's contextLength, Crush's context_window.
	ContextWindow int
	// Now returns the current time, for backup names; defaults to time.Now.
	Now func() time.Time
}

// Agent describes one supported agent and its on-disk status.
type Agent struct {
	// ID is the stable identifier used by the CLI and API (e.g. "codex").
	ID string `json:"id"`
	// Name is the display name.
	Name string `json:"name"`
	// Kind is KindFile or KindManual.
	Kind string `json:"kind"`
	// ConfigPath is the file Setup writes; empty for manual agents.
	ConfigPath string `json:"configPath,omitempty"`
	// Configured reports that the config file points at this gateway.
	Configured bool `json:"configured"`
	// HasBackup reports that Undo has something to restore or remove.
	HasBackup bool `json:"hasBackup"`
	// Unreachable, when set, says why the agent cannot be pointed at this
	// gateway's endpoint at all (e.g. it calls a custom endpoint from its
	// vendor's servers, which cannot reach a gateway on this computer), so
	// the dashboard says so instead of offering a setup that cannot work.
	Unreachable string `json:"unreachable,omitempty"`
}

// Instructions are the environment variables and manual steps that point an
// agent at the gateway; they are shown to the user to copy.
type Instructions struct {
	// Env holds variables to export (never nil; empty when the agent is
	// configured only through its UI or file).
	Env map[string]string `json:"env"`
	// Steps are human-readable steps with the exact values to enter.
	Steps []string `json:"steps"`
}

// Result reports what Setup or Undo did.
type Result struct {
	// Agent is the agent id.
	Agent string `json:"agent"`
	// Path is the config file (empty for manual agents).
	Path string `json:"path,omitempty"`
	// BackupPath is the backup Setup wrote, or the backup Undo restored
	// (and deleted).
	BackupPath string `json:"backupPath,omitempty"`
	// Created reports, for Setup, that the file did not exist and OmniRoute
	// created it; for Undo, that the OmniRoute-created file was removed.
	Created bool `json:"created"`
	// Changed reports whether the file on disk changed; a Setup that finds
	// the config already in place changes nothing and makes no backup.
	Changed bool `json:"changed"`
	// Instructions are the values to copy (and, for file agents, any step
	// still needed such as exporting a variable).
	Instructions Instructions `json:"instructions"`
	// Notes are what the user still has to do after a file agent's Setup
	// (nil when the file holds everything).
	Notes []string `json:"notes,omitempty"`
}

// Manager configures agents for one gateway/key; it is safe for concurrent
// use (file operations are serialized).
type Manager struct {
	o  Options
	mu sync.Mutex
}

// New returns a Manager for o. BaseURL is normalized (trailing "/" and a
// trailing "/v1" are removed) and Env is copied.
func New(o Options) *Manager {
	env := make(map[string]string, len(o.Env))
	for k, v := range o.Env {
		env[k] = v
	}
	o.Env = env
	o.BaseURL = strings.TrimRight(strings.TrimSpace(o.BaseURL), "/")
	o.BaseURL = strings.TrimRight(strings.TrimSuffix(o.BaseURL, "/v1"), "/")
	o.Model = strings.TrimSpace(o.Model)
	o.Opus, o.Sonnet, o.Haiku = strings.TrimSpace(o.Opus), strings.TrimSpace(o.Sonnet), strings.TrimSpace(o.Haiku)
	o.Autocomplete, o.Embed = strings.TrimSpace(o.Autocomplete), strings.TrimSpace(o.Embed)
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Manager{o: o}
}

// WithModels returns a Manager for the same user, gateway and key that writes
// the given model names (Options.Model, Opus, Sonnet, Haiku).
func (m *Manager) WithModels(model, opus, sonnet, haiku string) *Manager {
	o := m.o
	o.Model, o.Opus, o.Sonnet, o.Haiku = model, opus, sonnet, haiku
	return New(o)
}

// WithContextWindow returns a Manager like m that writes n as the main
// model's context window (Options.ContextWindow).
func (m *Manager) WithContextWindow(n int) *Manager {
	o := m.o
	o.ContextWindow = n
	return New(o)
}

// WithRoles returns a Manager like m that also writes Continue's
// autocomplete and embed models (Options.Autocomplete, Embed).
func (m *Manager) WithRoles(autocomplete, embed string) *Manager {
	o := m.o
	o.Autocomplete, o.Embed = autocomplete, embed
	return New(o)
}

// spec is one row of the agent table.
type spec struct {
	id, name, kind string
	// cmd is the program RunEnv returns; empty when not runnable.
	cmd string
	// path returns the config file path, "" when it cannot be resolved.
	path func(o *Options) string
	// apply returns the new file content given the current one.
	apply func(o *Options, old []byte, exists bool) ([]byte, error)
	// configured reports whether content points at the gateway.
	configured func(o *Options, data []byte) bool
	// instructions returns the values to copy; path is the config file.
	instructions func(o *Options, path string) Instructions
	// runEnv returns the env for `omniroute run`.
	runEnv func(o *Options) map[string]string
	// runArgs are arguments put before the user's for `omniroute run` (nil: none).
	runArgs func(o *Options) []string
	// notes returns extra steps for Setup's result (may be nil).
	notes func(o *Options, path string) []string
	// unreachable returns why the agent cannot reach the gateway at
	// o.BaseURL at all ("" when it can; nil: always can).
	unreachable func(o *Options) string
	// companion is a second file Setup writes (and Undo restores) with this
	// one, for an agent that reads its settings from two files (the Gemini
	// CLI: the endpoint from ~/.gemini/.env, the auth type from
	// settings.json). Only path, apply and configured are used.
	companion *spec
}

// agentTable lists the supported agents in display order. It is never
// modified.
var agentTable = [...]spec{
	claudeSpec,
	codexSpec,
	geminiSpec,
	opencodeSpec,
	kiloSpec,
	qwenSpec,
	continueSpec,
	aiderSpec,
	clineCLISpec,
	crushSpec,
	clineSpec,
	cursorSpec,
}

func lookup(id string) (*spec, error) {
	for i := range agentTable {
		if agentTable[i].id == id {
			return &agentTable[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, id)
}

// List returns every supported agent with its status read from disk.
func (m *Manager) List() []Agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Agent, 0, len(agentTable))
	for i := range agentTable {
		s := &agentTable[i]
		a := Agent{ID: s.id, Name: s.name, Kind: s.kind}
		if s.unreachable != nil {
			a.Unreachable = s.unreachable(&m.o)
		}
		if s.kind == KindFile {
			a.ConfigPath = s.path(&m.o)
			if a.ConfigPath != "" {
				a.Configured = fileConfigured(s, &m.o, a.ConfigPath)
				if c := s.companion; c != nil {
					a.Configured = a.Configured && fileConfigured(c, &m.o, c.path(&m.o))
				}
				a.HasBackup = len(undoEntries(a.ConfigPath)) > 0
			}
		}
		out = append(out, a)
	}
	return out
}

// Setup writes the OmniRoute settings into the agent's config file (backing
// up the previous version) or, for manual agents, returns the instructions.
func (m *Manager) Setup(id string) (Result, error) {
	s, err := lookup(id)
	if err != nil {
		return Result{}, err
	}
	if err := m.validate(true); err != nil {
		return Result{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.kind == KindManual {
		return Result{Agent: s.id, Instructions: s.instructions(&m.o, "")}, nil
	}
	path := s.path(&m.o)
	if path == "" {
		return Result{}, errors.New("agents: home directory is not set")
	}
	var also Result
	if c := s.companion; c != nil {
		// Both files are checked before either is written: a refusal leaves both as they were.
		cpath := c.path(&m.o)
		for _, f := range []struct {
			s    *spec
			path string
		}{{s, path}, {c, cpath}} {
			if err := m.checkApply(f.s, f.path); err != nil {
				return Result{}, err
			}
		}
		if also, err = m.setupFile(c, cpath); err != nil {
			return Result{}, err
		}
	}
	res, err := m.setupFile(s, path)
	if err != nil {
		return Result{}, err
	}
	if s.companion != nil {
		res.Changed = res.Changed || also.Changed
		note := "Also wrote " + also.Path
		if also.BackupPath != "" {
			note += " (backup " + also.BackupPath + ")"
		}
		if also.Changed {
			res.Notes = append(res.Notes, note+".")
		}
	}
	res.Instructions = s.instructions(&m.o, path)
	if s.notes != nil {
		res.Notes = append(res.Notes, s.notes(&m.o, path)...)
	}
	res.Instructions.Steps = append(res.Instructions.Steps, res.Notes...)
	return res, nil
}

// Undo restores the newest backup of the agent's config file (deleting that
// backup), or removes the file if OmniRoute created it. It returns
// ErrNothingToUndo when neither exists.
func (m *Manager) Undo(id string) (Result, error) {
	s, err := lookup(id)
	if err != nil {
		return Result{}, err
	}
	if s.kind == KindManual {
		return Result{}, fmt.Errorf("%w: %s has no config file", ErrNothingToUndo, s.name)
	}
	path := s.path(&m.o)
	if path == "" {
		return Result{}, errors.New("agents: home directory is not set")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	res, err := undoFile(s.id, path)
	if c := s.companion; c != nil {
		// The companion is undone too; it may have nothing left (written
		// unchanged), which is not an error when the main file had something.
		if _, cerr := undoFile(s.id, c.path(&m.o)); cerr == nil && errors.Is(err, ErrNothingToUndo) {
			return Result{Agent: s.id, Path: c.path(&m.o), Changed: true}, nil
		}
	}
	return res, err
}

// Instructions returns the environment variables and steps that point the
// agent at the gateway, for every agent kind. With no API key configured a
// placeholder stands in for it.
func (m *Manager) Instructions(id string) (Instructions, error) {
	s, err := lookup(id)
	if err != nil {
		return Instructions{}, err
	}
	if err := m.validate(false); err != nil {
		return Instructions{}, err
	}
	o := m.o
	if o.APIKey == "" {
		o.APIKey = "<your OmniRoute API key>"
	}
	path := ""
	if s.kind == KindFile {
		path = s.path(&o)
	}
	return s.instructions(&o, path), nil
}

// RunEnv returns the program to start and the extra KEY=VALUE environment
// (sorted) that makes it use the gateway, without writing any file.
// Editor-hosted agents return ErrNotRunnable. Codex also needs the arguments
// RunCommand adds (its provider table as -c overrides).
func (m *Manager) RunEnv(id string) (cmd string, env []string, err error) {
	s, err := lookup(id)
	if err != nil {
		return "", nil, err
	}
	if s.cmd == "" || s.runEnv == nil {
		return "", nil, fmt.Errorf("%w: configure %s in its settings (see Instructions)", ErrNotRunnable, s.name)
	}
	if err := m.validate(true); err != nil {
		return "", nil, err
	}
	vars := s.runEnv(&m.o)
	env = make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return s.cmd, env, nil
}

// RunCommand returns the program, its full argument list (OmniRoute's own
// arguments, if any, then every one of args unchanged) and the extra
// environment that start the agent against the gateway without writing any
// file.
func (m *Manager) RunCommand(id string, args []string) (cmd string, argv []string, env []string, err error) {
	cmd, env, err = m.RunEnv(id)
	if err != nil {
		return "", nil, nil, err
	}
	s, _ := lookup(id)
	if s.runArgs != nil {
		argv = append(argv, s.runArgs(&m.o)...)
	}
	return cmd, append(argv, args...), env, nil
}

// validate checks the options an operation depends on; needKey requires a
// non-empty API key.
func (m *Manager) validate(needKey bool) error {
	u, err := url.Parse(m.o.BaseURL)
	if m.o.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("agents: invalid gateway base URL %q", m.o.BaseURL)
	}
	if needKey && m.o.APIKey == "" {
		return ErrNoAPIKey
	}
	if strings.IndexFunc(m.o.APIKey, badKeyRune) >= 0 {
		return errors.New("agents: API key contains whitespace or control characters")
	}
	for _, name := range []string{m.o.Model, m.o.Opus, m.o.Sonnet, m.o.Haiku, m.o.Autocomplete, m.o.Embed} {
		if strings.IndexFunc(name, isControl) >= 0 {
			return errors.New("agents: model id contains control characters")
		}
	}
	return nil
}

func badKeyRune(r rune) bool { return r <= ' ' || r == 0x7f }

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// v1 is the OpenAI-compatible base URL (with /v1).
func (o *Options) v1() string { return o.BaseURL + "/v1" }

// model returns Options.Model or PlaceholderModel.
func (o *Options) model() string {
	if o.Model != "" {
		return o.Model
	}
	return PlaceholderModel
}

// maxOutputTokens is the most output tokens written beside a context window
// where an agent wants both (opencode's limit.output): opencode's own cap
// for a model whose output limit it does not know.
const maxOutputTokens = 32000

// outputTokens is the output limit written with ContextWindow: a quarter of
// the window, at most maxOutputTokens (the gateway knows no model's own
// output limit; opencode keeps this much of the window free for the answer).
func (o *Options) outputTokens() int {
	return min(o.ContextWindow/4, maxOutputTokens)
}

// family returns a Claude Code family's model: its own, else Model.
func (o *Options) family(name string) string {
	if name != "" {
		return name
	}
	return o.Model
}

// dirFromEnv returns the absolute directory in Env[key], else Home joined
// with elem (or "" when Home is unset). Relative overrides are ignored, as
// the XDG spec requires.
func (o *Options) dirFromEnv(key string, elem ...string) string {
	if v := o.Env[key]; v != "" && filepath.IsAbs(v) {
		return v
	}
	if o.Home == "" {
		return ""
	}
	return filepath.Join(append([]string{o.Home}, elem...)...)
}

// joinIf joins dir and name, or returns "" when dir is "".
func joinIf(dir string, name ...string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(append([]string{dir}, name...)...)
}
