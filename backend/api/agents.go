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
	m.HandleFunc("/agents/{id}/models", a.management(a.agentModelsRoute)).Methods(http.MethodGet)
	m.HandleFunc("/agents/{id}/choices", a.management(a.agentChoicesRoute)).Methods(http.MethodGet)
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

// SetupAgent configures an agent for the gateway's user with the models
// AgentModels picks (requested may be ""): the dashboard's and the tray's
// Configure Agent. Manual agents (cline, cursor) get their instructions.
func (a *API) SetupAgent(id, requested string) (agents.Result, AgentModels, error) {
	base := a.Agents()
	if _, err := base.Instructions(id); err != nil {
		return agents.Result{}, AgentModels{}, agentError(err)
	}
	models, err := a.AgentModels(id, requested)
	if err != nil {
		return agents.Result{}, AgentModels{}, err
	}
	res, err := models.Manager(base).Setup(id)
	if err != nil {
		return agents.Result{}, models, agentError(err)
	}
	return res, models, nil
}

// setupAgent serves POST /api/agents/{id}/setup {model?, force?}. When every
// connection serving the model is unreachable or has its key rejected it
// refuses (409 AGENT_MODEL_UNSERVABLE, the reason in the message) unless
// force is set: the agent would see nothing but errors.
func (a *API) setupAgent(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model string `json:"model"`
		Force bool   `json:"force"`
	}
	if r.ContentLength != 0 {
		if err := a.decode(r, &in); err != nil {
			httpx.WriteError(w, err)
			return
		}
	}
	id := mux.Vars(r)["id"]
	if !in.Force {
		if _, err := a.Agents().Instructions(id); err != nil {
			httpx.WriteError(w, agentError(err))
			return
		}
		m, err := a.AgentModels(id, in.Model)
		if err != nil {
			httpx.WriteError(w, err)
			return
		}
		if m.Warning != "" {
			httpx.WriteError(w, errs.New(errs.Conflict, "AGENT_MODEL_UNSERVABLE", "%s; choose another model, or configure anyway (force)", m.Warning).WithParam("model"))
			return
		}
	}
	res, models, err := a.SetupAgent(id, in.Model)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := resultJSON(res)
	out["models"] = models
	httpx.WriteJSON(w, http.StatusOK, out)
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
	id := mux.Vars(r)["id"]
	m := a.Agents()
	if models, err := a.AgentModels(id, r.URL.Query().Get("model")); err == nil {
		m = models.Manager(m)
	}
	in, err := m.Instructions(id)
	if err != nil {
		httpx.WriteError(w, agentError(err))
		return
	}
	httpx.WriteJSON(w, http.StatusOK, instructionsJSON(in))
}
