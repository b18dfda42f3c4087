package store

import (
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Connections returns every connection ordered by priority then creation.
func (s *Store) Connections() ([]Connection, error) {
	var out []Connection
	err := s.db.Order("priority ASC, created_at ASC, id ASC").Find(&out).Error
	return out, err
}

// Connection returns one connection by id.
func (s *Store) Connection(id string) (Connection, error) {
	var c Connection
	err := s.db.Where("id = ?", id).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return c, ErrNotFound
	}
	return c, err
}

// CreateConnection inserts a connection.
func (s *Store) CreateConnection(c *Connection) error {
	return s.db.Create(c).Error
}

// SaveConnection writes every column of an existing connection.
func (s *Store) SaveConnection(c *Connection) error {
	res := s.db.Model(&Connection{}).Where("id = ?", c.ID).Select("*").Updates(c)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteConnection removes a connection, what was learned of its models'
// prefill and its rows of a team server's shared limits (slots, queue
// tickets, model caps, pacing: SlotOwner); a request still running on it
// finds its slot gone, and its release or renewal changes nothing.
func (s *Store) DeleteConnection(id string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		res := tx.Where("id = ?", id).Delete(&Connection{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if err := tx.Where("connection_id = ?", id).Delete(&PrefillRow{}).Error; err != nil {
			return err
		}
		_, err := deleteLimitsOwned(tx, func() (func(string) bool, error) {
			return func(owner string) bool { return owner == id }, nil
		})
		return err
	})
}

// SaveCooldown writes a connection's resilience columns only.
func (s *Store) SaveCooldown(id string, f CooldownFields) error {
	return s.db.Model(&Connection{}).Where("id = ?", id).Updates(cooldownUpdates(f)).Error
}

// DiscoveredModels is the outcome of one model discovery for a connection.
type DiscoveredModels struct {
	Models      string // JSON array of names
	Source      string // "upstream" or "catalog"
	Error       string // why the upstream did not answer ("" when it did)
	RefreshedAt int64
}

// SaveDiscoveredModels writes a connection's discovery columns only, so a
// refresh never races a cooldown or settings write of the same row.
func (s *Store) SaveDiscoveredModels(id string, d DiscoveredModels) error {
	res := s.db.Model(&Connection{}).Where("id = ?", id).Updates(map[string]any{
		"discovered_models":   d.Models,
		"models_source":       d.Source,
		"models_error":        d.Error,
		"models_refreshed_at": d.RefreshedAt,
	})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// SetRateLimitProtection toggles a connection's rateLimitProtection flag.
func (s *Store) SetRateLimitProtection(id string, enabled bool) error {
	res := s.db.Model(&Connection{}).Where("id = ?", id).Update("rate_limit_protection", enabled)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// APIKeys returns every client key.
func (s *Store) APIKeys() ([]APIKey, error) {
	var out []APIKey
	err := s.db.Order("created_at ASC, id ASC").Find(&out).Error
	return out, err
}

// APIKey reads one client key by id (ErrNotFound when none).
func (s *Store) APIKey(id string) (APIKey, error) {
	var out []APIKey
	if err := s.db.Where("id = ?", id).Limit(1).Find(&out).Error; err != nil {
		return APIKey{}, err
	}
	if len(out) == 0 {
		return APIKey{}, ErrNotFound
	}
	return out[0], nil
}

// CreateAPIKey inserts a client key.
func (s *Store) CreateAPIKey(k *APIKey) error {
	err := s.db.Create(k).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// RotateAPIKey stores a rotated key's new secret (hash, sealed value,
// prefix) and the previous secret's hash with its grace period's end, in one
// update: the key keeps its id, so its name, access, budget and usage stay.
func (s *Store) RotateAPIKey(k *APIKey) error {
	res := s.db.Model(&APIKey{}).Where("id = ?", k.ID).Updates(map[string]any{
		"key_hash": k.KeyHash, "key_enc": k.KeyEnc, "key_prefix": k.KeyPrefix,
		"prev_key_hash": k.PrevKeyHash, "prev_valid_until": k.PrevValidUntil, "rotated_at": k.RotatedAt,
	})
	if res.Error != nil {
		if isUniqueViolation(res.Error) {
			return ErrConflict
		}
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// SaveAPIKey updates a client key's editable fields.
func (s *Store) SaveAPIKey(k *APIKey) error {
	res := s.db.Model(&APIKey{}).Where("id = ?", k.ID).Updates(map[string]any{
		"name": k.Name, "scopes": k.Scopes, "allowed_connections": k.AllowedConnections,
		"allowed_models": k.AllowedModels, "budget": k.Budget, "limits": k.Limits, "private": k.Private,
		"owner_user_id": k.OwnerUserID, "expires_at": k.ExpiresAt,
	})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteAPIKey removes a client key.
func (s *Store) DeleteAPIKey(id string) error {
	res := s.db.Where("id = ?", id).Delete(&APIKey{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// GetValue reads one setting; ok is false when it was never written.
func (s *Store) GetValue(namespace, key string) (string, bool, error) {
	var kv KeyValue
	err := s.db.Where("namespace = ? AND key = ?", namespace, key).Take(&kv).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return kv.Value, true, nil
}

// SetValue writes one setting.
func (s *Store) SetValue(namespace, key, value string) error {
	kv := KeyValue{Namespace: namespace, Key: key, Value: value, UpdatedAt: time.Now().UnixMilli()}
	return s.db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "namespace"}, {Name: "key"}},
		DoUpdates: clause.AssignmentColumns([]string{"value", "updated_at"}),
	}).Create(&kv).Error
}

// Values returns every key → value of one namespace.
func (s *Store) Values(namespace string) (map[string]string, error) {
	var rows []KeyValue
	if err := s.db.Where("namespace = ?", namespace).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Key] = r.Value
	}
	return out, nil
}

// DeleteValue removes one value (absent is fine).
func (s *Store) DeleteValue(namespace, key string) error {
	return s.db.Where("namespace = ? AND key = ?", namespace, key).Delete(&KeyValue{}).Error
}

// ProbeNamespace is the key_value namespace of the HALF_OPEN probe claims.
const ProbeNamespace = "probes"

// ClaimProbe asks for the right to send the one HALF_OPEN probe of a breaker
// across every instance sharing the database, and reports whether owner got
// it: a conditional upsert of the provider's claim row succeeds when there is
// no claim, the claim is owner's own, or it was made at or before nowMs-ttlMs
// (its probe is over or lost). Concurrent claimers serialise on the row, so
// exactly one wins.
func (s *Store) ClaimProbe(provider, owner string, nowMs, ttlMs int64) (bool, error) {
	res := s.db.Exec(`INSERT INTO key_value (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
		WHERE key_value.value = excluded.value OR key_value.updated_at <= ?`,
		ProbeNamespace, provider, owner, nowMs, nowMs-ttlMs)
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == 1, nil
}

// Breakers returns every persisted breaker state.
func (s *Store) Breakers() ([]BreakerRow, error) {
	var out []BreakerRow
	err := s.db.Order("provider").Find(&out).Error
	return out, err
}

// SaveBreaker upserts one breaker state.
func (s *Store) SaveBreaker(r BreakerRow) error {
	r.UpdatedAt = time.Now().UnixMilli()
	return s.db.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "provider"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "failures", "consecutive_successes",
			"open_cycles", "last_failure_at", "opened_at", "state_changed_at", "updated_at"}),
	}).Create(&r).Error
}

// InsertRequestLogs writes a batch of request logs (and their usage rollup) in
// one transaction. On SQLite they go through the store's own writer
// connection and its compiled statements (logWriter); on PostgreSQL, or
// should that connection not have opened (RequestLogFallback), through
// database/sql in multi-row INSERTs.
func (s *Store) InsertRequestLogs(rows []RequestLog) error {
	if len(rows) == 0 {
		return nil
	}
	if s.logs != nil {
		return s.noteErr(s.logs.insert(rows, rollupCells(rows), 0))
	}
	return s.noteErr(s.insertRequestLogsPortable(rows))
}

// InsertRequestLogsRetaining is InsertRequestLogs that also applies the
// request log's retention (keep rows; none when keep ≤ 0): on SQLite's own writer
// connection, the batch's transaction first deletes the oldest rows so that
// the newest keep remain once it is in (what PruneRequestLogs(keep) would
// leave after it), which writes the freed pages to the WAL once instead of
// twice. Elsewhere (PostgreSQL, the fallback) it is InsertRequestLogs, and
// PruneRequestLogs keeps the retention.
func (s *Store) InsertRequestLogsRetaining(rows []RequestLog, keep int) error {
	if len(rows) == 0 {
		return nil
	}
	if s.logs != nil {
		return s.noteErr(s.logs.insert(rows, rollupCells(rows), keep))
	}
	return s.noteErr(s.insertRequestLogsPortable(rows))
}

// insertRequestLogsPortable writes a batch through database/sql, in multi-row
// INSERTs of at most requestLogInsertChunk rows, in one transaction.
func (s *Store) insertRequestLogsPortable(rows []RequestLog) error {
	all := rows
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	tx, err := sqlDB.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// The glebarez driver parses a statement's SQL again on every Exec,
	// prepared or not, so rows go in multi-row INSERTs: one parse per chunk
	// instead of per row. Chunks stay small because the driver's binding is
	// quadratic in a statement's parameter count.
	args := make([]any, 0, requestLogInsertChunk*requestLogCols)
	for len(rows) > 0 {
		n := min(len(rows), requestLogInsertChunk)
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.RequestID, r.CreatedAt, r.APIKeyID, r.ClientFormat, r.Model, r.Provider, r.ConnectionID,
				r.Status, r.Stream, r.AttemptCount, r.Attempts, r.LatencyMs, r.ErrorCode, r.PromptTokens, r.CompletionTokens,
				r.QueueMs, r.QueueReason, r.CachedTokens, r.CostUSD, r.SavedUSD)
		}
		if _, err := tx.Exec(s.bind(requestLogInsertSQL(n)), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	if err := s.rollup(tx, rollupCells(all)); err != nil {
		return err
	}
	return tx.Commit()
}

// requestLogInsertChunk is the most rows one INSERT carries; requestLogCols
// the columns each row binds.
const (
	requestLogInsertChunk = 16
	requestLogCols        = 20
)

// requestLogInsertSQL is the INSERT of n request log rows.
func requestLogInsertSQL(n int) string {
	const head = `INSERT INTO request_logs (request_id, created_at, api_key_id, client_format, model, provider,
		connection_id, status, stream, attempt_count, attempts, latency_ms, error_code, prompt_tokens, completion_tokens,
		queue_ms, queue_reason, cached_tokens, cost_usd, saved_usd) VALUES `
	const row = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	var b strings.Builder
	b.Grow(len(head) + n*(len(row)+2))
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// RecentRequestLogs returns the newest logs first.
func (s *Store) RecentRequestLogs(limit int) ([]RequestLog, error) {
	var out []RequestLog
	err := s.db.Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// RequestLogFilter narrows RecentRequestLogs; zero fields match everything.
type RequestLogFilter struct {
	// Status is "ok" (< 400), "error" (>= 400) or one exact status code.
	Status       string
	ConnectionID string
	Model        string
	APIKeyID     string
	// RequestID picks one request's row (the playground's timeline).
	RequestID string
	// Before pages: only rows with a smaller id (0: from the newest).
	Before int64
	// After pages towards newer rows: only rows with a larger id, the
	// oldest of them first taken (the page is still returned newest first).
	After int64
	// From and To bound when the request finished (created_at + latency_ms),
	// in Unix ms: From inclusive, To exclusive; 0 is unbounded.
	From, To int64
	// Text matches, case-insensitively, a substring of the model, the
	// provider, the error code, the connection id, the key id or the
	// attempts (their codes and the upstream's words), or names
	// one of ConnectionIDs / APIKeyIDs (the ids whose names match, resolved
	// by the caller).
	// The connections of ConnectionIDs also match a row whose attempts name
	// them (a refusal that excluded them); ErrorCodes are the codes whose
	// sentence (backend/words) holds Text; Refused matches the rows refused
	// before any connection was tried (no connection, status >= 400), which
	// Logs shows as "not sent (refused)". An error code also matches with
	// its underscores read as spaces ("rate limited").
	Text          string
	ConnectionIDs []string
	APIKeyIDs     []string
	ErrorCodes    []string
	Refused       bool
}

// likePattern is %text% for a LIKE … ESCAPE '\' match, its wildcards escaped.
func likePattern(text string) string {
	return "%" + likeEscape(strings.ToLower(text)) + "%"
}

// FilteredRequestLogs returns up to limit logs matching f, newest first: one
// page of the log. A row that does not read as a log row (text in a numeric
// column: a damaged or hand-edited database) is skipped, not an error: its
// id is in skipped (0 when even the id is unreadable), and it counts
// towards limit.
func (s *Store) FilteredRequestLogs(f RequestLogFilter, limit int) (out []RequestLog, skipped []int64, err error) {
	q := s.db.Order("id DESC").Limit(limit)
	if f.Before > 0 {
		q = q.Where("id < ?", f.Before)
	}
	if f.After > 0 {
		q = q.Where("id > ?", f.After).Order(clause.OrderByColumn{Column: clause.Column{Name: "id"}, Desc: false, Reorder: true})
	}
	if f.From > 0 {
		q = q.Where("created_at + latency_ms >= ?", f.From)
	}
	if f.To > 0 {
		q = q.Where("created_at + latency_ms < ?", f.To)
	}
	if t := strings.TrimSpace(f.Text); t != "" {
		p := likePattern(t)
		cond := `LOWER(model) LIKE ? ESCAPE '\' OR LOWER(provider) LIKE ? ESCAPE '\' OR LOWER(error_code) LIKE ? ESCAPE '\' OR LOWER(REPLACE(error_code, '_', ' ')) LIKE ? ESCAPE '\' OR LOWER(connection_id) LIKE ? ESCAPE '\' OR LOWER(api_key_id) LIKE ? ESCAPE '\' OR LOWER(attempts) LIKE ? ESCAPE '\'`
		args := []any{p, p, p, p, p, p, p}
		if len(f.ConnectionIDs) > 0 {
			cond += " OR connection_id IN ?"
			args = append(args, f.ConnectionIDs)
			for _, id := range f.ConnectionIDs {
				cond += ` OR attempts LIKE ? ESCAPE '\'`
				args = append(args, "%"+likeEscape(`"connectionId":"`+id+`"`)+"%")
			}
		}
		if len(f.ErrorCodes) > 0 {
			cond += " OR error_code IN ?"
			args = append(args, f.ErrorCodes)
		}
		if f.Refused {
			cond += " OR (connection_id = '' AND status >= 400)"
		}
		if len(f.APIKeyIDs) > 0 {
			cond += " OR api_key_id IN ?"
			args = append(args, f.APIKeyIDs)
		}
		q = q.Where("("+cond+")", args...)
	}
	switch f.Status {
	case "":
	case "ok":
		q = q.Where("status < 400")
	case "error":
		q = q.Where("status >= 400")
	default:
		code, err := strconv.Atoi(f.Status)
		if err != nil {
			return nil, nil, nil // no status code matches a non-number
		}
		q = q.Where("status = ?", code)
	}
	if f.ConnectionID != "" {
		q = q.Where("connection_id = ?", f.ConnectionID)
	}
	if f.Model != "" {
		q = q.Where("model = ?", f.Model)
	}
	if f.APIKeyID != "" {
		q = q.Where("api_key_id = ?", f.APIKeyID)
	}
	if f.RequestID != "" {
		q = q.Where("request_id = ?", f.RequestID)
	}
	rows, err := q.Model(&RequestLog{}).Rows()
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l RequestLog
		if err := s.db.ScanRows(rows, &l); err != nil {
			skipped = append(skipped, unreadableRowID(rows))
			continue
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if f.After > 0 { // taken oldest first: the page reads newest first like the others
		slices.Reverse(out)
	}
	return out, skipped, nil
}

// FirstRequestLogSince is when the oldest request logged at or after from
// (Unix ms) started; 0 when none was.
func (s *Store) FirstRequestLogSince(from int64) (int64, error) {
	var first *int64
	err := s.db.Model(&RequestLog{}).Where("created_at >= ?", from).Select("MIN(created_at)").Scan(&first).Error
	if err != nil || first == nil {
		return 0, err
	}
	return *first, nil
}

// PruneRequestLogs keeps at most keep rows, and the usage rollup for as long as
// each of its resolutions is shown.
// On SQLite it runs on the request log's writer connection (logWriter.prune).
func (s *Store) PruneRequestLogs(keep int) error {
	if s.logs != nil {
		return s.logs.prune(keep)
	}
	return s.pruneRequestLogsPortable(keep)
}

// pruneRequestLogsPortable is PruneRequestLogs through the GORM connection.
func (s *Store) pruneRequestLogsPortable(keep int) error {
	if err := s.db.Exec(pruneLogsSQL, keep).Error; err != nil {
		return err
	}
	return s.pruneRollup()
}

// pruneLogsSQL deletes the request log's rows beyond the newest ?1.
const pruneLogsSQL = `DELETE FROM request_logs WHERE id <= (SELECT COALESCE(MAX(id),0) - ? FROM request_logs)`

// Combos returns every combo ordered by name.
func (s *Store) Combos() ([]Combo, error) {
	var out []Combo
	err := s.db.Order("name").Find(&out).Error
	return out, err
}

// CreateCombo inserts a combo; a taken name is ErrConflict.
func (s *Store) CreateCombo(c *Combo) error {
	err := s.db.Create(c).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// SaveCombo replaces a combo's fields.
func (s *Store) SaveCombo(c *Combo) error {
	res := s.db.Model(&Combo{}).Where("id = ?", c.ID).Updates(map[string]any{
		"name": c.Name, "strategy": c.Strategy, "targets": c.Targets, "config": c.Config, "updated_at": c.UpdatedAt})
	if isUniqueViolation(res.Error) {
		return ErrConflict
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteCombo removes a combo.
func (s *Store) DeleteCombo(id string) error {
	res := s.db.Where("id = ?", id).Delete(&Combo{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// SaveTokens replaces a connection's OAuth tokens in one UPDATE (atomic in
// SQLite): a refreshed access token, its refresh token and expiry (Unix ms).
func (s *Store) SaveTokens(id, accessEnc, refreshEnc string, expiresAt, now int64) error {
	res := s.db.Model(&Connection{}).Where("id = ?", id).Updates(map[string]any{
		"access_token_enc": accessEnc, "refresh_token_enc": refreshEnc, "expires_at": expiresAt, "updated_at": now,
	})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// unreadableRowID is the id of the current row that did not scan as a log
// row (0 when the id itself does not read).
func unreadableRowID(rows *sql.Rows) int64 {
	cols, err := rows.Columns()
	if err != nil {
		return 0
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if rows.Scan(ptrs...) != nil {
		return 0
	}
	for i, c := range cols {
		if c == "id" {
			if id, ok := integerOf(canonical(vals[i], false)); ok {
				return id
			}
		}
	}
	return 0
}
