package oauth

import (
	"encoding/json"
	"strings"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/secrets"
	"omniroute/backend/store"
)

// ConnStore is the part of the store an import writes.
type ConnStore interface {
	Connections() ([]store.Connection, error)
	CreateConnection(c *store.Connection) error
	SaveConnection(c *store.Connection) error
}

// Sealer encrypts secrets before they are stored.
type Sealer interface {
	Seal(plaintext string) (string, error)
}

// Imported is what an import did.
type Imported struct {
	Connection store.Connection
	// Created is false when an existing connection of the same account was updated.
	Created bool
}

// Upsert creates or updates the OAuth connection for a login: the connection
// of the same provider and account id (else e-mail, else the one imported
// from the same source without either) is updated in place, its terminal
// state (expired, banned, …) cleared because the credentials are new; the
// providerSpecificData keeps the user's other settings (lowPriorityMode, …).
func Upsert(st ConnStore, box Sealer, cat *providers.Catalog, l Login, now time.Time) (Imported, error) {
	p, ok := cat.BySource(l.Source)
	if !ok {
		return Imported{}, errUnknownSource(cat, l.Source)
	}
	rows, err := st.Connections()
	if err != nil {
		return Imported{}, err
	}
	var row store.Connection
	found := false
	for _, r := range rows {
		if r.Provider == p.ID && sameAccount(r, l) {
			row, found = r, true
			break
		}
	}
	access, err := box.Seal(l.AccessToken)
	if err != nil {
		return Imported{}, err
	}
	ms := now.UnixMilli()
	if !found {
		models := "[]"
		if p.OAuth != nil && len(p.OAuth.Models) > 0 {
			b, _ := json.Marshal(p.OAuth.Models)
			models = string(b)
		}
		row = store.Connection{ID: secrets.RandomID(), Provider: p.ID, Name: displayName(p, l), Priority: nextPriority(rows, p.ID),
			IsActive: true, Models: models, ProviderSpecificData: "{}", RateLimitOverrides: "{}", CreatedAt: ms}
	}
	row.AuthType = "oauth"
	row.AccessTokenEnc = access
	if l.RefreshToken != "" {
		if row.RefreshTokenEnc, err = box.Seal(l.RefreshToken); err != nil {
			return Imported{}, err
		}
	}
	if l.Endpoint != "" {
		row.BaseURL = l.Endpoint
	}
	row.ExpiresAt = 0
	if !l.ExpiresAt.IsZero() {
		row.ExpiresAt = l.ExpiresAt.UnixMilli()
	}
	row.ProviderSpecificData = mergeData(row.ProviderSpecificData, l, now)
	// New credentials: the documented way out of a terminal state.
	row.RateLimitedUntil, row.TestStatus, row.LastError, row.LastErrorType, row.LastErrorAt = 0, "active", "", "", 0
	row.ErrorCode, row.BackoffLevel, row.RejectStreak, row.ExpiredRetries = "", 0, 0, 0
	row.UpdatedAt = ms
	if found {
		err = st.SaveConnection(&row)
	} else {
		err = st.CreateConnection(&row)
	}
	if err != nil {
		return Imported{}, err
	}
	return Imported{Connection: row, Created: !found}, nil
}

// data is the part of providerSpecificData an import owns.
type data struct {
	AccountID        string `json:"accountId"`
	Email            string `json:"email"`
	ImportedFrom     string `json:"importedFrom"`
	OrganizationUUID string `json:"organizationUUID"`
}

func readData(raw string) data {
	var d data
	_ = json.Unmarshal([]byte(raw), &d)
	return d
}

func sameAccount(r store.Connection, l Login) bool {
	d := readData(r.ProviderSpecificData)
	switch {
	case l.AccountID != "":
		return d.AccountID == l.AccountID
	case l.Email != "":
		return d.AccountID == "" && strings.EqualFold(d.Email, l.Email)
	default:
		return d.AccountID == "" && d.Email == "" && d.ImportedFrom == l.Source
	}
}

func mergeData(raw string, l Login, now time.Time) string {
	m := map[string]any{}
	_ = json.Unmarshal([]byte(raw), &m)
	if m == nil {
		m = map[string]any{}
	}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("accountId", l.AccountID)
	set("email", l.Email)
	set("organizationUUID", l.OrganizationUUID)
	set("plan", l.Plan)
	set("username", l.Username)
	m["importedFrom"] = l.Source
	m["importedAt"] = now.UTC().Format(time.RFC3339)
	b, _ := json.Marshal(m)
	return string(b)
}

func displayName(p providers.Provider, l Login) string {
	base := p.Name
	if p.Module != nil && p.Module.Import != nil && p.Module.Import.Source == l.Source {
		base = p.Module.Import.Label
	}
	if l.Email != "" {
		return truncate(base+" ("+l.Email+")", 100)
	}
	if l.Username != "" {
		return truncate(base+" ("+l.Username+")", 100)
	}
	return base
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func nextPriority(rows []store.Connection, provider string) int {
	n := 1
	for _, r := range rows {
		if r.Provider == provider && r.Priority >= n {
			n = r.Priority + 1
		}
	}
	return n
}
