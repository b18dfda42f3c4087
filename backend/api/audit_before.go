package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

// auditBefore is what a change's target looked like before the write (its
// name, and the fields the write may change), so the audit log can read as a
// sentence: "ana@example.com changed the priority of Work OpenAI from 2 to 1".
// Nil for routes that name no stored object, or when it cannot be read.
func (a *API) auditBefore(r *http.Request, key string) map[string]any {
	if a.Store == nil {
		return nil
	}
	id := mux.Vars(r)["id"]
	if id == "" {
		return nil
	}
	path := key[strings.IndexByte(key, ' ')+1:]
	switch path {
	case "/api/providers/{id}":
		if row, err := a.Store.Connection(id); err == nil {
			return a.connectionJSON(row)
		}
	case "/api/keys/{id}":
		if rows, err := a.Store.APIKeys(); err == nil {
			for _, row := range rows {
				if row.ID == id {
					return keyJSON(row)
				}
			}
		}
	case "/api/combos/{id}":
		if rows, err := a.Store.Combos(); err == nil {
			for _, row := range rows {
				if row.ID == id {
					return comboJSON(row)
				}
			}
		}
	case "/api/users/{id}":
		if u, err := a.Store.User(id); err == nil {
			return userJSON(u)
		}
	}
	return nil
}

// withBefore adds to an audit detail the target's name ("targetName") and,
// for every top-level field of the body that is not secret, its value
// before the write ("before").
func withBefore(detail string, before map[string]any) string {
	if before == nil {
		return detail
	}
	out := map[string]any{}
	if detail != "" && json.Unmarshal([]byte(detail), &out) != nil {
		return detail
	}
	name, _ := before["name"].(string)
	if email, _ := before["email"].(string); name == "" {
		name = email
	}
	if name != "" {
		out["targetName"] = name
	}
	if body, ok := out["body"].(map[string]any); ok {
		old := map[string]any{}
		for k := range body {
			if v, ok := before[k]; ok && !isSecretField(k) {
				old[k] = redact(v)
			}
		}
		if len(old) > 0 {
			out["before"] = old
		}
	}
	b, err := json.Marshal(out)
	if err != nil || len(b) > auditDetailMax {
		return detail
	}
	return string(b)
}
