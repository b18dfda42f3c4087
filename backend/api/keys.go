package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/budget"
	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// KeyPrefix starts every client key the gateway issues.
const KeyPrefix = "sk-omni-"

type keyInput struct {
	Name               *string   `json:"name"`
	Scopes             *[]string `json:"scopes"`
	AllowedConnections *[]string `json:"allowedConnections"`
	AllowedModels      *[]string `json:"allowedModels"`
	// Private keys' requests are never body-captured.
	Private *bool `json:"private"`
	// Budget and Limits (backend/budget): absent leaves them, null removes them.
	Budget json.RawMessage `json:"budget"`
	Limits json.RawMessage `json:"limits"`
	// OwnerUserID is the user the key belongs to ("" for none).
	OwnerUserID *string `json:"ownerUserId"`
	// ExpiresAt is when the key stops working (RFC 3339 or unix ms, in the
	// future); null removes the expiry, absent leaves it.
	ExpiresAt json.RawMessage `json:"expiresAt"`
}

var knownScopes = map[string]bool{"inference": true, "lease:exclusive": true}

// NewClientKey creates and stores a client key, returning its row and plaintext.
func NewClientKey(st *store.Store, box *secrets.Box, name string, isDefault bool, nowMs int64) (store.APIKey, string, error) {
	value := KeyPrefix + secrets.RandomToken(24)
	enc, err := box.Seal(value)
	if err != nil {
		return store.APIKey{}, "", err
	}
	row := store.APIKey{ID: secrets.RandomID(), Name: name, KeyHash: secrets.Hash(value), KeyEnc: enc,
		KeyPrefix: value[:len(KeyPrefix)+4], Scopes: `["inference"]`, AllowedConnections: "[]", AllowedModels: "[]",
		IsDefault: isDefault, CreatedAt: nowMs}
	return row, value, st.CreateAPIKey(&row)
}

func keyJSON(row store.APIKey) map[string]any {
	var scopes, conns, models []string
	_ = json.Unmarshal([]byte(row.Scopes), &scopes)
	_ = json.Unmarshal([]byte(row.AllowedConnections), &conns)
	_ = json.Unmarshal([]byte(row.AllowedModels), &models)
	return map[string]any{"id": row.ID, "name": row.Name, "keyMasked": row.KeyPrefix + "…", "scopes": nonNil(scopes),
		"allowedConnections": nonNil(conns), "allowedModels": nonNil(models), "isDefault": row.IsDefault,
		"private": row.Private, "createdAt": rfc3339(row.CreatedAt), "ownerUserId": row.OwnerUserID,
		"expiresAt": rfc3339(row.ExpiresAt), "rotatedAt": rfc3339(row.RotatedAt), "previousValidUntil": nil}
}

// keyView is a key as the API shows it at now: keyJSON, its spend, whether
// it has expired, and until when its previous secret still works (null when
// none does).
func (a *API) keyView(row store.APIKey) map[string]any {
	out := a.addKeyCost(keyJSON(row), row)
	now := a.Clock.Now().UnixMilli()
	out["expired"] = row.ExpiresAt > 0 && now >= row.ExpiresAt
	if row.PrevKeyHash != "" && now < row.PrevValidUntil {
		out["previousValidUntil"] = rfc3339(row.PrevValidUntil)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *API) reloadKeys() error {
	rows, err := a.Store.APIKeys()
	if err != nil {
		return err
	}
	a.Keys.Load(rows)
	return nil
}

func (a *API) listKeys(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.APIKeys()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	users, err := a.Store.Users()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	emails := make(map[string]string, len(users))
	for _, u := range users {
		emails[u.ID] = u.Email
	}
	out := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		k := a.keyView(row)
		if row.OwnerUserID != "" {
			k["owner"] = emails[row.OwnerUserID]
		}
		out = append(out, k)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"keys": out})
}

func (a *API) validateKeyInput(in keyInput) error {
	if in.Name != nil && (strings.TrimSpace(*in.Name) == "" || len(*in.Name) > 100) {
		return errs.New(errs.Invalid, "INVALID_NAME", "name must be 1 to 100 characters").WithParam("name")
	}
	if in.Scopes != nil {
		for _, s := range *in.Scopes {
			if !knownScopes[s] {
				return errs.New(errs.Invalid, "INVALID_SCOPE", "unknown scope %q (known: inference, lease:exclusive)", truncate(s, 40)).WithParam("scopes")
			}
		}
	}
	if in.OwnerUserID != nil && *in.OwnerUserID != "" {
		if _, err := a.Store.User(*in.OwnerUserID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return errs.New(errs.Invalid, "UNKNOWN_USER", "ownerUserId names an unknown user %q", truncate(*in.OwnerUserID, 40)).WithParam("ownerUserId")
			}
			return err
		}
	}
	if in.AllowedConnections != nil {
		for _, id := range *in.AllowedConnections {
			if _, ok := a.Engine.Registry().Get(id); !ok {
				return errs.New(errs.Invalid, "UNKNOWN_CONNECTION", "allowedConnections names an unknown connection %q", truncate(id, 40)).WithParam("allowedConnections")
			}
		}
	}
	return nil
}

// keyExpiry reads expiresAt: (ms, true) to set (0 removes it), (_, false)
// when absent. A time must be in the future (a past one would revoke the key
// silently: DELETE does that plainly) and before the year 10000.
func keyExpiry(raw json.RawMessage, nowMs int64) (int64, bool, error) {
	if raw == nil {
		return 0, false, nil
	}
	bad := func(format string, args ...any) error {
		return errs.New(errs.Invalid, "INVALID_EXPIRY", format, args...).WithParam("expiresAt")
	}
	if string(raw) == "null" {
		return 0, true, nil
	}
	var ms int64
	var str string
	switch {
	case json.Unmarshal(raw, &ms) == nil:
	case json.Unmarshal(raw, &str) == nil:
		t, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			return 0, false, bad("expiresAt must be an RFC 3339 time (e.g. 2027-01-31T18:00:00Z), unix ms or null")
		}
		ms = t.UnixMilli()
	default:
		return 0, false, bad("expiresAt must be an RFC 3339 time (e.g. 2027-01-31T18:00:00Z), unix ms or null")
	}
	if ms <= nowMs {
		return 0, false, bad("expiresAt must be in the future (to stop a key now, delete it)")
	}
	if ms >= maxExpiryMs {
		return 0, false, bad("expiresAt must be before the year 10000")
	}
	return ms, true, nil
}

// maxExpiryMs is 10000-01-01T00:00:00Z in unix ms.
const maxExpiryMs = 253402300800000

func applyKeyInput(row *store.APIKey, in keyInput) {
	if in.Name != nil {
		row.Name = strings.TrimSpace(*in.Name)
	}
	enc := func(v []string) string { b, _ := json.Marshal(nonNil(v)); return string(b) }
	if in.Scopes != nil {
		row.Scopes = enc(*in.Scopes)
	}
	if in.AllowedConnections != nil {
		row.AllowedConnections = enc(*in.AllowedConnections)
	}
	if in.AllowedModels != nil {
		row.AllowedModels = enc(*in.AllowedModels)
	}
	if in.Private != nil {
		row.Private = *in.Private
	}
	if in.OwnerUserID != nil {
		row.OwnerUserID = *in.OwnerUserID
	}
}

func (a *API) createKey(w http.ResponseWriter, r *http.Request) {
	var in keyInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if in.Name == nil {
		httpx.WriteError(w, errs.New(errs.Invalid, "NAME_REQUIRED", "field \"name\" is required").WithParam("name"))
		return
	}
	if err := a.validateKeyInput(in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	expires, setExpiry, err := keyExpiry(in.ExpiresAt, a.Clock.Now().UnixMilli())
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	row, value, err := NewClientKey(a.Store, a.Box, strings.TrimSpace(*in.Name), false, a.Clock.Now().UnixMilli())
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	applyKeyInput(&row, in)
	if setExpiry {
		row.ExpiresAt = expires
	}
	if err := budget.ReadInput(&row, in.Budget, in.Limits); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.Store.SaveAPIKey(&row); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.reloadKeys(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.applyKeyBudget(row); err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := a.keyView(row)
	out["key"] = value
	httpx.WriteJSON(w, http.StatusCreated, out)
}

func (a *API) updateKey(w http.ResponseWriter, r *http.Request) {
	var in keyInput
	if err := a.decode(r, &in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	if err := a.validateKeyInput(in); err != nil {
		httpx.WriteError(w, err)
		return
	}
	expires, setExpiry, err := keyExpiry(in.ExpiresAt, a.Clock.Now().UnixMilli())
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	rows, err := a.Store.APIKeys()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	id := mux.Vars(r)["id"]
	for _, row := range rows {
		if row.ID == id {
			applyKeyInput(&row, in)
			if setExpiry {
				row.ExpiresAt = expires
			}
			if err := budget.ReadInput(&row, in.Budget, in.Limits); err != nil {
				httpx.WriteError(w, err)
				return
			}
			if err := a.Store.SaveAPIKey(&row); err != nil {
				httpx.WriteError(w, err)
				return
			}
			if err := a.reloadKeys(); err != nil {
				httpx.WriteError(w, err)
				return
			}
			if in.Budget != nil || in.Limits != nil {
				if err := a.applyKeyBudget(row); err != nil {
					httpx.WriteError(w, err)
					return
				}
			}
			httpx.WriteJSON(w, http.StatusOK, a.keyView(row))
			return
		}
	}
	httpx.WriteError(w, errs.New(errs.NotFound, "KEY_NOT_FOUND", "API key not found"))
}

func (a *API) deleteKey(w http.ResponseWriter, r *http.Request) {
	if err := a.Store.DeleteAPIKey(mux.Vars(r)["id"]); err != nil {
		httpx.WriteError(w, notFound(err, "key"))
		return
	}
	if a.Budgets != nil {
		a.Budgets.Remove(mux.Vars(r)["id"])
	}
	if err := a.reloadKeys(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// defaultKey reveals the default client key to its owner (the dashboard and tray).
func (a *API) defaultKey(w http.ResponseWriter, r *http.Request) {
	rows, err := a.Store.APIKeys()
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	for _, row := range rows {
		if row.IsDefault {
			value, err := a.Box.Open(row.KeyEnc)
			if err != nil {
				httpx.WriteError(w, err)
				return
			}
			httpx.WriteJSON(w, http.StatusOK, map[string]any{"id": row.ID, "key": value})
			return
		}
	}
	httpx.WriteError(w, errs.New(errs.NotFound, "KEY_NOT_FOUND", "there is no default key; create one"))
}
