package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"omniroute/app/tray"
	"omniroute/backend/agents"
	"omniroute/backend/api"
	"omniroute/backend/config"
	"omniroute/backend/server"
)

// AgentManager builds the agent configurator for the current user.
func AgentManager(baseURL, key string) *agents.Manager { return agents.ForCurrentUser(baseURL, key) }

const agentUsage = `usage:
  omniroute setup <agent> [--model M] [--force]
                                        write the agent's config to use the gateway with model M
                                        (default: the agent model map's choice); backup kept;
                                        refused when every connection serving M is unreachable
                                        or has its key rejected, unless --force
  omniroute setup <agent> --undo        restore the agent's previous config
  omniroute run <agent> [args…]         start the agent against the gateway; every argument
                                        after the agent name goes to the agent
agents: `

// AgentCommand runs `omniroute setup <agent> [--model M] [--undo]` and
// `omniroute run <agent> [args…]`. Setup asks the running gateway which model
// names route (so it can refuse a model no connection serves) and writes the
// files itself, in the invoking user's HOME.
func AgentCommand(verb string, args []string, proc config.Process, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		var ids []string
		for _, a := range agents.New(agents.Options{BaseURL: "http://127.0.0.1"}).List() {
			ids = append(ids, a.ID)
		}
		sort.Strings(ids)
		fmt.Fprintf(stderr, "%s%s\n", agentUsage, strings.Join(ids, ", "))
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	id := args[0]
	if verb == "run" {
		return runAgent(id, args[1:], proc, stdout, stderr)
	}
	var model string
	undo, force := false, false
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case a == "--undo":
			undo = true
		case a == "--force" || a == "-f":
			force = true
		case a == "--model" || a == "-m":
			if i+1 >= len(rest) || strings.TrimSpace(rest[i+1]) == "" {
				fmt.Fprintln(stderr, "omniroute: --model needs a model name (see GET /v1/models)")
				return 2
			}
			i++
			model = rest[i]
		case strings.HasPrefix(a, "--model="):
			model = strings.TrimPrefix(a, "--model=")
		default:
			fmt.Fprintf(stderr, "omniroute: unknown setup option %q\n%s", a, agentUsage)
			return 2
		}
	}
	if undo {
		key, _ := server.DefaultKeyFromDataDir(proc)
		res, err := AgentManager(proc.BaseURL(), key).Undo(id)
		if err != nil {
			fmt.Fprintln(stderr, "omniroute:", err)
			return 1
		}
		fmt.Fprintf(stdout, "Restored %s\n", res.Path)
		return 0
	}
	key, err := server.DefaultKeyFromDataDir(proc)
	if err != nil {
		fmt.Fprintf(stderr, "omniroute: no client key yet (%v); start OmniRoute once first\n", err)
		return 1
	}
	base := AgentManager(proc.BaseURL(), key)
	if _, err := base.Instructions(id); err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	models, err := gatewayAgentModels(proc, id, model)
	if err != nil {
		fmt.Fprintf(stderr, "omniroute: setup %s refused: %v\n", id, err)
		return 1
	}
	if models.Warning != "" {
		// Claude Code would show nothing for minutes while it retries fast
		// errors: say so before writing, and write only when asked to.
		if !force {
			fmt.Fprintf(stderr, "omniroute: setup %s refused: %s\nFix the connection (dashboard Overview), choose another model with --model, or write it anyway with --force.\n", id, models.Warning)
			return 1
		}
		fmt.Fprintf(stderr, "omniroute: warning: %s\n", models.Warning)
	}
	res, err := models.Manager(base).Setup(id)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	fmt.Fprint(stdout, describeSetup(res, models))
	return 0
}

// runAgent starts the agent with the gateway's environment, writing nothing.
func runAgent(id string, args []string, proc config.Process, stdout, stderr io.Writer) int {
	key, err := server.DefaultKeyFromDataDir(proc)
	if err != nil {
		fmt.Fprintf(stderr, "omniroute: no client key yet (%v); start OmniRoute once first\n", err)
		return 1
	}
	m := AgentManager(proc.BaseURL(), key)
	if _, _, err := m.RunEnv(id); err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	models, err := gatewayAgentModels(proc, id, "")
	var unreachable *unreachableError
	switch {
	case errors.As(err, &unreachable):
		fmt.Fprintf(stderr, "omniroute: warning: %v; starting %s with its own default model\n", err, id)
	case err != nil:
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	default:
		m = models.Manager(m)
	}
	cmdName, argv, env, err := m.RunCommand(id, args)
	if err != nil {
		fmt.Fprintln(stderr, "omniroute:", err)
		return 1
	}
	cmd := exec.Command(cmdName, argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "omniroute: cannot start %s: %v\n", cmdName, err)
		return 1
	}
	return 0
}

// unreachableError: the gateway is not running (or not at proc's address).
type unreachableError struct{ url string }

func (e *unreachableError) Error() string {
	return fmt.Sprintf("OmniRoute is not running at %s (start it with `omniroute`), so it cannot say which models your connections serve", e.url)
}

// gatewayAgentModels asks the running gateway (GET /api/agents/{id}/models)
// which names to write for the agent.
func gatewayAgentModels(proc config.Process, id, model string) (api.AgentModels, error) {
	token, err := server.LoadOrCreateToken(proc.DataDir)
	if err != nil {
		return api.AgentModels{}, err
	}
	u := proc.BaseURL() + "/api/agents/" + url.PathEscape(id) + "/models"
	if model != "" {
		u += "?model=" + url.QueryEscape(model)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return api.AgentModels{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return api.AgentModels{}, &unreachableError{url: proc.BaseURL()}
	}
	defer resp.Body.Close()
	var out struct {
		Models api.AgentModels `json:"models"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return api.AgentModels{}, fmt.Errorf("unexpected answer from %s (%s)", proc.BaseURL(), resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		if out.Error.Message == "" {
			out.Error.Message = resp.Status
		}
		return api.AgentModels{}, errors.New(out.Error.Message)
	}
	return out.Models, nil
}

func describeSetup(res agents.Result, models api.AgentModels) string {
	var b strings.Builder
	switch {
	case res.Path != "" && res.Changed:
		fmt.Fprintf(&b, "Configured %s in %s", res.Agent, res.Path)
		if res.BackupPath != "" {
			fmt.Fprintf(&b, " (backup: %s)", res.BackupPath)
		}
		fmt.Fprintf(&b, "\nUndo with: omniroute setup %s --undo\n", res.Agent)
	case res.Path != "":
		fmt.Fprintf(&b, "%s is already configured in %s\n", res.Agent, res.Path)
	}
	if models.Warning != "" {
		fmt.Fprintf(&b, "Warning: %s\n", models.Warning)
	}
	if models.Model != "" {
		fmt.Fprintf(&b, "Model: %s (%s)\n", models.Model, map[string]string{"requested": "as asked", "setting": "from the agent model map",
			"default": "the first healthy combo or served model; choose with --model"}[models.Source])
		if models.Haiku != "" && models.Haiku != models.Model {
			fmt.Fprintf(&b, "Background (haiku / small-fast) model: %s\n", models.Haiku)
		}
		if models.Opus != "" && models.Opus != models.Model {
			fmt.Fprintf(&b, "Opus model: %s\n", models.Opus)
		}
	}
	if len(res.Instructions.Env) > 0 && res.Path == "" {
		b.WriteString("Environment:\n")
		keys := make([]string, 0, len(res.Instructions.Env))
		for k := range res.Instructions.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  export %s=%s\n", k, res.Instructions.Env[k])
		}
	}
	steps := res.Instructions.Steps
	if res.Path != "" {
		steps = res.Notes // the file holds the rest
	}
	for _, s := range steps {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	return b.String()
}

// trayAgents lists the agents of the tray's Configure Agent submenu.
func trayAgents() []tray.Agent {
	var out []tray.Agent
	for _, a := range agents.New(agents.Options{BaseURL: "http://127.0.0.1", Home: os.TempDir()}).List() {
		out = append(out, tray.Agent{ID: a.ID, Name: a.Name})
	}
	return out
}

// configureAgent is the tray's Configure Agent action: the same setup as the
// dashboard's, with the agent model map's choice of model.
func configureAgent(srv *server.Server, _ string, id string) string {
	res, models, err := srv.API().SetupAgent(id, "")
	if err != nil {
		return err.Error()
	}
	return describeSetup(res, models)
}
