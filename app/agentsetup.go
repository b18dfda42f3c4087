package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"

	"omniroute/app/tray"
	"omniroute/backend/agents"
	"omniroute/backend/config"
	"omniroute/backend/server"
)

// AgentManager builds the agent configurator for the current user.
func AgentManager(baseURL, key string) *agents.Manager { return agents.ForCurrentUser(baseURL, key) }

// AgentCommand runs `omniroute setup <agent> [--undo]` and `omniroute run <agent> [args…]`.
func AgentCommand(verb string, args []string, proc config.Process, stdout, stderr io.Writer) int {
	key, err := server.DefaultKeyFromDataDir(proc.DataDir)
	if err != nil {
		fmt.Fprintf(stderr, "omniroute: no client key yet (%v); start OmniRoute once first\n", err)
		return 1
	}
	m := AgentManager(proc.BaseURL(), key)
	if len(args) == 0 {
		var ids []string
		for _, a := range m.List() {
			ids = append(ids, a.ID)
		}
		sort.Strings(ids)
		fmt.Fprintf(stderr, "usage: omniroute %s <agent>; agents: %s\n", verb, strings.Join(ids, ", "))
		return 2
	}
	id := args[0]
	switch {
	case verb == "run":
		cmdName, env, err := m.RunEnv(id)
		if err != nil {
			fmt.Fprintln(stderr, "omniroute:", err)
			return 1
		}
		cmd := exec.Command(cmdName, args[1:]...)
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
	case len(args) > 1 && args[1] == "--undo":
		res, err := m.Undo(id)
		if err != nil {
			fmt.Fprintln(stderr, "omniroute:", err)
			return 1
		}
		fmt.Fprintf(stdout, "Restored %s\n", res.Path)
		return 0
	default:
		res, err := m.Setup(id)
		if err != nil {
			fmt.Fprintln(stderr, "omniroute:", err)
			return 1
		}
		fmt.Fprint(stdout, describeSetup(res))
		return 0
	}
}

func describeSetup(res agents.Result) string {
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
	if len(res.Instructions.Env) > 0 {
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
	for _, s := range res.Instructions.Steps {
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

// configureAgent is the tray's Configure Agent action.
func configureAgent(srv *server.Server, baseURL, id string) string {
	key, err := srv.DefaultKey()
	if err != nil {
		return "No client key: " + err.Error()
	}
	res, err := AgentManager(baseURL, key).Setup(id)
	if err != nil {
		return err.Error()
	}
	return describeSetup(res)
}
