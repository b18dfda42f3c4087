package api

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"omniroute/backend/agents"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

func (a *API) agentRoutes(m *mux.Router) {
	m.HandleFunc("/agents", a.management(a.listAgents)).Methods(http.MethodGet)
	m.HandleFunc("/agents/{id}/setup", a.management(a.setupAgent)).Methods(http.MethodPost)
	m.HandleFunc("/agents/{id}/undo", a.management(a.undoAgent)).Methods(http.MethodPost)
	m.HandleFunc("/agents/{id}/instructions", a.management(a.agentInstructions)).Methods(http.MethodGet)
}

func agentError(err error) error {
	switch {
	case errors.Is(err, agents.ErrUnknownAgent):
		return errs.New(errs.NotFound, "AGENT_NOT_FOUND", "%s", err.Error())
	case errors.Is(err, agents.ErrNothingToUndo):
		return errs.New(errs.Conflict, "NOTHING_TO_UNDO", "%s", err.Error())
	case errors.Is(err, agents.ErrUnsupportedConfig):
		return errs.New(errs.Conflict, "AGENT_CONFIG_UNSUPPORTED", "%s", err.Error())
	case errors.Is(err, agents.ErrNoAPIKey):
		return errs.New(errs.Invalid, "NO_CLIENT_KEY", "%s", err.Error())
	}
	return errs.New(errs.Conflict, "AGENT_SETUP_FAILED", "%s", err.Error())
}

func (a *API) listAgents(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"agents": a.Agents().List()})
}

func instructionsJSON(in agents.Instructions) map[string]any {
	steps := in.Steps
	if steps == nil {
		steps = []string{}
	}
	return map[string]any{"env": in.Env, "steps": steps}
}

func resultJSON(res agents.Result) map[string]any {
	return map[string]any{"agent": res.Agent, "path": res.Path, "backupPath": res.BackupPath, "created": res.Created,
		"changed": res.Changed, "instructions": instructionsJSON(res.Instructions)}
}

func (a *API) setupAgent(w http.ResponseWriter, r *http.Request) {
	res, err := a.Agents().Setup(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, agentError(err))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, resultJSON(res))
}

func (a *API) undoAgent(w http.ResponseWriter, r *http.Request) {
	res, err := a.Agents().Undo(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, agentError(err))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, resultJSON(res))
}

func (a *API) agentInstructions(w http.ResponseWriter, r *http.Request) {
	in, err := a.Agents().Instructions(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, agentError(err))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, instructionsJSON(in))
}
